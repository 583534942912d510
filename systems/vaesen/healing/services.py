"""Treatment, healing and recovery (V28–V30), each a test through the signed
log whose effects go onto the sheets through the sheet services (a
``SheetEvent`` each: who, when, why, the roll).

- Treatment of a critical injury (V28): Medicina for a physical injury,
  Inspiración for a mental one, before its time limit (the GM judges it: the
  limit is the table's text). Success ends Broken of the injury's kind and
  each extra success heals one more condition of that kind; the injury is
  marked treated.
- Healing (V29): a day in a safe place; Medicina heals other characters'
  physical conditions (never the healer's own), Inspiración mental ones;
  three conditions per success (``rules.vaesen.conditions_healed``), Broken
  included, shared among the patients in turn (Broken first, then the last
  condition marked); one healing roll per healer and kind of condition a day,
  one healer per kind of condition per patient a day, and no healer is a
  patient the same day.
- Recovery at HQ (V30): Físico + Precisión or Lógica + Empatía
  (``rules.vaesen.recovery_pool``); each success cures a defect or makes an
  insight permanent, which the player then writes on the sheet.

A failed treatment or healing test may be pushed from its card (the push
service); a success after the push is applied with ``apply_effects``.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from campaigns.models import Scene
from campaigns.permissions import Access, campaign_access
from rolls.services import seed_used
from rules import vaesen
from sheets.models import Character
from sheets.permissions import can_play_character
from systems.vaesen.models import VaesenInjury
from systems.vaesen.rolls.services import (
    ATTRIBUTE_LABELS,
    PoolSetup,
    broken_refusal,
    lock_table_roll,
    pool_setup,
    signed_test,
    table_test,
)
from systems.vaesen.sheet.services import apply_conditions, injury_treated, kind_word
from table.models import TableRoll

TREATMENT = "treatment"
HEALING = "healing"
RECOVERY = "recovery"
# V28/V29 — the skill that cares for each kind of condition.
CARE_SKILL = {vaesen.ConditionKind.PHYSICAL: "Medicina", vaesen.ConditionKind.MENTAL: "Inspiración"}
SKILL_KIND = {skill: kind for kind, skill in CARE_SKILL.items()}
RECOVERY_ATTRIBUTES = {
    vaesen.ConditionKind.PHYSICAL: ("físico", "precisión"),
    vaesen.ConditionKind.MENTAL: ("lógica", "empatía"),
}


def _check_actor(actor, campaign, healer: Character) -> Access:
    access = campaign_access(actor, campaign)
    if not can_play_character(access, healer):
        raise PermissionDenied(_("Solo la dirección o quien lleva a %(name)s tira por él.") % {"name": healer.name})
    return access


def _check_scene(scene: Scene, *characters: Character) -> None:
    if scene.status == Scene.Status.ARCHIVED:
        raise ValidationError(_("La escena está archivada."))
    for character in characters:
        if not character.is_in_play(scene.campaign) or getattr(character, "vaesen", None) is None:
            raise ValidationError(_("%(name)s no es un personaje de esta partida.") % {"name": character.name})
        if character.vaesen.uses_resistance:
            raise ValidationError(
                _("%(name)s no sufre estados: recupera Resistencia, no se cura así.") % {"name": character.name}
            )


def _heal_in_turn(conditions: vaesen.Conditions, kind, count: int) -> tuple[vaesen.Conditions, list[str]]:
    """Heal up to ``count`` of ``kind``: Broken first (V29: it counts as one),
    then the conditions from the last of the text's order."""
    healed: list[str] = []
    if count and conditions.broken(kind):
        conditions = vaesen.heal(conditions, kind, broken=True)
        healed.append(_("Derrotado"))
        count -= 1
    marked = [c for c in reversed(vaesen.CONDITION_NAMES[kind]) if c in conditions.of(kind)][:count]
    if marked:
        conditions = vaesen.heal(conditions, kind, marked)
        healed += marked
    return conditions, healed


