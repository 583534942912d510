"""Absences (issue 17, item 1): included in the ``campaigns`` namespace."""

from django.urls import path

from campaigns import absence_views

urlpatterns = [
    path("partidas/<slug:slug>/ausencias/", absence_views.absence_list, name="absences"),
    path("partidas/<slug:slug>/ausencias/si-falto/", absence_views.absence_consent, name="absence-consent"),
    path("partidas/<slug:slug>/ausencias/<int:absence_id>/editar/", absence_views.absence_edit, name="absence-edit"),
    path(
        "partidas/<slug:slug>/ausencias/<int:absence_id>/anular/", absence_views.absence_cancel, name="absence-cancel"
    ),
    path(
        "partidas/<slug:slug>/ausencias/<int:absence_id>/he-vuelto/",
        absence_views.absence_return,
        name="absence-return",
    ),
    path("partidas/<slug:slug>/ausentes/", absence_views.absentees, name="absentees"),
]
