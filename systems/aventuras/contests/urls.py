from django.urls import path

from systems.aventuras.contests import views

# The scene's competitions, cooperations and initiative (A13, A19, A20), and reactions (A14–A18).
_scene = "partidas/<slug:slug>/escenas/<int:scene_id>/aventuras/"

urlpatterns = [
    path(f"{_scene}concursos/", views.contests, name="contests"),
    path(f"{_scene}concursos/preparar/", views.contest_create, name="contest-create"),
    path(f"{_scene}concursos/<int:contest_id>/anular/", views.contest_cancel, name="contest-cancel"),
    path(f"{_scene}concursos/participantes/<int:contestant_id>/tirar/", views.contest_roll, name="contest-roll"),
    path(f"{_scene}iniciativa/", views.initiative_set, name="initiative-set"),
    path(f"{_scene}iniciativa/quitar/", views.initiative_clear, name="initiative-clear"),
    path(f"{_scene}iniciativa/desempatar/", views.initiative_tiebreak, name="initiative-tiebreak"),
    path(f"{_scene}iniciativa/acordar/", views.initiative_agree, name="initiative-agree"),
    path("partidas/<slug:slug>/reacciones/<int:reaction_id>/reaccionar/", views.reaction_roll, name="reaction-roll"),
    path(
        "partidas/<slug:slug>/reacciones/<int:reaction_id>/no-reaccionar/",
        views.reaction_decline,
        name="reaction-decline",
    ),
    path("partidas/<slug:slug>/reacciones/<int:reaction_id>/plazo/", views.reaction_deadline, name="reaction-deadline"),
]
