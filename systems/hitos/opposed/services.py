"""Opposed rolls at the table (H9): the GM has two characters roll against
each other; the higher total wins. A tie the action does not allow is settled
by new rolls for both, linked to the round before (``tiebreak_of``).

Aspect activations may re-roll a card of the last round (``systems.hitos.activations.services``
refuses older rounds): ``after_reroll`` then reads the round again, stores its
outcome and, when the re-roll left a tie the action does not allow, rolls the
linked tie-break as at the start.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext as _

from campaigns.models import Scene
from campaigns.permissions import campaign_access
from rolls.services import derived_seed, seed_used
from rules import hitos
from sheets.models import Character
from systems.hitos.checks.services import CheckSetup, check_setup, owner_for, roll_modifier, table_check, table_result
from systems.hitos.models import OpposedRoll, TableRollKind
from table.models import TableRoll

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


def _seed(client_seed: str | None, round_: int, side: int) -> str | None:
    """The browser's seed for the first roll; each further roll of the same
    request derives its own from it (seeds are unique in a campaign's log)."""
    if round_ == 0 and side == 0:
        return client_seed
    return derived_seed(client_seed, f"{round_}{'ab'[side]}")


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
        if not side.character.is_in_play(campaign):
            raise ValidationError(_("%(name)s no es un personaje de esta partida.") % {"name": side.character.name})
    if first.character.pk == second.character.pk:
        raise ValidationError(_("Una tirada enfrentada necesita dos personajes distintos."), code="same")
    setups = [
        check_setup(side.character, characteristic=side.characteristic, skill=side.skill, extra=side.extra)
        for side in (first, second)
    ]
    with transaction.atomic():
        return _rounds(
            campaign=campaign,
            scene=scene,
            actor=actor,
            sides=[(first.character, setups[0]), (second.character, setups[1])],
            purpose=purpose,
            tie_allowed=tie_allowed,
            client_seed=client_seed,
        )


def _rounds(
    *,
    campaign,
    scene,
    actor,
    sides: list[tuple[Character, CheckSetup]],
    purpose: str,
    tie_allowed: bool,
    client_seed: str | None = None,
    previous: OpposedRoll | None = None,
    first_round: int = 0,
) -> OpposedRoll:
    """Roll rounds until one is decided (or the tie is allowed); returns the
    first round rolled here. Runs inside the caller's transaction."""
    head = None
    for round_ in range(first_round, first_round + MAX_ROUNDS):
        rolls = []
        for index, (character, setup) in enumerate(sides):
            table_roll = table_check(
                campaign=campaign,
                user=actor,
                setup=setup,
                purpose=_purpose(purpose, character, round_),
                difficulty=None,
                character=character,
                scene=scene,
                kind=TableRollKind.OPPOSED,
                client_seed=_seed(client_seed, round_, index),
                position=index,
                owner=owner_for(character, actor),
            )
            if round_ == 0 and index == 0:
                again = OpposedRoll.objects.filter(first=table_roll).first()
                if again is not None:
                    return again
            if table_roll.kind != TableRollKind.OPPOSED or table_roll.character_id != character.pk:
                raise seed_used()
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


def _round_of(table_roll: TableRoll) -> OpposedRoll | None:
    return OpposedRoll.objects.filter(Q(first=table_roll) | Q(second=table_roll)).first()


def is_last_round(table_roll: TableRoll) -> bool:
    """Whether an opposed roll's card belongs to the round that decides (no
    tie-break follows it)."""
    row = _round_of(table_roll)
    return row is None or not OpposedRoll.objects.filter(tiebreak_of=row).exists()


def _setup_of(table_roll: TableRoll) -> CheckSetup:
    """What a side rolled, from its signed entry (a tie-break repeats it)."""
    game = table_roll.first.signed_game
    breakdown = tuple((str(label), int(value)) for label, value in game.get("breakdown", []))
    return CheckSetup(roll_modifier(table_roll), breakdown, game.get("what", ""))


def after_reroll(table_roll: TableRoll, *, actor, client_seed: str | None = None) -> OpposedRoll | None:
    """An aspect re-rolled one card of the last round: store what the round
    reads now and, if that is a tie the action does not allow, roll the
    linked tie-break (H9), its seeds derived from the re-roll's browser
    ``client_seed`` as ``opposed_start`` derives a tie-break's (None: the
    server's). Runs inside the activation's transaction."""
    row = (
        OpposedRoll.objects.select_for_update(of=("self",))
        .filter(Q(first=table_roll) | Q(second=table_roll))
        .select_related("first__latest", "first__first", "first__character", "first__campaign")
        .select_related("second__latest", "second__first", "second__character", "second__campaign")
        .select_related("campaign", "scene")
        .first()
    )
    if row is None:
        return None
    outcome = hitos.opposed(table_result(row.first), table_result(row.second), tie_allowed=row.tie_allowed)
    row.outcome = outcome.value
    row.save(update_fields=["outcome"])
    if outcome is not hitos.Opposed.REROLL:
        return row
    depth, earlier = 0, row
    while earlier.tiebreak_of_id is not None:
        earlier = earlier.tiebreak_of
        depth += 1
    _rounds(
        campaign=row.campaign,
        scene=row.scene,
        actor=actor,
        sides=[(row.first.character, _setup_of(row.first)), (row.second.character, _setup_of(row.second))],
        purpose=row.purpose,
        tie_allowed=row.tie_allowed,
        client_seed=client_seed,
        previous=row,
        first_round=depth + 1,
    )
    return row


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
