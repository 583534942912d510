"""What the hero points add to the GM's dashboard (``campaigns.extensions``):
a link to the campaign's hero points, with the requests waiting for the GM
(A25 claims, A26 gifts, A27 the players' states «por el morro»)."""

from __future__ import annotations

from django.http import HttpRequest
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from campaigns.extensions import Additions
from campaigns.permissions import Access
from systems.aventuras.heroes import services


def dashboard(request: HttpRequest, access: Access) -> Additions | None:
    if access.campaign.system != "aventuras" or not access.is_gm:
        return None
    waiting = sum(
        1 for r in services.pending_requests(access.campaign).select_related("character") if services.gm_decides(r)
    )
    label = _("Puntos de Héroe")
    if waiting:
        label = ngettext(
            "Puntos de Héroe (%(count)d petición pendiente)",
            "Puntos de Héroe (%(count)d peticiones pendientes)",
            waiting,
        ) % {"count": waiting}
    return Additions(links=[(label, reverse("aventuras:heroes", args=[access.campaign.slug]))])
