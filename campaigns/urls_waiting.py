"""Whose turn it is (issue 17): the direction nudges an awaited member."""

from django.urls import path

from campaigns import waiting_actions

urlpatterns = [
    path("partidas/<slug:slug>/escenas/<int:scene_id>/toque/", waiting_actions.nudge, name="nudge"),
]
