"""Opposed rolls at the table (H9): the GM has two characters roll against
each other; the higher total wins. A tie the action does not allow is settled
by new rolls for both, linked to the round before (``tiebreak_of``).

The stored ``outcome`` is what each round read when it was rolled. Aspect
activations may later re-roll a card (another module): pages read the current
result again from the latest versions (``opposed_outcome``) and simply show
it, even when a re-roll turns a decided round into a tie or the other way
round; no new tie-break is rolled after the fact.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from campaigns.models import Scene
from campaigns.permissions import campaign_access
from rolls.models import OpposedRoll, TableRollKind
from rolls.table import check_setup, table_check, table_result
from rules import hitos
from sheets.models import Character

# A tie not allowed is rolled again; ties are rare (both totals equal), so
# this bound is only a guard against a loop that never ends.
MAX_ROUNDS = 20


@dataclass(frozen=True)
class OpposedSide:
    """One side of an opposed roll: who rolls, and what."""

    character: Character
    characteristic: str
    skill: str = ""
    extra: tuple[tuple[str, int], ...] = ()


def opposable(character: Character, campaign) -> bool:
    """Approved player characters of the campaign, and its NPCs."""
    if character.campaign_id != campaign.pk:
        return False
    return character.is_npc or character.status == Character.Status.APPROVED


def _seed(client_seed: str | None, round_: int, side: int) -> str | None:
    """The browser's seed for the first roll; each further roll of the same
    request derives its own from it (seeds are unique in a campaign's log)."""
    if client_seed is None:
        return None
    if round_ == 0 and side == 0:
        return client_seed
    return f"{client_seed[:56]}-{round_}{'ab'[side]}"


def _purpose(purpose: str, character: Character, round_: int) -> str:
    if round_ == 0:
        return _("%(purpose)s — %(name)s") % {"purpose": purpose, "name": character.name}
    return _("%(purpose)s — %(name)s (desempate %(n)s)") % {"purpose": purpose, "name": character.name, "n": round_}


def opposed_start(
    *,
    scene: Scene,
    actor,
    purpose: str,
    tie_allowed: bool,
    first: OpposedSide | tuple,
    second: OpposedSide | tuple,
    client_seed: str | None = None,
) -> OpposedRoll:
    """H9 — both sides roll through the log (the GM is the user who rolls);
    a tie the action does not allow rolls both again, up to ``MAX_ROUNDS``.
    Side effects, in one transaction: two ``opposed`` table rolls per round
    and one ``OpposedRoll`` per round, each tie-break linked to the round
    before. Returns the first round. The same client seed sent again returns
    the opposed roll it made."""
    first = first if isinstance(first, OpposedSide) else OpposedSide(*first)
    second = second if isinstance(second, OpposedSide) else OpposedSide(*second)
    campaign = scene.campaign
    if not campaign_access(actor, campaign).is_gm:
        raise PermissionDenied(_("Solo la dirección inicia tiradas enfrentadas."))
    if scene.status == Scene.Status.ARCHIVED:
        raise ValidationError(_("La escena está archivada."))
    purpose = " ".join((purpose or "").split())
    if not purpose:
        raise ValidationError(_("Indica qué se disputan."), code="purpose")
    for side in (first, second):
        if not opposable(side.character, campaign):
            raise ValidationError(_("%(name)s no es un personaje de esta partida.") % {"name": side.character.name})
    if first.character.pk == second.character.pk:
        raise ValidationError(_("Una tirada enfrentada necesita dos personajes distintos."), code="same")
    setups = [
        check_setup(side.character, characteristic=side.characteristic, skill=side.skill, extra=side.extra)
        for side in (first, second)
    ]
    with transaction.atomic():
        head = previous = None
        for round_ in range(MAX_ROUNDS):
            rolls = []
            for index, (side, setup) in enumerate(zip((first, second), setups, strict=True)):
                table_roll = table_check(
                    campaign=campaign,
                    user=actor,
                    setup=setup,
                    purpose=_purpose(purpose, side.character, round_),
                    difficulty=None,
                    character=side.character,
                    scene=scene,
                    kind=TableRollKind.OPPOSED,
                    client_seed=_seed(client_seed, round_, index),
                    position=index,
                )
                if round_ == 0 and index == 0:
                    again = OpposedRoll.objects.filter(first=table_roll).first()
                    if again is not None:
                        return again
                if table_roll.kind != TableRollKind.OPPOSED or table_roll.character_id != side.character.pk:
                    raise ValidationError(_("Esa semilla ya se usó en otra tirada."), code="client_seed_used")
                rolls.append(table_roll)
            outcome = hitos.opposed(table_result(rolls[0]), table_result(rolls[1]), tie_allowed=tie_allowed)
            row = OpposedRoll(
                campaign=campaign,
                scene=scene,
                created_by=actor,
                purpose=purpose[:300],
                tie_allowed=tie_allowed,
                first=rolls[0],
                second=rolls[1],
                tiebreak_of=previous,
                outcome=outcome.value,
            )
            row.full_clean()
            row.save()
            head = head or row
            if outcome is not hitos.Opposed.REROLL:
                break
            previous = row
    return head


def opposed_chain(opposed: OpposedRoll) -> list[OpposedRoll]:
    """The first round and its tie-breaks, in order (one query per round)."""
    chain = [opposed]
    while True:
        following = (
            OpposedRoll.objects.filter(tiebreak_of=chain[-1])
            .select_related("first__latest", "first__first", "first__character", "first__campaign")
            .select_related("second__latest", "second__first", "second__character", "second__campaign")
            .first()
        )
        if following is None:
            return chain
        chain.append(following)


def opposed_chains(heads: Iterable[OpposedRoll], rounds) -> list[list[OpposedRoll]]:
    """Each first round with its tie-breaks, for a page: ``rounds`` is a
    queryset of the scene's opposed rolls (with what the page needs
    selected); one query per tie-break depth, however many rolls there are."""
    chains = [[head] for head in heads]
    tails = {chain[-1].pk: chain for chain in chains}
    while tails:
        found = list(rounds.filter(tiebreak_of__in=list(tails)))
        next_tails = {}
        for row in found:
            chain = tails[row.tiebreak_of_id]
            chain.append(row)
            next_tails[row.pk] = chain
        tails = next_tails
    return chains


def opposed_outcome(chain: list[OpposedRoll] | OpposedRoll) -> hitos.Opposed:
    """The result as the cards read now: the last round, from the latest
    version of each roll (an aspect re-roll may have changed it)."""
    last = chain[-1] if isinstance(chain, list) else opposed_chain(chain)[-1]
    return hitos.opposed(table_result(last.first), table_result(last.second), tie_allowed=last.tie_allowed)
