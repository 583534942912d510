"""What Vaesen adds to the forum's pages (``campaigns.extensions``): the
dashboard's link to the campaign's Vaesen options."""

from __future__ import annotations

from django.http import HttpRequest
from django.urls import reverse
from django.utils.translation import gettext as _

from campaigns.extensions import Additions
from campaigns.permissions import Access


def dashboard(request: HttpRequest, access: Access) -> Additions | None:
    if access.campaign.system != "vaesen":
        return None
    return Additions(links=[(_("Opciones de Vaesen"), reverse("vaesen:campaign-options", args=[access.campaign.slug]))])
