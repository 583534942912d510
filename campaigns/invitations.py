"""Joining by invitation: the link is the GM's consent.

Whoever holds it joins with one click on its page (``views.invitation_open``)
or, without an account or logged out, by signing up or logging in from that
page: ``accept_on_sign_in`` (an ``accounts.hooks`` sign-in hook) makes them a
member the moment they are signed in and sends them to the campaign.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest
from django.urls import Resolver404, resolve, reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _

from campaigns import services
from campaigns.models import Campaign, Invitation, Membership, Role
from campaigns.permissions import campaign_access


def welcome(campaign: Campaign, membership: Membership) -> str:
    """What a newcomer reads on arriving in the campaign: what to do next."""
    if membership.role == Role.PLAYER:
        return format_html(
            _("¡Te damos la bienvenida a «{title}»! Ya eres jugador. Tu siguiente paso: {link}."),
            title=campaign.title,
            link=format_html(
                '<a href="{}">{}</a>',
                reverse("sheets:sheet-create", args=[campaign.slug]),
                _("crea tu personaje"),
            ),
        )
    if membership.role == Role.COGM:
        return _(
            "¡Te damos la bienvenida a «%(title)s»! Ahora codiriges la partida: "
            "tienes el «Panel de dirección» en su página."
        ) % {"title": campaign.title}
    return _(
        "¡Te damos la bienvenida a «%(title)s»! Como lector puedes leer las escenas abiertas a todos los miembros."
    ) % {"title": campaign.title}


def accept_on_sign_in(request: HttpRequest, next_url: str) -> str | None:
    """Signed up or logged in on the way to an invitation's page: join now
    and go to the campaign with the welcome. Anything else (another page, a
    member already, a spent or revoked link, someone the direction removed)
    answers None, and the person goes where they were going: the
    invitation's page says why it cannot let them in."""
    try:
        match = resolve(urlsplit(next_url).path)
    except Resolver404:
        return None
    if match.view_name != "campaigns:invitation-open":
        return None
    invitation = Invitation.objects.select_related("campaign").filter(token=match.kwargs["token"]).first()
    if invitation is None or campaign_access(request.user, invitation.campaign).is_member:
        return None
    try:
        membership = services.invitation_accept(invitation=invitation, user=request.user)
    except ValidationError:
        return None
    messages.success(request, welcome(invitation.campaign, membership))
    return invitation.campaign.get_absolute_url()
