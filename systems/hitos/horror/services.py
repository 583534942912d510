"""Horror at the table (H77–H81): the GM exposes characters to a level of
horror, each one tests Entereza through the signed log, and the loss read from
the same dice goes onto the sanity meter.

Every number comes from ``rules.hitos_health``; the roll from
``systems.hitos.checks.services.table_check``; the meter change (and its trauma test, H77) from
``systems.hitos.sheet.services.meter_apply``, which logs it on the sheet.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from campaigns.models import Scene
from campaigns.permissions import Access, campaign_access
from rolls.services import derived_seed, seed_used
from rules import hitos
from rules.hitos_health import HORROR_LEVELS, HorrorLevel, horror, horror_level, horror_test_due, shift_horror
from sheets.models import Character
from sheets.permissions import can_play_character
from systems.hitos import notify
from systems.hitos.checks.services import CheckSetup, roll_modifier, table_check
from systems.hitos.models import HorrorExposure, HorrorTest, TableRollKind
from systems.hitos.reading import campaign_options
from systems.hitos.sheet.services import MENTAL, meter_apply

SHIFTS = (-1, 0, 1)

# The level names of rules.hitos_health.HORROR_LEVELS, for the catalogue
# (the pages translate them with gettext at run time).
HORROR_LEVEL_NAMES = (
    gettext_noop("Desasosiego"),
    gettext_noop("Estupor"),
    gettext_noop("Miedo"),
    gettext_noop("Pánico"),
    gettext_noop("Horror"),
)


def level_choices() -> list[tuple[str, str]]:
    """The levels for a select, with what the rules say of each (H79):
    «Miedo — dificultad 15 // pierde m o M»."""
    return [(level.key, level_text(level)) for level in HORROR_LEVELS]


def level_text(level: HorrorLevel) -> str:
    return _("%(label)s — dificultad %(difficulty)s // pierde %(success)s o %(failure)s") % {
        "label": _(level.label),
        "difficulty": level.difficulty,
        "success": level.success_loss,
        "failure": level.failure_loss,
    }


def can_roll_exposure(access: Access, exposure: HorrorExposure) -> bool:
    """The GM rolls for anyone; a player only for their own character."""
    return can_play_character(access, exposure.character)


def effective_level(exposure: HorrorExposure) -> HorrorLevel:
    """H81 / Q11 — the test's level moved by the character's aspect shift."""
    return shift_horror(exposure.test.level, exposure.shift)


def exposure_setup(character: Character) -> CheckSetup:
    """Entereza alone. The health and mental penalties (H54, H83) weigh on
    "acciones" and Defensa; an exposure test is a resistance test, rolled like
    the trauma test of H77 (which ``meter_apply`` also rolls with Entereza
    alone), so no penalty is added."""
    label = _("Entereza")
    entereza = character.hitos.entereza
    return CheckSetup(entereza, ((label, entereza),), label)


def horror_start(
    *,
    scene: Scene,
    actor,
    level: str,
    description: str,
    exposures: Iterable[tuple[Character, int, str]],
) -> HorrorTest:
    """The GM exposes characters to horror. ``exposures`` are (character,
    shift −1/0/+1, the aspect that shifts it). Side effects: one ``HorrorTest``
    and one ``HorrorExposure`` per character; nothing is rolled yet."""
    campaign = scene.campaign
    if not campaign_access(actor, campaign).is_gm:
        raise PermissionDenied(_("Solo la dirección expone a los personajes al horror."))
    if scene.status == Scene.Status.ARCHIVED:
        raise ValidationError(_("La escena está archivada."))
    try:
        chosen = horror_level(level)
    except ValueError:
        raise ValidationError(_("Elige un nivel de horror."), code="level") from None
    description = " ".join((description or "").split())
    if not description:
        raise ValidationError(_("Describe qué provoca el horror."), code="description")
    rows: list[HorrorExposure] = []
    seen: set[int] = set()
    for character, shift, reason in exposures:
        if not character.is_in_play(campaign):
            raise ValidationError(_("%(name)s no es un personaje de esta partida.") % {"name": character.name})
        if character.pk in seen:
            raise ValidationError(_("%(name)s está dos veces.") % {"name": character.name})
        seen.add(character.pk)
        if shift not in SHIFTS:
            raise ValidationError(_("Un aspecto mueve el nivel un paso: −1, 0 o +1."), code="shift")
        reason = " ".join((reason or "").split()) if shift else ""
        if shift and not reason:
            raise ValidationError(
                _("Indica el aspecto que cambia el nivel de %(name)s.") % {"name": character.name}, code="reason"
            )
        rows.append(HorrorExposure(character=character, shift=shift, shift_reason=reason[:300]))
    if not rows:
        raise ValidationError(_("Elige al menos un personaje expuesto."), code="no_characters")
    with transaction.atomic():
        test = HorrorTest(campaign=campaign, scene=scene, created_by=actor, level=chosen.key, description=description)
        test.full_clean()
        test.save()
        for row in rows:
            row.test = test
        HorrorExposure.objects.bulk_create(rows)
        # Each exposed player character's player is asked to roll Entereza.
        notify.horror_exposed(test, [row.character for row in rows])
    return test


