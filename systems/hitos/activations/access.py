"""Access to HITOS activations: a roll's activations through its table roll,
a narrative element through its campaign (``table.access`` underneath)."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _

from campaigns import permissions as perms
from campaigns.permissions import Access, campaign_access
from systems.hitos.cards import activations_prefetch
from systems.hitos.models import Activation
from table.access import may_read_table_roll
from table.models import TableRoll


def _require_play(access: Access) -> None:
    if not perms.can_play(access):
        raise PermissionDenied(_("Solo los jugadores y la dirección pueden activar aspectos."))


def table_roll_for(request: HttpRequest, table_roll_id: int) -> tuple[TableRoll, Access]:
    """The roll if the user may read it (404 otherwise) and plays at the
    table (403 else), with the activations its card reads."""
    table_roll = get_object_or_404(
        TableRoll.objects.select_related(
            "campaign__gm", "scene", "post__scene", "first", "latest", "character", "owner"
        ).prefetch_related(activations_prefetch()),
        pk=table_roll_id,
    )
    access = campaign_access(request.user, table_roll.campaign)
    if not may_read_table_roll(access, table_roll):
        raise Http404
    _require_play(access)
    return table_roll, access


def activation_for(request: HttpRequest, activation_id: int) -> tuple[Activation, Access]:
    """The activation, through its roll (``table_roll_for``) or, for a
    narrative one, its campaign: 404 out of sight, 403 for non-players."""
    activation = get_object_or_404(
        Activation.objects.select_related("campaign__gm", "table_roll", "target_character", "activator_character"),
        pk=activation_id,
    )
    if activation.table_roll_id:
        table_roll, access = table_roll_for(request, activation.table_roll_id)
        activation.table_roll = table_roll
        return activation, access
    access = campaign_access(request.user, activation.campaign)
    if not perms.can_view_campaign(access):
        raise Http404
    _require_play(access)
    return activation, access
