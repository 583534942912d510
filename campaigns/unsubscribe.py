"""The one-click unsubscribe from the notification e-mails (RFC 8058).

Every notification and digest e-mail links here with a signed token naming
its recipient (``notify.unsubscribe_token``), in its text and in its
``List-Unsubscribe`` header. The token is the only credential: no log-in, no
session and no CSRF token, since a mail client POSTs to the address on its
own. A GET only shows the page with its button, because mail scanners follow
links; the POST turns the e-mails off. A mail client's one-click POST
(body ``List-Unsubscribe=One-Click``) is answered at once, with no redirect,
as RFC 8058 asks; the page's own form gets Post/Redirect/Get, or its panel
when htmx sent it.
"""

from __future__ import annotations

from collections.abc import Callable

from django.core import signing
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from accounts.models import User
from campaigns import notify
from hitos_site.htmx import HtmxHttpRequest, page_or_fragment

TEMPLATE = "campaigns/unsubscribe.html"


class _UnusableLink(Exception):
    def __init__(self, status: int):
        super().__init__(status)
        self.status = status


def _subscriber_for(token: str) -> User:
    """The access helper: the user the token was signed for. A forged or
    tampered token is a bad request (400); a good one whose account is gone
    is not found (404)."""
    try:
        user_id = notify.unsubscribe_user_id(token)
    except signing.BadSignature:
        raise _UnusableLink(400) from None
    user = User.objects.filter(pk=user_id).first()
    if user is None:
        raise _UnusableLink(404)
    return user


def _unlisted(response: HttpResponse) -> HttpResponse:
    # The address holds a secret: no search engine lists it.
    response["X-Robots-Tag"] = "noindex"
    return response


def unusable_link(request: HtmxHttpRequest, template: str, status: int) -> HttpResponse:
    """The page of an unsubscribe link that cannot be used (``unusable``)."""
    return _unlisted(render(request, template, {"unusable": True}, status=status))


def one_click_answer(
    request: HtmxHttpRequest, template: str, *, stop: Callable[[], object], context: Callable[[], dict]
) -> HttpResponse:
    """The answer of a one-click unsubscribe page once its token named whom
    (shared by every e-mail that carries ``List-Unsubscribe``): a POST calls
    ``stop``; a mail client's one-click POST is answered at once, the page's
    form with Post/Redirect/Get, or the ``unsubscribe-panel`` for htmx; a GET
    shows ``template`` with ``context()``."""
    if request.method == "POST":
        stop()
        one_click = request.POST.get("List-Unsubscribe") == "One-Click"
        if not request.htmx and not one_click:
            return redirect(request.path)
    return _unlisted(page_or_fragment(request, template, "unsubscribe-panel", context()))


@csrf_exempt
@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def email_unsubscribe(request: HtmxHttpRequest, token: str) -> HttpResponse:
    """GET: what the button will do (or that it is done). POST: turn off the
    user's notification e-mails (``notify.email_unsubscribe``)."""
    try:
        user = _subscriber_for(token)
    except _UnusableLink as unusable:
        return unusable_link(request, TEMPLATE, unusable.status)
    return one_click_answer(
        request,
        TEMPLATE,
        stop=lambda: notify.email_unsubscribe(user=user),
        context=lambda: {"subscriber": user, "unsubscribed": user.email_notifications == User.EmailChoice.NEVER},
    )