def trauma_seed(client_seed: str | None) -> str | None:
    """The trauma test's seed (H77): derived from the exposure's browser seed
    (a campaign's seeds are unique; 64 characters at most), as
    ``systems.hitos.opposed`` derives its rounds'. None without one."""
    return derived_seed(client_seed, "1")


def exposure_roll(*, exposure: HorrorExposure, actor, client_seed: str | None = None) -> HorrorExposure:
    """The character's Entereza test against the (shifted) level, once.

    Side effects, in one transaction: the exposure row is locked; with
    Degeneración ≥ 1 against Desasosiego (H80) it is only marked exempt.
    Otherwise one ``horror`` roll in the log; the loss read from its dice
    (H78) goes through ``meter_apply`` (a ``SheetEvent`` linked to the roll,
    and the trauma test of H77 when the loss reaches Entereza); the player
    is told when someone else rolled for their character.

    ``client_seed`` (the page's browser seed; the server makes them without
    one) rolls the test; the trauma test takes a seed derived from it
    (``trauma_seed``). The same form sent again (the same seed, which rolled
    this exposure) returns the exposure as the first request left it."""
    with transaction.atomic():
        locked = (
            HorrorExposure.objects.select_for_update(of=("self",))
            .select_related("test__campaign", "test__scene", "character__campaign", "character__owner")
            .get(pk=exposure.pk)
        )
        test, character = locked.test, locked.character
        campaign = test.campaign
        if not can_roll_exposure(campaign_access(actor, campaign), locked):
            raise PermissionDenied(
                _("Solo la dirección o quien lleva a %(name)s tira por él.") % {"name": character.name}
            )
        if locked.resolved_at is not None:
            if client_seed and locked.table_roll_id is not None and locked.table_roll.first.client_seed == client_seed:
                return locked
            raise ValidationError(
                _("%(name)s ya ha hecho esta prueba de horror.") % {"name": character.name}, code="done"
            )
        # Lock order, as everywhere at the table: the character's row before
        # the roll log's head (activations and damage take them in that order);
        # its sheet is read after the lock.
        Character.objects.select_for_update(of=("self",)).filter(pk=character.pk).values_list("pk").first()
        level = effective_level(locked)
        if not horror_test_due(level, character.hitos.degeneracion):
            locked.exempt = True
            locked.loss = 0
            locked.resolved_at = timezone.now()
            locked.save(update_fields=["exempt", "loss", "resolved_at"])
            return locked
        setup = exposure_setup(character)
        table_roll = table_check(
            campaign=campaign,
            user=actor,
            setup=setup,
            purpose=_("Prueba de horror de %(name)s (%(level)s): %(description)s")
            % {"name": character.name, "level": _(level.label), "description": test.description},
            difficulty=level.difficulty,
            character=character,
            scene=test.scene,
            kind=TableRollKind.HORROR,
            client_seed=client_seed,
        )
        # A browser seed already spent on another roll comes back as that roll.
        if (
            table_roll.kind != TableRollKind.HORROR
            or table_roll.character_id != character.pk
            or HorrorExposure.objects.filter(table_roll=table_roll).exists()
        ):
            raise seed_used()
        entry = table_roll.first
        outcome = horror(
            test.level,
            hitos.HitosRoll(tuple(entry.entry["dice"])),
            entereza=character.hitos.entereza,
            degeneracion=character.hitos.degeneracion,
            shift=locked.shift,
            modifier=setup.modifier - character.hitos.entereza,
            options=campaign_options(campaign),
        )
        lost_before = character.hitos.mental_meter.lost
        lost = 0
        if outcome.loss > 0:
            change = meter_apply(
                character=character,
                actor=actor,
                meter=MENTAL,
                action="imbalance",
                amount=outcome.loss,
                reason=_("Horror (%(level)s): %(description)s")
                % {"level": _(level.label), "description": test.description},
                scene=test.scene,
                client_seed=trauma_seed(client_seed),
            )
            event = change.event
            if event.roll_id is None:
                # Without a trauma test the change points at the exposure roll itself.
                event.roll = entry
                event.save(update_fields=["roll"])
            lost = change.character.hitos.mental_meter.lost - lost_before
        locked.table_roll = table_roll
        locked.loss = outcome.loss
        locked.resolved_at = timezone.now()
        locked.save(update_fields=["table_roll", "loss", "resolved_at"])
        if lost > 0 and actor.pk != character.owner_id:
            notify.character_harmed(character, what="horror", amount=lost, url=exposure_url(locked))
    return locked


def exposure_url(exposure: HorrorExposure) -> str:
    test = exposure.test
    return reverse("hitos:horror", args=[test.campaign.slug, test.scene_id]) + f"#exposicion-{exposure.pk}"


def exposure_outcome(exposure: HorrorExposure):
    """``rules.hitos_health.HorrorOutcome`` of a rolled exposure, read again
    from the stored dice and the roll's own modifier (for display: the loss
    code and the loss)."""
    table_roll = exposure.table_roll
    if table_roll is None:
        return None
    return horror(
        exposure.test.level,
        hitos.HitosRoll(tuple(table_roll.first.entry["dice"])),
        entereza=roll_modifier(table_roll),
        shift=exposure.shift,
        options=campaign_options(exposure.test.campaign),
    )
