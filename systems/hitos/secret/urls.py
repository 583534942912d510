from django.urls import path, re_path

from systems.hitos.secret import views as views_secret

urlpatterns = [
    path(
        "partidas/<slug:slug>/escenas/<int:scene_id>/tirada-secreta/",
        views_secret.secret_roll_create,
        name="secret-roll-create",
    ),
    re_path(r"^r/(?P<permalink>[a-z2-7]{24})/revelar/$", views_secret.secret_roll_reveal, name="secret-roll-reveal"),
]
