"""What a Vaesen campaign keeps between the GM's start and the players'
answers (``Campaign.game_state``, under the campaign row's lock): the open
fear tests and opposed rolls of its scenes. Each is a small dict with an
``id``; what was rolled lives in the signed log and its table rolls, so a
test leaves this list once every answer is in (or the GM closes it)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from campaigns.models import Campaign

NEXT = "vaesen_next"


def locked_campaign(campaign: Campaign) -> Campaign:
    """The campaign row, locked until the transaction ends."""
    return Campaign.objects.select_for_update().get(pk=campaign.pk)


def items(campaign: Campaign, key: str, *, scene_id: int | None = None) -> list[dict[str, Any]]:
    rows = list((campaign.game_state or {}).get(key) or [])
    return [row for row in rows if scene_id is None or row.get("scene") == scene_id]


def find(campaign: Campaign, key: str, item_id: int, *, scene_id: int) -> dict[str, Any]:
    found = next((row for row in items(campaign, key, scene_id=scene_id) if row.get("id") == item_id), None)
    if found is None:
        raise ValidationError(_("Esa prueba ya está cerrada o no es de esta escena."), code="closed")
    return found


def add(locked: Campaign, key: str, item: dict[str, Any]) -> dict[str, Any]:
    """Store a new open item on the locked campaign (gives it its id)."""
    state = dict(locked.game_state or {})
    item = {**item, "id": int(state.get(NEXT, 0)) + 1}
    state[NEXT] = item["id"]
    state[key] = [*(state.get(key) or []), item]
    locked.game_state = state
    locked.save(update_fields=["game_state"])
    return item


def replace(locked: Campaign, key: str, item: dict[str, Any], *, done: bool = False) -> None:
    """Store ``item`` again (or, ``done``, drop it) on the locked campaign."""
    state = dict(locked.game_state or {})
    rows = [row for row in state.get(key) or [] if row.get("id") != item["id"]]
    if not done:
        rows.append(item)
        rows.sort(key=lambda row: row["id"])
    state[key] = rows
    locked.game_state = state
    locked.save(update_fields=["game_state"])
