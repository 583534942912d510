"""What every app's views share about htmx: the request type and the
"fragment for an htmx swap, whole page otherwise" answer."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


def wants_fragment(request: HtmxHttpRequest) -> bool:
    """An htmx request that is not restoring history (htmx puts a history
    restore's answer in the body, so it needs the whole page)."""
    return bool(request.htmx) and not request.htmx.history_restore_request


def page_or_fragment(
    request: HtmxHttpRequest, template: str, fragment: str, context: dict, *, status: int = 200
) -> HttpResponse:
    """The ``template#fragment`` partial for an htmx swap, the whole page
    otherwise; the answer varies on HX-Request so that no cache hands the
    fragment to a normal visit."""
    chosen = f"{template}#{fragment}" if wants_fragment(request) else template
    response = render(request, chosen, context, status=status)
    patch_vary_headers(response, ("HX-Request",))
    return response
