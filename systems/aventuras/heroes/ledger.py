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
) -> HeroMove:
    """Spend one of ``character``'s points on ``use`` in ``turn`` (A22–A24),
    or, ``with_experience``, buy an instant point with 2 XP and spend it at
    once (A28). Must run inside the caller's transaction; refuses in Spanish
    (``ValidationError``), with nothing changed, when the character has no
    point (or no 2 XP) or already spent one on this use this turn."""
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
    sheet.hero_points, sheet.experience = hero.points, experience
    sheet.save(update_fields=["hero_points", "experience"])
    try:
        with transaction.atomic():
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
    _history(character, by, move, summary + (f": {detail}" if detail else ""), why)
    return move


def _history(character: Character, by, move: HeroMove, summary: str, why: str) -> None:
    """The move in the sheet's history too (who, when, what, why)."""
    sheet_log(
        character,
        character.campaign,
        by,
        AventurasEvent.HERO,
        summary,
        reason=why,
        after={"hero_points": move.points_after},
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