# --- treatment of a critical injury (V28) ---------------------------------------------


def treatment_roll(
    *, scene: Scene, actor, healer: Character, injury: VaesenInjury, client_seed: str | None = None
) -> TableRoll:
    """The healer's Medicina (physical injury) or Inspiración (mental) test
    on the patient's untreated critical injury; applied at once on success."""
    patient = injury.sheet.character
    _check_actor(actor, scene.campaign, healer)
    _check_scene(scene, healer, patient)
    if injury.treated:
        raise ValidationError(_("Esa herida crítica ya está tratada."), code="injury")
    kind = vaesen.ConditionKind(injury.kind)
    skill = CARE_SKILL[kind]
    with transaction.atomic():
        table_roll = table_test(
            campaign=scene.campaign,
            user=actor,
            setup=pool_setup(healer, skill=skill),
            purpose=(_("Tratar «%(injury)s» de %(patient)s") % {"injury": injury.name, "patient": patient.name})[:200],
            character=healer,
            scene=scene,
            client_seed=client_seed,
            kind=TREATMENT,
            game={"test": TREATMENT},
            facts={"injury": injury.pk, "patient": patient.pk, "care": kind.value},
        )
        if table_roll.kind != TREATMENT or table_roll.facts.get("injury") != injury.pk:
            raise seed_used()
        if table_roll.facts["success"]:
            return apply_effects(table_roll=table_roll, user=actor, is_gm=campaign_access(actor, scene.campaign).is_gm)
    return table_roll


# --- healing conditions (V29) --------------------------------------------------------------


def _lock_characters(pks) -> dict[int, Character]:
    """The characters' rows, locked until the transaction ends, in the order
    of their keys (two healers sharing a patient queue, never deadlock), with
    their sheets read after the lock (what the last writer committed)."""
    keys = sorted(set(pks))
    # The bare rows first: a join read under the lock could be the one from
    # before the other writer's commit (PostgreSQL re-reads only the locked rows).
    list(Character.objects.select_for_update().filter(pk__in=keys).order_by("pk").values_list("pk", flat=True))
    return {c.pk: c for c in Character.objects.filter(pk__in=keys).select_related("vaesen").order_by("pk")}


def _today_refusal(campaign, healer: Character, kind: vaesen.ConditionKind, patients: list[Character]) -> str | None:
    """V29 — what today's healing rolls of the campaign forbid: a second roll
    of the healer for this kind, a second healer of this kind for a patient,
    and healing while being treated (or being treated while healing).
    Locks the healer's and the patients' rows first (in the caller's
    transaction): two healers cannot both pass this for one patient."""
    _lock_characters([healer.pk, *(p.pk for p in patients)])
    today = timezone.localdate()
    rolls = list(
        TableRoll.objects.filter(campaign=campaign, kind=HEALING, created_at__date=today).values_list(
            "character_id", "facts"
        )
    )
    if any(healer_id == healer.pk and facts.get("care") == kind.value for healer_id, facts in rolls):
        return _("%(name)s ya ha hecho hoy su tirada de curación de estados %(kind)s.") % {
            "name": healer.name,
            "kind": kind_word(kind, agrees="estados"),
        }
    if any(healer.pk in (facts.get("patients") or []) for _id, facts in rolls):
        return _("%(name)s está hoy en tratamiento: no puede curar a nadie.") % {"name": healer.name}
    healers_today = {healer_id for healer_id, _facts in rolls}
    for patient in patients:
        if patient.pk in healers_today:
            return _("%(name)s ha curado hoy: no puede ser tratado a la vez.") % {"name": patient.name}
        if any(patient.pk in (facts.get("patients") or []) and facts.get("care") == kind.value for _id, facts in rolls):
            return _("%(name)s ya ha recibido hoy curación de estados %(kind)s.") % {
                "name": patient.name,
                "kind": kind_word(kind, agrees="estados"),
            }
    return None


