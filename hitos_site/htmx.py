"""What every app's views share about htmx: the request type, the
"fragment for an htmx swap, whole page otherwise" answer, and the answers
after an action (``redirect_after``, ``form_again``, ``after_action``).
It imports no app of ours."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import patch_vary_headers
from django_htmx.http import HttpResponseClientRedirect, reswap, retarget
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


def redirect_after(request: HtmxHttpRequest, url: str) -> HttpResponse:
    """Post/Redirect/Get after a done action: htmx is told to load ``url``
    as a whole page (every form on it gets a fresh browser seed), a normal
    form is redirected."""
    if request.htmx:
        return HttpResponseClientRedirect(url)
    return redirect(url)


def form_again(response: HttpResponse, target: str) -> HttpResponse:
    """A refused form answered to htmx: 200, swapped back over the form
    (``target``, a CSS selector) instead of where the request aimed, so that
    nothing the user typed is lost (htmx swaps no error status)."""
    return reswap(retarget(response, target), "outerHTML")


def after_action(
    request: HtmxHttpRequest,
    *,
    fragment: Callable[[str], HttpResponse],
    url: str,
    error: str = "",
    success: str = "",
) -> HttpResponse:
    """The answer to an action made from a page region: for htmx the region
    as it is now (``fragment(error)``, which shows the error, if any, in
    place), otherwise the error (or ``success``) as a message and a redirect
    to ``url``."""
    if request.htmx:
        return fragment(error)
    if error:
        messages.error(request, error)
    elif success:
        messages.success(request, success)
    return redirect(url)
