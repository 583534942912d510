"""How a sheet rolls its own tests: the mass-damage (H52) and trauma (H77)
tests and the periodic healing (H67–H70) and recovery (H88) rolls.

The sheet does not roll by itself: the campaign's game rolls for it, at the
table, the one way every check is rolled there (a card, activations and
re-rolls, K16). The game registers its roller from its ``AppConfig.ready()``;
a sheet asked to roll before any registration is a configuration error, said
plainly. When an activation re-reads such a roll, the game calls
``sheets.services.meter_reread``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import ImproperlyConfigured

# roller(*, campaign, user, purpose, modifier, difficulty, breakdown,
#        character, post, scene, facts) -> (RollEntry, rules.hitos.CheckResult)
# ``facts`` is what a re-read needs: the meter, the action, its amount, the rest.
Roller = Callable[..., tuple[Any, Any]]

_rollers: list[Roller] = []


def register(roller: Roller) -> None:
    _rollers[:] = [roller]


def roll(**kwargs) -> tuple[Any, Any]:
    if not _rollers:
        raise ImproperlyConfigured("No game system rolls the sheets' tests: install systems.hitos.")
    return _rollers[0](**kwargs)