def healing_roll(
    *, scene: Scene, actor, healer: Character, skill: str, patients: list[Character], client_seed: str | None = None
) -> TableRoll:
    """V29 — a day's healing: Medicina (physical) or Inspiración (mental) for
    the patients, never the healer; once a day per healer and kind. Applied
    at once on success."""
    if skill not in SKILL_KIND:
        raise ValidationError(_("Se cura con Medicina (estados físicos) o con Inspiración (mentales)."), code="skill")
    kind = SKILL_KIND[skill]
    _check_actor(actor, scene.campaign, healer)
    if not patients:
        raise ValidationError(_("Elige al menos un paciente."), code="patients")
    if any(p.pk == healer.pk for p in patients):
        raise ValidationError(
            _("%(name)s no puede curarse a sí mismo ni ser tratado mientras cura.") % {"name": healer.name},
            code="patients",
        )
    _check_scene(scene, healer, *patients)
    with transaction.atomic():
        refusal = _today_refusal(scene.campaign, healer, kind, patients)
        if refusal is not None:
            raise ValidationError(refusal, code="today")
        names = ", ".join(p.name for p in patients)
        table_roll = table_test(
            campaign=scene.campaign,
            user=actor,
            setup=pool_setup(healer, skill=skill),
            purpose=(_("Curar (%(skill)s) a %(names)s") % {"skill": skill, "names": names})[:200],
            character=healer,
            scene=scene,
            client_seed=client_seed,
            kind=HEALING,
            game={"test": HEALING},
            facts={"patients": [p.pk for p in patients], "care": kind.value},
        )
        if table_roll.kind != HEALING:
            raise seed_used()
        if table_roll.facts["success"]:
            return apply_effects(table_roll=table_roll, user=actor, is_gm=campaign_access(actor, scene.campaign).is_gm)
    return table_roll


# --- applying a success (also after a push) ------------------------------------------------


def apply_refusal(table_roll: TableRoll, user, *, is_gm: bool) -> str | None:
    facts = table_roll.facts or {}
    if table_roll.kind not in (TREATMENT, HEALING):
        return _("Esta tirada no es de tratamiento ni de curación.")
    if table_roll.owner_id != getattr(user, "pk", None) and not is_gm:
        return _("Solo quien tiró o la dirección aplican la curación.")
    if not facts.get("success"):
        return _("La tirada falló: no cura nada.")
    if facts.get("applied"):
        return _("Esta curación ya está aplicada.")
    return None


