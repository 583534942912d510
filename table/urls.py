from django.urls import include, path

from table import views

app_name = "table"

_scene = "partidas/<slug:slug>/escenas/<int:scene_id>/"
urlpatterns = [
    path(_scene, views.scene_detail, name="scene-detail"),
    path(f"{_scene}nuevos/", views.scene_poll, name="scene-poll"),
    path(f"{_scene}escribir/", views.post_create, name="post-create"),
    path(f"{_scene}probabilidad/", views.post_roll_chance, name="post-roll-chance"),
    path("", include("table.roll_requests.urls")),
    # Playing an absent player's character (issue 17).
    path("", include("table.urls_takeover")),
]
