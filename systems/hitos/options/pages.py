"""What HITOS adds to the forum's pages (``campaigns.extensions``): the
dashboard's link to the rules options."""

from __future__ import annotations

from django.http import HttpRequest
from django.urls import reverse
from django.utils.translation import gettext as _

from campaigns.extensions import Additions
from campaigns.permissions import Access


def dashboard(request: HttpRequest, access: Access) -> Additions | None:
    if access.campaign.system != "hitos":
        return None
    return Additions(links=[(_("Opciones de reglas"), reverse("hitos:campaign-options", args=[access.campaign.slug]))])
