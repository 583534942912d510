# Hora de Aventuras' hero points outside rolls (A21, A23, A25–A28), in the "aventuras" namespace.
from django.urls import path

from systems.aventuras.heroes import views

_hero = "partidas/<slug:slug>/fichas/<int:character_id>/heroe/"
_heroes = "partidas/<slug:slug>/heroes/"

urlpatterns = [
    path(_hero, views.hero_page, name="hero-page"),
    path(_hero + "ganar/", views.earn, name="hero-earn"),
    path(_hero + "regalar/", views.gift, name="hero-gift"),
    path(_hero + "morro/", views.state, name="hero-state"),
    path(_hero + "gastar/<slug:use>/", views.spend, name="hero-spend"),
    path(_heroes, views.heroes, name="heroes"),
    path(_heroes + "peticiones/<int:request_id>/", views.decide, name="hero-decide"),
    path(_heroes + "nueva-aventura/", views.new_adventure, name="new-adventure"),
]
