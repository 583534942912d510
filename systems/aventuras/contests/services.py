"""Competitions (A13), cooperations (A19) and the initiative order (A20) of
a scene.

The GM sets a contest up (who takes part, the attribute each rolls, the
difficulty of each side or the cooperation's base difficulty); each
participant's controller rolls it from the scene (``rolls.services.make_roll``,
kind "contest", no post) and finishes the roll's chain like any other; when
every roll is final (``signals.roll_settled``) the contest is resolved once,
with ``rules.aventuras`` (``competition_winners``, ``cooperate``).

Lock order: a contestant's row (rolling), then the rolls package's (the
sheet, the log's head), then the contest's row; settling a roll locks its
table roll, then the contest's row. The contest's row is the last lock of
both, so nothing waits in a circle, and resolving under it happens once.
Refusals are ``ValidationError`` (Spanish, nothing changed) or ``PermissionDenied``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.limits import TOO_LONG_MESSAGE
from campaigns.models import Scene
from campaigns.permissions import Access
from rolls.services import roll_append
from rules import aventuras
from rules.aventuras import Combatant, CompetitionCount, Tally
from sheets.models import Character
from systems.aventuras.models import AventurasContest, AventurasContestant, AventurasInitiative, AventurasSheet
from table.models import TableRoll

Kind = AventurasContest.Kind
# A13 — the engine default: compare the successes left after the difficulty.
COMPETITION_COUNT = CompetitionCount.AFTER_DIFFICULTY
MAX_SIDES = 12


def controls(access: Access, character: Character | None) -> bool:
    """Who answers for a character at the table: its player for a player
    character, the GM (or a co-GM) for the GM's characters."""
    if character is None or character.campaign_id != access.campaign.pk:
        return False
    if character.kind == Character.Kind.NPC:
        return access.is_gm
    return access.is_player and character.owner_id == access.user.pk


def table_characters(campaign):
    """Who may take part: the campaign's approved player characters and NPCs with a Hora de Aventuras sheet."""
    return (
        Character.objects.filter(campaign=campaign, aventuras__isnull=False)
        .in_play()
        .select_related("aventuras")
        .order_by("-kind", "name", "id")
    )


def _require_gm(access: Access) -> None:
    if not access.is_gm:
        raise PermissionDenied(_("Solo la dirección de la partida prepara competiciones, cooperaciones e iniciativa."))


def _check_character(campaign, character: Character) -> None:
    if not character.is_in_play(campaign) or not AventurasSheet.objects.filter(pk=character.pk).exists():
        raise ValidationError(
            _("%(name)s no está en la partida con una ficha de Hora de Aventuras.") % {"name": character.name},
            code="character",
        )


# --- competitions and cooperations ---------------------------------------------------------


@dataclass(frozen=True)
class Side:
    character: Character
    attribute: str
    difficulty: int = 0


def contest_create(
    *, scene: Scene, access: Access, kind: str, title: str, difficulty: int = 0, sides: list[Side]
) -> AventurasContest:
    """The GM sets up a competition (A13: each side its own difficulty) or a
    cooperation (A19: one base difficulty, +1 per extra helper)."""
    _require_gm(access)
    if kind not in Kind.values:
        raise ValidationError(_("Elige competición o cooperación."), code="kind")
    title = (title or "").strip()
    if not title:
        raise ValidationError(_("Escribe qué se disputa o qué se hace."), code="title")
    ids = [side.character.pk for side in sides]
    if len(set(ids)) != len(ids):
        raise ValidationError(_("Cada personaje participa una sola vez."), code="duplicate")
    if len(sides) < 2:
        message = (
            _("Una competición necesita al menos dos bandos.")
            if kind == Kind.COMPETITION
            else _("Una cooperación necesita al menos dos personajes.")
        )
        raise ValidationError(message, code="sides")
    if len(sides) > MAX_SIDES:
        raise ValidationError(_("Como mucho %(n)d participantes.") % {"n": MAX_SIDES}, code="sides")
    for side in sides:
        _check_character(scene.campaign, side.character)
        if side.attribute not in aventuras.ATTRIBUTES:
            raise ValidationError(_("Atributo desconocido."), code="attribute")
    with transaction.atomic():
        contest = AventurasContest.objects.create(
            campaign=scene.campaign,
            scene=scene,
            kind=kind,
            title=title[:200],
            difficulty=difficulty if kind == Kind.COOPERATION else 0,
            created_by=access.user,
        )
        for position, side in enumerate(sides):
            AventurasContestant.objects.create(
                contest=contest,
                character=side.character,
                attribute=side.attribute,
                difficulty=side.difficulty if kind == Kind.COMPETITION else 0,
                position=position,
            )
    return contest


