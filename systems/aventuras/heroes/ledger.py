"""The hero point ledger (A21–A28): every move of a character's points is a
``HeroMove`` row (who, when, why, the points after it), written in the
caller's transaction with the sheet's row locked, so one point can never be
spent twice.

A24 — "any number of points per turn, each on a different use". In play by
post a character's **turn is its latest post in the scene**: a point spent
on a roll belongs to the roll's post, any other spend to the character's
latest post in the scene (or to the scene itself before its first post).
The rule is checked by ``rules.aventuras.spend`` and kept by the database
(``aventuras_one_use_per_turn``).

Lock order, as at every flow of the table: the table roll's row (the caller
takes it), then the sheet's row here, then the roll log's head.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from campaigns.models import Post
from rules import aventuras
from rules.aventuras import HeroGain, HeroSpend
from sheets.models import Character
from sheets.services import sheet_log
from systems.aventuras.models import AventurasEvent, AventurasSheet, HeroMove


def use_word(use: HeroSpend | str) -> str:
    """The use as people read it (translated at call time)."""
    words = {
        HeroSpend.ADD_DICE: _("añadir dos dados"),
        HeroSpend.REROLL: _("repetir dados"),
        HeroSpend.IGNORE_STATE: _("ignorar un estado"),
        HeroSpend.RECOVER: _("recuperarte"),
        HeroSpend.FEAT: _("activar una proeza"),
    }
    return words[HeroSpend(use)]


def post_turn(post_id: int) -> str:
    return f"post:{post_id}"


def turn_of(character: Character, scene) -> str:
    """A24 — the character's turn in ``scene``: its latest post there, or the
    scene itself before its first post."""
    if scene is None:
        return ""
    latest = (
        Post.objects.filter(scene=scene, character=character)
        .order_by("-created_at", "-id")
        .values_list("pk", flat=True)
    ).first()
    return post_turn(latest) if latest is not None else f"scene:{scene.pk}"


def locked_sheet(character: Character) -> AventurasSheet:
    """The character's sheet, locked for the rest of the transaction."""
    sheet = AventurasSheet.objects.select_for_update().filter(pk=character.pk).first()
    if sheet is None:
        raise ValidationError(
            _("%(name)s no tiene ficha de Hora de Aventuras.") % {"name": character.name}, code="no_sheet"
        )
    if not sheet.is_hero:
        raise ValidationError(
            _("%(name)s es un personaje del director: no tiene puntos de Héroe.") % {"name": character.name},
            code="no_hero_points",
        )
    return sheet


def _used(character: Character, turn: str) -> frozenset[HeroSpend]:
    if not turn:
        return frozenset()
    uses = HeroMove.objects.filter(character=character, turn=turn, kind=HeroMove.Kind.SPEND).values_list(
        "use", flat=True
    )
    return frozenset(HeroSpend(u) for u in uses)


def spend(
    character: Character,
    use: HeroSpend,
    *,
    by,
    turn: str,
    scene=None,
    table_roll=None,
    detail: str = "",
    why: str = "",
    with_experience: bool = False,
    facts: dict | None = None,
) -> HeroMove:
    """Spend one of ``character``'s points on ``use`` in ``turn`` (A22–A24),
    or, ``with_experience``, buy an instant point with 2 XP and spend it at
    once (A28). Must run inside the caller's transaction; refuses in Spanish
    (``ValidationError``), with nothing changed, when the character has no
    point (or no 2 XP) or already spent one on this use this turn.
    ``facts`` go into the move's ``SheetEvent.after`` (the state ignored …)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("ledger.spend runs inside the caller's transaction")
    use = HeroSpend(use)
    sheet = locked_sheet(character)
    hero = aventuras.HeroPoints(sheet.hero_points, _used(character, turn))
    experience = sheet.experience
    try:
        if with_experience:
            hero, experience = aventuras.spend_experience(hero, sheet.experience, use)
        else:
            hero = aventuras.spend(hero, use)
    except ValueError:
        if use in hero.used_this_turn:
            raise ValidationError(
                _("Ya has gastado un punto de Héroe en «%(use)s» este turno: cada punto, en un uso distinto.")
                % {"use": use_word(use)},
                code="same_use",
            ) from None
        if with_experience:
            raise ValidationError(
                _("Hacen falta dos puntos de Experiencia para un punto de Héroe instantáneo; %(name)s tiene %(xp)d.")
                % {"name": character.name, "xp": sheet.experience},
                code="no_experience",
            ) from None
        raise ValidationError(
            _("%(name)s no tiene puntos de Héroe que gastar.") % {"name": character.name}, code="no_points"
        ) from None
    spent_xp = sheet.experience - experience
    try:
        # The sheet and the move in one savepoint: a refused move leaves the
        # sheet as it was even when the caller goes on with its transaction.
        with transaction.atomic():
            sheet.hero_points, sheet.experience = hero.points, experience
            sheet.save(update_fields=["hero_points", "experience"])
            move = HeroMove.objects.create(
                campaign_id=character.campaign_id,
                character=character,
                scene=scene,
                kind=HeroMove.Kind.SPEND,
                use=use.value,
                delta=0 if with_experience else -1,
                points_after=hero.points,
                experience_spent=spent_xp,
                turn=turn,
                table_roll=table_roll,
                detail=detail[:300],
                why=why[:300],
                by=by,
            )
    except IntegrityError:
        # Another request spent a point on this use this turn first.
        raise ValidationError(
            _("Ya has gastado un punto de Héroe en «%(use)s» este turno: cada punto, en un uso distinto.")
            % {"use": use_word(use)},
            code="same_use",
        ) from None
    summary = _("Gasta un punto de Héroe en «%(use)s»") % {"use": use_word(use)}
    if with_experience:
        summary = _("Compra un punto de Héroe con 2 PX y lo gasta en «%(use)s»") % {"use": use_word(use)}
    _history(character, by, move, summary + (f": {detail}" if detail else ""), why, facts=facts)
    return move


def _history(character: Character, by, move: HeroMove, summary: str, why: str, *, facts: dict | None = None) -> None:
    """The move in the sheet's history too (who, when, what, why; ``facts``:
    what the move was for, kept beside the points after it)."""
    sheet_log(
        character,
        character.campaign,
        by,
        AventurasEvent.HERO,
        summary,
        reason=why,
        after={**(facts or {}), "hero_points": move.points_after},
    )


def gain(
    character: Character,
    *,
    by,
    kind: str = HeroMove.Kind.GAIN,
    reason: HeroGain | str = "",
    points: int = 1,
    scene=None,
    detail: str = "",
    why: str = "",
    approved_by=None,
) -> HeroMove:
    """Add ``points`` to ``character`` (A21 no cap; A25–A27 and gifts), in the
    caller's transaction with the sheet locked."""
    sheet = locked_sheet(character)
    if reason:
        hero = aventuras.gain(aventuras.HeroPoints(sheet.hero_points), HeroGain(reason), points)
    else:
        hero = aventuras.HeroPoints(sheet.hero_points + points)
    sheet.hero_points = hero.points
    sheet.save(update_fields=["hero_points"])
    move = HeroMove.objects.create(
        campaign_id=character.campaign_id,
        character=character,
        scene=scene,
        kind=kind,
        reason=HeroGain(reason).value if reason else "",
        delta=points,
        points_after=hero.points,
        detail=detail[:300],
        why=why[:300],
        by=by,
        approved_by=approved_by,
    )
    summary = _("%(points)+d puntos de Héroe (%(kind)s)") % {"points": points, "kind": move.get_kind_display()}
    _history(character, by, move, summary + (f": {detail}" if detail else ""), why)
    return move


