# The Aventuras rolls' own actions: the chachi chain (A5, A12), the hero
# point re-roll (A22) and «¡Ya está!».
from django.urls import path

from systems.aventuras.rolls import views

urlpatterns = [
    path("tiradas/<int:table_roll_id>/aventuras/", views.roll_page, name="roll"),
    path("tiradas/<int:table_roll_id>/convertir-chachi/", views.convert, name="convert"),
    path("tiradas/<int:table_roll_id>/efecto-chachi/", views.effect, name="effect"),
    path("tiradas/<int:table_roll_id>/repetir-con-heroe/", views.reroll, name="reroll"),
    path("tiradas/<int:table_roll_id>/ya-esta/", views.settle, name="settle"),
]