def contest_cancel(*, contest: AventurasContest, access: Access, reason: str) -> None:
    """The GM calls off a contest not resolved yet, saying why; who and why
    are shown to everyone. The rolls already made stay in the log, and the
    hero points (or XP) spent on their +2 dice (A22, A28) are not given back."""
    _require_gm(access)
    reason = " ".join((reason or "").split())
    if not reason:
        raise ValidationError(_("Explica por qué se anula."), code="reason")
    limit = AventurasContest._meta.get_field("cancel_reason").max_length
    if len(reason) > limit:
        raise ValidationError(TOO_LONG_MESSAGE % {"limit_value": limit, "show_value": len(reason)}, code="reason")
    with transaction.atomic():
        locked = AventurasContest.objects.select_for_update().get(pk=contest.pk)
        if locked.resolved_at is not None:
            raise ValidationError(_("Ya está resuelta: no se puede anular."), code="resolved")
        if locked.cancelled_at is not None:
            raise ValidationError(_("Ya estaba anulada."), code="cancelled")
        locked.cancelled_at = timezone.now()
        locked.cancelled_by = access.user
        locked.cancel_reason = reason
        locked.save(update_fields=["cancelled_at", "cancelled_by", "cancel_reason"])


def effective_difficulty(contest: AventurasContest, sides: int) -> int:
    """A19 — a cooperation's difficulty with +1 per extra helper."""
    return aventuras.cooperation_difficulty(contest.difficulty, max(sides - 1, 0))


def contest_roll(
    *,
    contestant: AventurasContestant,
    access: Access,
    modifier: int = 0,
    tool_id: int | None = None,
    hero_point: bool = False,
    with_experience: bool = False,
    client_seed: str | None = None,
) -> TableRoll:
    """A participant's roll (no post, kind "contest"), by its controller, once."""
    from systems.aventuras.rolls import services as rolls

    contest = contestant.contest
    if not controls(access, contestant.character):
        raise PermissionDenied(_("Solo quien lleva a %(name)s tira por él.") % {"name": contestant.character.name})
    with transaction.atomic():
        locked = (
            AventurasContestant.objects.select_for_update(of=("self",))
            .select_related("contest", "character")
            .get(pk=contestant.pk)
        )
        _require_open(locked.contest)
        if locked.roll_id is not None:
            raise ValidationError(
                _("%(name)s ya ha tirado en «%(title)s».") % {"name": locked.character.name, "title": contest.title},
                code="rolled",
            )
        setup = rolls.roll_setup(
            locked.character,
            attribute=locked.attribute,
            # A13 — each side against its own difficulty; a cooperation's applies to the pool (A19).
            difficulty=locked.difficulty if contest.kind == Kind.COMPETITION else 0,
            modifier=modifier,
            tool_id=tool_id,
            hero_point=hero_point,
            with_experience=with_experience,
        )
        table_roll = rolls.make_roll(
            campaign=contest.campaign,
            user=access.user,
            setup=setup,
            purpose=f"{contest.title}: {locked.character.name}",
            character=locked.character,
            scene=contest.scene,
            client_seed=client_seed,
            kind="contest",
        )
        locked.roll = table_roll
        locked.save(update_fields=["roll"])
        resolve_if_ready(contest.pk, check_open=True)
    return table_roll


def _require_open(contest: AventurasContest) -> None:
    if contest.cancelled_at is not None:
        raise ValidationError(_("Esta competición o cooperación se ha anulado."), code="cancelled")
    if contest.resolved_at is not None:
        raise ValidationError(_("Ya está resuelta."), code="resolved")


