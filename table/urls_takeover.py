"""Playing an absent player's character (issue 17), in the ``table`` namespace."""

from django.urls import path

from table import takeover_views

_campaign = "partidas/<slug:slug>/personajes-llevados/"
urlpatterns = [
    path(f"{_campaign}nuevo/", takeover_views.takeover_start, name="takeover-start"),
    path(f"{_campaign}<int:takeover_id>/devolver/", takeover_views.takeover_end, name="takeover-end"),
]
