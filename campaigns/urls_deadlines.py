"""Deadlines (issue 17): a scene's, and settling or withdrawing any kind's."""

from django.urls import path

from campaigns import waiting_actions

urlpatterns = [
    path("partidas/<slug:slug>/escenas/<int:scene_id>/plazo/", waiting_actions.scene_deadline, name="scene-deadline"),
    path(
        "partidas/<slug:slug>/plazos/<int:deadline_id>/retirar/",
        waiting_actions.deadline_withdraw,
        name="deadline-withdraw",
    ),
    path(
        "partidas/<slug:slug>/plazos/<int:deadline_id>/resolver/",
        waiting_actions.deadline_settle,
        name="deadline-settle",
    ),
]