def resolve_if_ready(contest_id: int, *, check_open: bool = False) -> bool:
    """Resolve the contest, once, if every participant has a final roll
    (in the caller's transaction, the contest's row locked). Returns whether
    it was resolved now."""
    from systems.aventuras.rolls import services as rolls

    contest = AventurasContest.objects.select_for_update().get(pk=contest_id)
    if check_open:
        _require_open(contest)
    if contest.resolved_at is not None or contest.cancelled_at is not None:
        return False
    contestants = list(contest.contestants.select_related("character", "roll__latest"))
    if any(c.roll is None or not rolls.is_final(c.roll) for c in contestants):
        return False
    contest.result = contest_result(contest, [(c, rolls.roll_tally(c.roll)) for c in contestants])
    contest.resolved_at = timezone.now()
    contest.save(update_fields=["result", "resolved_at"])
    return True


def _pair(tally: Tally) -> dict[str, int]:
    return {"normals": tally.normals, "chachis": tally.chachis, "successes": tally.successes}


def contest_result(contest: AventurasContest, rolled: list[tuple[AventurasContestant, Tally]]) -> dict[str, Any]:
    """What a resolved contest shows (stored once in ``result``)."""
    if contest.kind == Kind.COOPERATION:
        # A19 — successes and chachis pooled, then cancelled by the raised difficulty.
        resolution = aventuras.cooperate([tally for _c, tally in rolled], contest.difficulty)
        return {
            "kind": Kind.COOPERATION.value,
            "sides": [{"character": c.character_id, "name": c.character.name, **_pair(t)} for c, t in rolled],
            "base_difficulty": contest.difficulty,
            "difficulty": effective_difficulty(contest, len(rolled)),
            "pooled": _pair(resolution.rolled),
            "remaining": _pair(resolution.remaining),
            "succeeded": resolution.succeeded,
            "chachis": resolution.chachis,
        }
    resolutions = [aventuras.resolve(tally, c.difficulty) for c, tally in rolled]
    winners = aventuras.competition_winners(resolutions, COMPETITION_COUNT)
    sides = [
        {
            "character": c.character_id,
            "name": c.character.name,
            "difficulty": c.difficulty,
            "rolled": _pair(r.rolled),
            "remaining": _pair(r.remaining),
            "succeeded": r.succeeded,
            "winner": i in winners,
        }
        for i, (c, r) in enumerate(zip([c for c, _t in rolled], resolutions, strict=True))
    ]
    return {
        "kind": Kind.COMPETITION.value,
        "sides": sides,
        "winners": [rolled[i][0].character_id for i in winners],
        "decided_by": _decided_by(resolutions, winners),
    }


def _decided_by(resolutions: list[aventuras.Resolution], winners: tuple[int, ...]) -> str:
    """A13 — why: "nobody" (no side succeeded), "tie" (still tied), "only"
    (the only side that succeeded), "chachis" (more chachis) or "normals"
    (as many chachis, more normal successes)."""
    if not winners:
        return "nobody"
    if len(winners) > 1:
        return "tie"
    contenders = [r for r in resolutions if r.succeeded]
    if len(contenders) == 1:
        return "only"
    best = resolutions[winners[0]].remaining.chachis
    same_chachis = [r for r in contenders if r.remaining.chachis == best]
    return "normals" if len(same_chachis) > 1 else "chachis"


def on_settled(table_roll: TableRoll) -> None:
    """``roll_settled``: the contest whose participant's roll this is may now be complete."""
    contest_id = (
        AventurasContestant.objects.filter(roll=table_roll, contest__resolved_at__isnull=True)
        .values_list("contest_id", flat=True)
        .first()
    )
    if contest_id is not None:
        resolve_if_ready(contest_id)


# --- initiative (A20) ----------------------------------------------------------------------


def initiative_set(*, scene: Scene, access: Access, characters) -> AventurasInitiative:
    """The GM names who is in the scene's fight (the tie-break dice start again)."""
    _require_gm(access)
    characters = list(characters)
    if not characters:
        raise ValidationError(_("Elige al menos un personaje para la iniciativa."), code="characters")
    for character in characters:
        _check_character(scene.campaign, character)
    with transaction.atomic():
        Scene.objects.select_for_update().get(pk=scene.pk)
        initiative, _created = AventurasInitiative.objects.update_or_create(
            scene=scene, defaults={"tiebreaks": {}, "created_by": access.user}
        )
        initiative.characters.set(characters)
    return initiative