def apply_effects(*, table_roll: TableRoll, user, is_gm: bool) -> TableRoll:
    """Put a successful treatment (V28) or healing (V29) on the sheets, once."""
    with transaction.atomic():
        tr = lock_table_roll(table_roll)
        refusal = apply_refusal(tr, user, is_gm=is_gm)
        if refusal is not None:
            raise ValidationError(refusal, code="no_apply")
        entry = tr.latest
        test = signed_test(entry.signed_game, entry.entry["dice"])
        kind = vaesen.ConditionKind(tr.facts["care"])
        healed: dict[str, list[str]] = {}
        if tr.kind == TREATMENT:
            # The patient's row locked before its conditions are read: no lost update.
            patient = _lock_characters([tr.facts["patient"]])[tr.facts["patient"]]
            ends_broken, extra = vaesen.treat_critical_injury(test.successes)
            conditions = patient.vaesen.conditions()
            names: list[str] = []
            if ends_broken and conditions.broken(kind):
                conditions = vaesen.heal(conditions, kind, broken=True)
                names.append(_("Derrotado"))
            conditions, more = _heal_in_turn(conditions, kind, extra) if extra else (conditions, [])
            names += more
            reason = _("Tratamiento: %(purpose)s") % {"purpose": entry.purpose}
            if names:
                apply_conditions(patient, conditions, actor=user, reason=reason, post=tr.post, roll=entry)
            injury = VaesenInjury.objects.filter(pk=tr.facts["injury"], treated=False).first()
            if injury is not None:
                injury_treated(character=patient, actor=user, injury_id=injury.pk, treated=True, reason=reason)
            healed[patient.name] = names
        else:
            left = vaesen.conditions_healed(test.successes)
            # The patients' rows locked (by key) before their conditions are read: no lost update.
            patients = list(_lock_characters(tr.facts["patients"]).values())
            state = {p.pk: p.vaesen.conditions() for p in patients}
            names_by = {p.pk: [] for p in patients}
            # V29 — shared among the patients, one at a time in turn.
            while left:
                progressed = False
                for p in patients:
                    if not left:
                        break
                    state[p.pk], one = _heal_in_turn(state[p.pk], kind, 1)
                    if one:
                        names_by[p.pk] += one
                        left -= 1
                        progressed = True
                if not progressed:
                    break
            reason = _("Curación: %(purpose)s") % {"purpose": entry.purpose}
            for p in patients:
                if names_by[p.pk]:
                    apply_conditions(p, state[p.pk], actor=user, reason=reason, post=tr.post, roll=entry)
                healed[p.name] = names_by[p.pk]
        tr.facts = {**tr.facts, "applied": True, "healed": healed, "can_push": False}
        tr.save(update_fields=["facts"])
        return tr


# --- recovery at HQ (V30) -----------------------------------------------------------------


def recovery_setup(character: Character, kind: vaesen.ConditionKind) -> PoolSetup:
    first, second = RECOVERY_ATTRIBUTES[kind]
    sheet = character.vaesen
    parts = tuple((str(ATTRIBUTE_LABELS[a]), sheet.attribute(a)) for a in (first, second))
    return PoolSetup(
        pool=max(vaesen.recovery_pool(parts[0][1], parts[1][1]), 1),
        breakdown=parts,
        what=" + ".join(label for label, _value in parts),
        needed=1,
    )


def recovery_roll(*, scene: Scene, actor, character: Character, kind: str, client_seed: str | None = None) -> TableRoll:
    """V30 — back at HQ: Físico + Precisión (physical) or Lógica + Empatía
    (mental); each success cures a defect or makes an insight permanent."""
    try:
        kind = vaesen.ConditionKind(kind)
    except ValueError:
        raise ValidationError(_("Elige la recuperación física o la mental."), code="kind") from None
    _check_actor(actor, scene.campaign, character)
    if character.is_npc:
        raise ValidationError(_("Solo los personajes jugadores hacen la tirada de recuperación."))
    _check_scene(scene, character)
    # V11 — Broken by physical harm, every test fails by itself: nothing is rolled.
    if (refusal := broken_refusal(character)) is not None:
        raise ValidationError(refusal, code="kind")
    table_roll = table_test(
        campaign=scene.campaign,
        user=actor,
        setup=recovery_setup(character, kind),
        purpose=(
            _("Recuperación en el cuartel (%(kind)s) de %(name)s")
            % {"kind": kind_word(kind, agrees="herida"), "name": character.name}
        )[:200],
        character=character,
        scene=scene,
        client_seed=client_seed,
        kind=RECOVERY,
        game={"test": RECOVERY},
        facts={"care": kind.value},
    )
    if table_roll.kind != RECOVERY:
        raise seed_used()
    return table_roll


def scene_rolls(scene: Scene, *, limit: int = 30) -> list[TableRoll]:
    return list(
        TableRoll.objects.filter(scene=scene, kind__in=(TREATMENT, HEALING, RECOVERY))
        .select_related("first__user", "latest__user", "character", "owner")
        .order_by("-id")[:limit]
    )


def effects_of(table_roll: TableRoll) -> dict[str, Any]:
    return {"applied": bool(table_roll.facts.get("applied")), "healed": table_roll.facts.get("healed") or {}}
