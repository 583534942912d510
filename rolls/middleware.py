"""The answer to a campaign whose log head does not name its last entry.

Wherever a roll of a campaign is read or appended (the scene page, a roll's
permalink, bundle and badge, the roll log, the witness's head, the export,
every action that rolls) a head that disagrees with the last entry raises
``rolls.models.LogHeadMismatch``; this middleware answers it, for every view
alike, with what says what happened, what it means and whom to tell:

- a page, to a normal visit or form;
- to htmx, the explanation as an alert, with status 200 since htmx swaps no
  error status, and no address (a roll's link reaches this without access
  to the campaign, whose address must not leak): a form sent (POST) gets it
  at the top of the page it came from (HX-Retarget, HX-Reswap), so that the
  form stays as it is, with what the visitor typed; a region that asked for
  its update (a poll, a filter) gets it in its place, once (a poll replaced
  by it stops), and the rest of the page stays as it is;
- JSON (a roll's bundle, the witness's head, the log's export) or plain text
  (the badge), with the cross-origin headers their normal answer has, so a
  script or a forum elsewhere reads the error instead of a blocked answer.

The status is 503: the site cannot serve this campaign's rolls until whoever
runs it repairs the database. Nothing the visitor did caused it and nothing
they send can resolve it (409 would invite them to change their request and
try again); as a 5xx it shows in the server's monitoring, and no cache keeps
it. The exception is raised before anything is written (an append checks the
head under its lock, inside the transaction the exception rolls back).
"""

from __future__ import annotations

import json
import logging

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext as _
from django_htmx.http import reswap, retarget

from hitos_site.htmx import wants_fragment
from rolls.models import LogHeadMismatch

logger = logging.getLogger(__name__)

# The answers that are not pages: {url name: (content type, headers their normal answer has)}.
_DOCUMENTS = {
    "roll-json": ("application/json", {"Access-Control-Allow-Origin": "*"}),
    "log-head": ("application/json", {}),
    "log-export": ("application/json", {}),
    "roll-badge": ("text/plain", {"Cross-Origin-Resource-Policy": "cross-origin"}),
}


def _document(request: HttpRequest) -> HttpResponse | None:
    match = request.resolver_match
    name = match.url_name if match is not None and match.namespace == "rolls" else None
    if name not in _DOCUMENTS:
        return None
    content_type, headers = _DOCUMENTS[name]
    message = _(
        "El registro de tiradas de esta partida no cuadra: su cabeza no coincide con la última entrada guardada. "
        "Avisa a quien administra este sitio."
    )
    if content_type == "application/json":
        body = json.dumps({"error": "log_head_mismatch", "message": message}, ensure_ascii=False)
    else:
        body = message + "\n"
    response = HttpResponse(body, status=503, content_type=f"{content_type}; charset=utf-8")
    for header, value in headers.items():
        response[header] = value
    return response


class LogHeadMismatchMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, LogHeadMismatch):
            return None
        # Logged whatever the answer's status (htmx gets a 200): whoever runs the site must hear of it.
        logger.error("The roll log head of campaign %s does not name its last entry.", exception.campaign.pk)
        response = _document(request)
        if response is None and wants_fragment(request):
            alert = render_to_string(
                "rolls/log_head_mismatch.html#explanation", {"sent_form": request.method == "POST"}, request
            )
            response = HttpResponse(alert)
            if request.method not in ("GET", "HEAD"):
                response = reswap(retarget(response, "#contenido"), "afterbegin")
            patch_vary_headers(response, ("HX-Request",))
        elif response is None:
            response = render(
                request, "rolls/log_head_mismatch.html", {"sent_form": request.method == "POST"}, status=503
            )
        response["Cache-Control"] = "no-store"
        return response