def initiative_clear(*, scene: Scene, access: Access) -> None:
    _require_gm(access)
    deleted, _rows = AventurasInitiative.objects.filter(scene=scene).delete()
    if not deleted:
        raise ValidationError(_("Esta escena no tiene orden de iniciativa."), code="none")


def _combatant(character: Character) -> Combatant:
    sheet = character.aventuras
    # A20 — the scores rolled (2 if not highlighted); GM characters have no hero points.
    return Combatant(
        name=str(character.pk),
        espabilado=sheet.dice_for("espabilado"),
        cachas=sheet.dice_for("cachas"),
        hero_points=sheet.hero_points if sheet.is_hero and not character.is_npc else None,
    )


# ``AventurasInitiative.tiebreaks`` holds, per character id (text), the
# table roll ids of its tie-break dice, one per round; and under AGREED the
# orders the GM set without dice (A20 «se pongan de acuerdo»): a list of
# lists of character ids, first to act first.
AGREED = "acordado"


def _die_values(tiebreaks: dict, entries: dict[int, int]) -> dict[int, tuple[int, ...]]:
    return {
        int(k): tuple(entries[pk] for pk in ids if pk in entries)
        for k, ids in tiebreaks.items()
        if k != AGREED and k.isdigit()
    }


def _split(members: list[Character], dice: dict[int, tuple[int, ...]], agreed: list[list[int]], rnd: int = 0):
    """A20 — a tie left at the end, settled round by round: an order the GM
    set for exactly these characters decides at once; otherwise, once every
    one of them has its die of round ``rnd``, higher goes first and equal
    dice go on to the next round. Yields (members, round, agreed)."""
    if len(members) == 1:
        yield members, rnd, False
        return
    ids = {c.pk for c in members}
    for order in agreed:
        if set(order) == ids:
            by_id = {c.pk: c for c in members}
            for pk in order:
                yield [by_id[pk]], rnd, True
            return
    if not all(len(dice.get(c.pk, ())) > rnd for c in members):
        yield members, rnd, False
        return
    members = sorted(members, key=lambda c: dice[c.pk][rnd], reverse=True)
    sub: list[list[Character]] = []
    for member in members:
        if sub and dice[sub[-1][0].pk][rnd] == dice[member.pk][rnd]:
            sub[-1].append(member)
        else:
            sub.append([member])
    for part in sub:
        yield from _split(part, dice, agreed, rnd + 1)


def initiative_order(initiative: AventurasInitiative | None) -> list[dict[str, Any]] | None:
    """The order, as groups (a group of more than one is a tie still
    standing), each member with its scores, its tie-break dice and whether
    it still has to roll this round (``needs_die``); a group placed by the
    GM's agreed order says so (``agreed``). Two queries."""
    if initiative is None:
        return None
    characters = {
        c.pk: c for c in initiative.characters.select_related("aventuras", "owner").filter(aventuras__isnull=False)
    }
    tiebreaks = initiative.tiebreaks or {}
    roll_ids = [pk for k, ids in tiebreaks.items() if k != AGREED for pk in ids]
    entries = {}
    if roll_ids:
        for tr in TableRoll.objects.filter(pk__in=roll_ids).select_related("latest"):
            entries[tr.pk] = tr
    values = {pk: int(tr.facts.get("die", 0)) for pk, tr in entries.items()}
    dice = _die_values(tiebreaks, values)
    agreed = [list(order) for order in tiebreaks.get(AGREED, []) if isinstance(order, list)]
    groups = []
    for group in aventuras.initiative_order([_combatant(c) for c in characters.values()]):
        for part, rnd, by_agreement in _split([characters[int(c.name)] for c in group], dice, agreed):
            tied = len(part) > 1
            groups.append(
                {
                    "tied": tied,
                    "agreed": by_agreement,
                    "members": [
                        {
                            "character": c,
                            "combatant": _combatant(c),
                            "dice": dice.get(c.pk, ()),
                            "rolls": [entries[pk] for pk in tiebreaks.get(str(c.pk), []) if pk in entries],
                            "needs_die": tied and len(dice.get(c.pk, ())) <= rnd,
                        }
                        for c in part
                    ],
                }
            )
    return groups


