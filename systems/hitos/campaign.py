"""What a HITOS campaign keeps on the forum's campaign row, in its own keys.

- ``Campaign.rules_options``: the rules options (``rules.hitos_options``) and
  two table settings (``TABLE_DEFAULTS``): whether players mark their own
  meters, and how long a target has to answer a negative activation.
- ``Campaign.game_state``: the GM's pool of drama points (H24), changed only
  under the campaign row's lock (``systems.hitos.sheet.services``).

A missing key takes its default, so a campaign made before a setting existed
reads the same as a new one.
"""

from __future__ import annotations

from typing import Any

from rules.hitos_options import HitosOptions

TABLE_DEFAULTS: dict[str, Any] = {"players_mark_own_meters": False, "activation_deadline_hours": 48}
GM_POOL = "gm_pool"
GM_POOL_DEFAULT = 5


def rules_options(campaign) -> HitosOptions:
    """The rules options (a stored key the engine does not know raises ``ValueError``)."""
    stored = campaign.rules_options or {}
    return HitosOptions.from_dict({k: v for k, v in stored.items() if k not in TABLE_DEFAULTS})


def rules_options_or_defaults(campaign) -> HitosOptions:
    """The rules options as the sheet pages read them: a stored value the
    engine rejects falls back to the defaults rather than breaking every
    sheet page."""
    try:
        return rules_options(campaign)
    except ValueError:
        return HitosOptions()


def table_setting(campaign, name: str):
    return (campaign.rules_options or {}).get(name, TABLE_DEFAULTS[name])


def stored_options(options: HitosOptions, **settings) -> dict[str, Any]:
    """What ``Campaign.rules_options`` stores: the rules options and the table settings."""
    unknown = set(settings) - set(TABLE_DEFAULTS)
    if unknown:
        raise ValueError(f"Ajustes de mesa desconocidos: {', '.join(sorted(unknown))}.")
    return {**options.to_dict(), **settings}


def gm_pool(campaign) -> int:
    """The GM's drama points (H24)."""
    return (campaign.game_state or {}).get(GM_POOL, GM_POOL_DEFAULT)


def with_gm_pool(campaign, value: int) -> dict[str, Any]:
    """``campaign.game_state`` with the GM's pool at ``value`` (the caller saves it)."""
    return {**(campaign.game_state or {}), GM_POOL: value}
