"""The answer to a campaign whose log head does not name its last entry.

Wherever a roll of a campaign is read or appended (the scene page, a roll's
permalink, bundle and badge, the roll log, every action that rolls) a head
that disagrees with the last entry raises ``rolls.models.LogHeadMismatch``;
this middleware answers it, for every view alike, with a page that says what
happened, what it means and whom to tell.

The status is 503: the site cannot serve this campaign's rolls until whoever
runs it repairs the database. Nothing the visitor did caused it and nothing
they send can resolve it (409 would invite them to change their request and
try again); as a 5xx it shows in the server's monitoring, and no cache keeps
it. The exception is raised before anything is written (an append checks the
head under its lock, inside the transaction the exception rolls back).
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from rolls.models import LogHeadMismatch


class LogHeadMismatchMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, LogHeadMismatch):
            return None
        response = render(request, "rolls/log_head_mismatch.html", {"sent_form": request.method == "POST"}, status=503)
        response["Cache-Control"] = "no-store"
        if getattr(request, "htmx", False):
            # htmx swaps no error status: it loads the page that explains instead.
            response["HX-Redirect"] = reverse("rolls:roll-log", args=[exception.campaign.slug])
        return response