def tiebreak_rollers(order: list[dict[str, Any]] | None, access: Access) -> list[Character]:
    """The tied characters this reader rolls a tie-break die for now: each
    player for the tied characters they control, the GM for the GM's and,
    if they wish, for all; only those without their die of this round."""
    waiting = [m["character"] for g in order or [] if g["tied"] for m in g["members"] if m["needs_die"]]
    if access.is_gm:
        return waiting
    return [c for c in waiting if controls(access, c)]


def initiative_tiebreak(*, scene: Scene, access: Access) -> list[TableRoll]:
    """A20 — a d6 through the log for each tied character this user rolls
    for (``tiebreak_rollers``: a player only for their own, the GM for the
    GM's characters or for all), signed as them; higher goes first once
    every tied character has its die (equal dice: roll again)."""
    made = []
    with transaction.atomic():
        initiative = AventurasInitiative.objects.select_for_update().filter(scene=scene).first()
        if initiative is None:
            raise ValidationError(_("Esta escena no tiene orden de iniciativa."), code="none")
        initiative.scene = scene
        order = initiative_order(initiative)
        tied = [m["character"] for g in order if g["tied"] for m in g["members"]]
        if not tied:
            raise ValidationError(_("No hay empates que desempatar."), code="no_tie")
        if not (access.is_gm or any(controls(access, c) for c in tied)):
            raise PermissionDenied(_("Solo la dirección o quien lleva a un personaje empatado tira el desempate."))
        rollers = tiebreak_rollers(order, access)
        if not rollers:
            raise ValidationError(
                _("Ya has tirado el desempate de tus personajes: falta que tiren los demás empatados."),
                code="waiting",
            )
        tiebreaks = dict(initiative.tiebreaks or {})
        for character in rollers:
            table_roll = _tiebreak_roll(scene, access.user, character)
            tiebreaks.setdefault(str(character.pk), []).append(table_roll.pk)
            made.append(table_roll)
        initiative.tiebreaks = tiebreaks
        initiative.save(update_fields=["tiebreaks", "updated_at"])
    return made


def initiative_agree(*, scene: Scene, access: Access, order) -> AventurasInitiative:
    """A20 «se pongan de acuerdo»: the GM sets, without dice, the order of
    one tie still standing (``order``: its characters' ids, first to act
    first, each once). Stored under ``tiebreaks[AGREED]``; shown to all."""
    _require_gm(access)
    try:
        ids = [int(pk) for pk in order]
    except (TypeError, ValueError):
        ids = []
    with transaction.atomic():
        initiative = AventurasInitiative.objects.select_for_update().filter(scene=scene).first()
        if initiative is None:
            raise ValidationError(_("Esta escena no tiene orden de iniciativa."), code="none")
        initiative.scene = scene
        groups = [{m["character"].pk for m in g["members"]} for g in initiative_order(initiative) if g["tied"]]
        if not groups:
            raise ValidationError(_("No hay empates que desempatar."), code="no_tie")
        if len(ids) != len(set(ids)) or set(ids) not in groups:
            raise ValidationError(
                _("Ordena a todos los personajes de un mismo empate, cada uno una sola vez."), code="agreed"
            )
        tiebreaks = dict(initiative.tiebreaks or {})
        tiebreaks[AGREED] = [*tiebreaks.get(AGREED, []), ids]
        initiative.tiebreaks = tiebreaks
        initiative.save(update_fields=["tiebreaks", "updated_at"])
    return initiative


def _tiebreak_roll(scene: Scene, user, character: Character) -> TableRoll:
    what = _("Desempate de iniciativa: %(name)s") % {"name": character.name}

    def read(dice: list[int]) -> dict[str, Any]:
        # A plain d6 (no game system reads it): higher goes first.
        return {"what": what[:200], "initiative_tiebreak": dice[0]}

    entry = roll_append(
        campaign=scene.campaign,
        user=user,
        spec="1d6",
        purpose=what[:200],
        read=read,
        character=character,
        scene=scene,
    )
    return TableRoll.objects.create(
        campaign=scene.campaign,
        scene=scene,
        first=entry,
        latest=entry,
        kind="tiebreak",
        owner=user,
        character=character,
        facts={"die": entry.signed_game["initiative_tiebreak"]},
    )
