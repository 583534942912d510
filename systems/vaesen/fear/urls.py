# The Vaesen fear tests, opposed rolls and (its own package) the «Curación» panel.
from django.urls import include, path

from systems.vaesen.fear import views

scene = "partidas/<slug:slug>/escenas/<int:scene_id>/"

urlpatterns = [
    path(f"{scene}miedo/", views.fear_page, name="fear"),
    path(f"{scene}miedo/nueva/", views.fear_start, name="fear-start"),
    path(f"{scene}miedo/<int:test_id>/cerrar/", views.fear_close, name="fear-close"),
    path(f"{scene}miedo/<int:test_id>/<int:character_id>/tirar/", views.fear_roll, name="fear-roll"),
    path(f"{scene}miedo/tiradas/<int:table_roll_id>/terror/", views.terror, name="fear-terror"),
    path(f"{scene}pruebas-enfrentadas/", views.opposed_page, name="opposed"),
    path(f"{scene}pruebas-enfrentadas/nueva/", views.opposed_start, name="opposed-start"),
    path(f"{scene}pruebas-enfrentadas/<int:item_id>/<int:side>/tirar/", views.opposed_roll, name="opposed-roll"),
    path(f"{scene}pruebas-enfrentadas/<int:item_id>/anular/", views.opposed_close, name="opposed-close"),
    path("", include("systems.vaesen.healing.urls")),
]
