"""Secret rolls of the GM: made in a scene, sealed for the GM alone
(audience "gm", rollog v1.1 §3.7), and revealed later.

A reveal writes no new log entry: from then on the roll's opening is served
to everyone who reads its scene (``rolls.permissions.readable_rolls``), and
the commitment signed when it was rolled proves the content did not change.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from campaigns.models import Scene
from campaigns.permissions import Access
from rolls import services
from rolls.models import RollEntry, RollReveal
from rolls.permissions import readable_rolls
from systems.hitos import reading as hitos_reading
from systems.hitos.checks.services import check_setup
from table.cards import card


def secret_check_roll(
    *,
    scene: Scene,
    user,
    purpose: str,
    character=None,
    characteristic: str = "",
    skill: str = "",
    free_modifier: int | None = None,
    difficulty: int | None = None,
    client_seed: str | None = None,
    seen: str | None = None,
) -> RollEntry:
    """A HITOS check only the GM sees: from a sheet (characteristic + skill,
    with its penalties) or with a free modifier, e.g. a hidden Percepción."""
    setup = check_setup(character, characteristic=characteristic, skill=skill, free_modifier=free_modifier)
    entry, _result = hitos_reading.hitos_check_roll(
        campaign=scene.campaign,
        user=user,
        purpose=purpose,
        modifier=setup.modifier,
        difficulty=difficulty,
        breakdown=setup.breakdown,
        what=setup.what or purpose,
        character=character,
        scene=scene,
        secret=True,
        client_seed=client_seed,
        seen=seen,
    )
    return entry


def secret_free_roll(
    *, scene: Scene, user, notation: str, purpose: str, client_seed: str | None = None, seen: str | None = None
) -> RollEntry:
    """A roll in dice notation only the GM sees."""
    return services.free_roll(
        campaign=scene.campaign,
        user=user,
        text=notation,
        purpose=purpose,
        scene=scene,
        secret=True,
        client_seed=client_seed,
        seen=seen,
    )


@transaction.atomic
def secret_roll_reveal(*, entry: RollEntry, user, access: Access) -> RollReveal:
    """Show a secret roll to everyone who reads its scene. Once only; the GM's."""
    if not access.is_gm:
        raise PermissionDenied(_("Solo la dirección puede revelar sus tiradas secretas."))
    if entry.audience != RollEntry.Audience.GM:
        raise ValidationError(_("Esa tirada no es una tirada secreta de la dirección."), code="not_secret")
    reveal, created = RollReveal.objects.get_or_create(entry=entry, defaults={"revealed_by": user})
    if not created:
        raise ValidationError(_("Esa tirada ya se reveló."), code="already_revealed")
    return reveal


def scene_secret_rolls(access: Access, scene: Scene) -> list[RollEntry]:
    """The scene's secret rolls this reader may see: all of them for the GM,
    the revealed ones for its other readers (newest first)."""
    return list(
        readable_rolls(access)
        .filter(scene=scene, audience=RollEntry.Audience.GM)
        .select_related("user", "character", "reveal")
        .order_by("-seq")
    )


def scene_secret_cards(access: Access, scene: Scene) -> list[dict]:
    """The scene page's list: each secret roll the reader may see, with its card."""
    return [
        {
            "entry": entry,
            "card": card(entry, access=access, versions=[entry]),
        }
        for entry in scene_secret_rolls(access, scene)
    ]
