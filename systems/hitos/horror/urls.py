from django.urls import path

from systems.hitos.horror import views as views_horror

scene = "partidas/<slug:slug>/escenas/<int:scene_id>/"

urlpatterns = [
    path(f"{scene}horror/", views_horror.horror_page, name="horror"),
    path(f"{scene}horror/nueva/", views_horror.horror_start, name="horror-start"),
    path(f"{scene}horror/<int:exposure_id>/tirar/", views_horror.horror_roll, name="horror-roll"),
    path(f"{scene}enfrentadas/", views_horror.opposed_page, name="opposed"),
    path(f"{scene}enfrentadas/nueva/", views_horror.opposed_start, name="opposed-start"),
]