def give(
    giver: Character, receiver: Character, *, by, approved_by, scene=None, why: str = ""
) -> tuple[HeroMove, HeroMove]:
    """A26 — ``giver`` gives one of their points to ``receiver`` (the GM
    approved it: ``approved_by``), in the caller's transaction: both sheets
    locked in the order of their keys (two crossed gifts never deadlock),
    giver −1 (``GIVE``) and receiver +1 (``RECEIVE``); refused in Spanish,
    with nothing changed, when the giver has no point left."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("ledger.give runs inside the caller's transaction")
    if giver.pk == receiver.pk:
        raise ValidationError(_("Un héroe no puede darse un punto de Héroe a sí mismo."), code="self_gift")
    sheets = {c.pk: locked_sheet(c) for c in sorted((giver, receiver), key=lambda c: c.pk)}
    giver_sheet, receiver_sheet = sheets[giver.pk], sheets[receiver.pk]
    try:
        gives, gets = aventuras.give(
            aventuras.HeroPoints(giver_sheet.hero_points), aventuras.HeroPoints(receiver_sheet.hero_points)
        )
    except ValueError:
        raise ValidationError(
            _("%(name)s ya no tiene puntos de Héroe que dar.") % {"name": giver.name}, code="no_points"
        ) from None
    moves = []
    for character, sheet, hero, kind, detail in (
        (giver, giver_sheet, gives, HeroMove.Kind.GIVE, _("a %(name)s") % {"name": receiver.name}),
        (receiver, receiver_sheet, gets, HeroMove.Kind.RECEIVE, _("de %(name)s") % {"name": giver.name}),
    ):
        delta = hero.points - sheet.hero_points
        sheet.hero_points = hero.points
        sheet.save(update_fields=["hero_points"])
        move = HeroMove.objects.create(
            campaign_id=character.campaign_id,
            character=character,
            scene=scene,
            kind=kind,
            delta=delta,
            points_after=hero.points,
            detail=detail[:300],
            why=why[:300],
            by=by,
            approved_by=approved_by,
        )
        summary = _("%(points)+d punto de Héroe (%(kind)s)") % {"points": delta, "kind": move.get_kind_display()}
        _history(character, by, move, f"{summary}: {detail}", why)
        moves.append(move)
    return moves[0], moves[1]


def new_adventure(character: Character, *, by, why: str = "") -> HeroMove:
    """A21 — the hero back to exactly the starting points, whatever they had
    (a move of kind ``ADVENTURE`` with the difference), in the caller's
    transaction with the sheet locked."""
    sheet = locked_sheet(character)
    before = sheet.hero_points
    hero = aventuras.new_adventure()
    sheet.hero_points = hero.points
    sheet.save(update_fields=["hero_points"])
    move = HeroMove.objects.create(
        campaign_id=character.campaign_id,
        character=character,
        kind=HeroMove.Kind.ADVENTURE,
        delta=hero.points - before,
        points_after=hero.points,
        why=why[:300],
        by=by,
    )
    summary = _("Nueva aventura: vuelve a tener %(points)d puntos de Héroe") % {"points": hero.points}
    _history(character, by, move, summary, why)
    return move
