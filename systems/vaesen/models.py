"""Vaesen's rows: the sheet (``VaesenSheet`` beside the shared character core)
and its equipment, weapons and critical injuries.

A Vaesen character is the shared core (``sheets.Character``: identity, owner,
PC or NPC, review, notes, history) plus one ``VaesenSheet`` row. Game
arithmetic (conditions, Broken, the dice they cost) is never done here: the
methods hand the stored values to ``rules.vaesen`` and return its answers.
Changes go through ``systems.vaesen.sheet.services``.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

from rules.vaesen import ATTRIBUTES, CONDITION_NAMES, SKILL_ATTRIBUTE, SKILLS, ConditionKind, Conditions


class VaesenEvent(models.TextChoices):
    """Vaesen's own kinds of change in a sheet's history (``SheetEvent.kind``)."""

    CONDITION = "v_condition", _("estados")
    INJURY = "v_injury", _("herida crítica")
    TREATED = "v_treated", _("herida crítica tratada")
    RESISTANCE = "v_resistance", _("Resistencia")


# The attribute fields, in the order of ``rules.vaesen.ATTRIBUTES``.
ATTRIBUTE_FIELDS: dict[str, str] = {
    "físico": "fisico",
    "precisión": "precision",
    "lógica": "logica",
    "empatía": "empatia",
}
ATTRIBUTE_LABELS = {
    "físico": _("Físico"),
    "precisión": _("Precisión"),
    "lógica": _("Lógica"),
    "empatía": _("Empatía"),
}


def validate_d66(value: int) -> None:
    """V13 — a d66 has two digits, each from 1 to 6 (11–16, 21–26 … 61–66)."""
    if value is not None and not (1 <= value // 10 <= 6 and 1 <= value % 10 <= 6 and value < 100):
        raise ValidationError(
            _("Una tirada d66 tiene dos cifras del 1 al 6, como 11, 36 o 66; %(value)s no lo es."),
            code="d66",
            params={"value": value},
        )


SKILL_CHOICES = [(skill, skill) for attribute in ATTRIBUTES for skill in SKILLS[attribute]]
WEAPON_SKILLS = ("Fuerza", "Combate cuerpo a cuerpo", "Combate a distancia")


def _attribute(label):
    # NPCs and creatures may go beyond a player character's 2–5 (the forms say which).
    return models.PositiveSmallIntegerField(label, default=2, validators=[MinValueValidator(1), MaxValueValidator(10)])


class VaesenSheet(models.Model):
    """What a Vaesen sheet holds beyond the shared character core."""

    class NpcKind(models.TextChoices):
        HUMAN = "human", _("PNJ humano")
        ANIMAL = "animal", _("Animal")
        CREATURE = "creature", _("Criatura (vaesen)")

    character = models.OneToOneField(
        "sheets.Character", on_delete=models.CASCADE, primary_key=True, related_name="vaesen"
    )
    # Blank for player characters.
    npc_kind = models.CharField(_("tipo de PNJ"), max_length=8, choices=NpcKind.choices, blank=True)
    archetype = models.CharField(_("arquetipo"), max_length=80, blank=True)
    age = models.PositiveSmallIntegerField(_("edad"), null=True, blank=True, validators=[MaxValueValidator(200)])

    fisico = _attribute(_("Físico"))
    precision = _attribute(_("Precisión"))
    logica = _attribute(_("Lógica"))
    empatia = _attribute(_("Empatía"))
    skills = models.JSONField(_("habilidades"), default=dict, blank=True)

    motivation = models.CharField(_("motivación"), max_length=300, blank=True)
    trauma = models.CharField(_("trauma"), max_length=300, blank=True)
    dark_secret = models.CharField(_("secreto oscuro"), max_length=300, blank=True)
    relationships = models.JSONField(_("relaciones"), default=list, blank=True)
    insights = models.JSONField(_("perspicacias"), default=list, blank=True)
    defects = models.JSONField(_("defectos"), default=list, blank=True)
    talents = models.JSONField(_("talentos"), default=list, blank=True)
    resources = models.PositiveSmallIntegerField(_("Recursos"), default=2, validators=[MaxValueValidator(10)])

    armour = models.CharField(_("armadura"), max_length=80, blank=True)
    armour_protection = models.PositiveSmallIntegerField(_("Protección"), default=0, validators=[MaxValueValidator(10)])
    armour_agility_penalty = models.PositiveSmallIntegerField(
        _("penalización a Agilidad"), default=0, validators=[MaxValueValidator(5)]
    )

    physical_conditions = models.JSONField(_("estados físicos"), default=list, blank=True)
    mental_conditions = models.JSONField(_("estados mentales"), default=list, blank=True)
    broken_physical = models.BooleanField(_("derrotado físicamente"), default=False)
    broken_mental = models.BooleanField(_("derrotado mentalmente"), default=False)
    # V27 — after a failed fear test: Aterrorizado for 1d6 rounds, with the
    # reaction the player chose (Huida, Parálisis, Desmayo, Agresión).
    terrified_rounds = models.PositiveSmallIntegerField(
        _("asaltos aterrorizado"), default=0, validators=[MaxValueValidator(6)]
    )
    terror_reaction = models.CharField(_("reacción al terror"), max_length=12, blank=True)
    # V10 — the critical injuries the sheet's «Sufrir» owes (one kind each,
    # "físico" or "mental"): the GM rolls them from the sheet, or writes them by hand.
    pending_injuries = models.JSONField(_("heridas críticas por tirar"), default=list, blank=True)

    fear = models.PositiveSmallIntegerField(_("Miedo"), null=True, blank=True, validators=[MaxValueValidator(10)])
    resistance = models.PositiveSmallIntegerField(
        _("Resistencia"), null=True, blank=True, validators=[MinValueValidator(1), MaxValueValidator(20)]
    )
    resistance_lost = models.PositiveSmallIntegerField(_("Resistencia perdida"), default=0)
    # V20 read literally (``NpcPenalty.NEXT_TEST``): the points lost since the
    # NPC's last test, the dice its next test loses; a test spends them.
    resistance_unspent = models.PositiveSmallIntegerField(_("Resistencia perdida desde su última prueba"), default=0)

    class Meta:
        verbose_name = _("ficha de Vaesen")
        verbose_name_plural = _("fichas de Vaesen")

    def __str__(self) -> str:
        return str(self.character)

    # --- readings ----------------------------------------------------------------

    def attribute(self, name: str) -> int:
        """The value of an attribute named as in ``rules.vaesen.ATTRIBUTES``."""
        try:
            return getattr(self, ATTRIBUTE_FIELDS[name.strip().lower()])
        except KeyError:
            raise ValueError(f"Atributo desconocido: {name!r}.") from None

    def skill(self, name: str) -> int:
        """The raw value of a skill; 0 when the sheet has none (V4)."""
        if name not in SKILL_ATTRIBUTE:
            raise ValueError(f"Habilidad desconocida: {name!r}.")
        return int(self.skills.get(name, 0) or 0)

    def conditions(self) -> Conditions:
        return Conditions(
            physical=frozenset(self.physical_conditions),
            mental=frozenset(self.mental_conditions),
            broken_physical=self.broken_physical,
            broken_mental=self.broken_mental,
        )

    def set_conditions(self, conditions: Conditions) -> None:
        """Write the four condition fields (in the text's order); does not save."""
        order = CONDITION_NAMES
        self.physical_conditions = [c for c in order[ConditionKind.PHYSICAL] if c in conditions.physical]
        self.mental_conditions = [c for c in order[ConditionKind.MENTAL] if c in conditions.mental]
        self.broken_physical = conditions.broken_physical
        self.broken_mental = conditions.broken_mental

    set_conditions.alters_data = True

    @property
    def uses_resistance(self) -> bool:
        """Human NPCs and animals lose Resistencia instead of taking conditions (V20)."""
        return self.resistance is not None

    @property
    def is_creature(self) -> bool:
        return self.npc_kind == self.NpcKind.CREATURE

    @property
    def resistance_left(self) -> int:
        return max((self.resistance or 0) - self.resistance_lost, 0)

    @property
    def broken(self) -> bool:
        return self.broken_physical or self.broken_mental

    def attribute_rows(self) -> list[dict]:
        """Each attribute with its label, value and skills (name, value), for the pages."""
        return [
            {
                "key": attribute,
                "label": ATTRIBUTE_LABELS[attribute],
                "value": self.attribute(attribute),
                "skills": [(skill, self.skill(skill)) for skill in SKILLS[attribute]],
            }
            for attribute in ATTRIBUTES
        ]


class VaesenItem(models.Model):
    """A piece of equipment: bonus dice (V16) and availability (V31)."""

    sheet = models.ForeignKey(VaesenSheet, on_delete=models.CASCADE, related_name="items")
    name = models.CharField(_("objeto"), max_length=80)
    bonus = models.PositiveSmallIntegerField(_("bonificación"), default=0, validators=[MaxValueValidator(3)])
    skill = models.CharField(_("habilidad"), max_length=40, blank=True, choices=SKILL_CHOICES)
    availability = models.PositiveSmallIntegerField(
        _("disponibilidad"), null=True, blank=True, validators=[MinValueValidator(1), MaxValueValidator(5)]
    )

    class Meta:
        verbose_name = _("equipo")
        verbose_name_plural = _("equipo")
        ordering = ["id"]

    def __str__(self) -> str:
        return self.name


class VaesenWeapon(models.Model):
    """A weapon (V19): the skill it is used with and the conditions it inflicts."""

    sheet = models.ForeignKey(VaesenSheet, on_delete=models.CASCADE, related_name="weapons")
    name = models.CharField(_("arma"), max_length=80)
    skill = models.CharField(
        _("habilidad"), max_length=40, choices=[(s, s) for s in WEAPON_SKILLS], default="Combate cuerpo a cuerpo"
    )
    damage = models.PositiveSmallIntegerField(
        _("daño"), default=1, validators=[MinValueValidator(1), MaxValueValidator(10)]
    )
    bonus = models.PositiveSmallIntegerField(_("bonificación"), default=0, validators=[MaxValueValidator(3)])
    range = models.CharField(_("alcance"), max_length=40, blank=True)

    class Meta:
        verbose_name = _("arma")
        verbose_name_plural = _("armas")
        ordering = ["id"]

    def __str__(self) -> str:
        return self.name


class VaesenInjury(models.Model):
    """A critical injury (V13) and its time limit for treatment (V28)."""

    class Kind(models.TextChoices):
        PHYSICAL = ConditionKind.PHYSICAL.value, _("física")
        MENTAL = ConditionKind.MENTAL.value, _("mental")

    sheet = models.ForeignKey(VaesenSheet, on_delete=models.CASCADE, related_name="injuries")
    kind = models.CharField(_("tipo"), max_length=8, choices=Kind.choices)
    roll = models.PositiveSmallIntegerField(
        _("tirada (d66)"),
        null=True,
        blank=True,
        validators=[MinValueValidator(11), MaxValueValidator(66), validate_d66],
    )
    name = models.CharField(_("herida"), max_length=120)
    effect = models.TextField(_("efecto"), blank=True, max_length=2000)
    time_limit = models.CharField(_("plazo para tratarla"), max_length=80, blank=True)
    treated = models.BooleanField(_("tratada"), default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("herida crítica")
        verbose_name_plural = _("heridas críticas")
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return self.name


# --- Combat in posts (V17–V25) ----------------------------------------------------


class VaesenCombat(models.Model):
    """A fight in a scene (V17–V25): who takes part in initiative order,
    the round and whose turn it is. ``systems.vaesen.combat.services`` runs it."""

    campaign = models.ForeignKey("campaigns.Campaign", on_delete=models.CASCADE, related_name="vaesen_combats")
    scene = models.ForeignKey("campaigns.Scene", on_delete=models.CASCADE, related_name="vaesen_combats")
    started_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    round = models.PositiveSmallIntegerField(_("asalto"), default=1)
    # Whose turn it is (None: the first in the order still in the fight).
    acting = models.ForeignKey("VaesenCombatant", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # V25 — the ambush's Sigilo and Vigilancia rolls, once per combat.
    ambush_roll = models.OneToOneField(
        "table.TableRoll", null=True, blank=True, on_delete=models.SET_NULL, related_name="vaesen_ambush"
    )
    ambush_watch_roll = models.OneToOneField(
        "table.TableRoll", null=True, blank=True, on_delete=models.SET_NULL, related_name="vaesen_ambush_watch"
    )
    ambush_succeeded = models.BooleanField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("combate de Vaesen")
        verbose_name_plural = _("combates de Vaesen")
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.scene} · {self.created_at:%Y-%m-%d}"


class VaesenCombatant(models.Model):
    combat = models.ForeignKey(
        VaesenCombat, on_delete=models.CASCADE, related_name="combatants", verbose_name=_("combate")
    )
    character = models.ForeignKey(
        "sheets.Character", on_delete=models.CASCADE, related_name="+", verbose_name=_("personaje")
    )
    initiative = models.OneToOneField(
        "table.TableRoll",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="vaesen_combatant",
        verbose_name=_("tirada de iniciativa"),
    )
    # V17 — the d10 kept (the best of two after an ambush, V25), fixed for the combat.
    initiative_value = models.PositiveSmallIntegerField(_("iniciativa"), null=True, blank=True)
    order = models.PositiveSmallIntegerField(_("orden"), default=0)
    # V25 — rolls initiative twice; +1 die per extra success on its first action.
    rolls_twice = models.BooleanField(_("tira la iniciativa dos veces"), default=False)
    first_action_bonus = models.PositiveSmallIntegerField(_("bonificación a su primera acción"), default=0)
    # V18 — actions taken this round (reactions are fast actions).
    slow_used = models.PositiveSmallIntegerField(_("acciones lentas usadas"), default=0)
    fast_used = models.PositiveSmallIntegerField(_("acciones rápidas usadas"), default=0)
    # V23 — who holds this character, whether they cannot speak, and the
    # round of their last attempt to break free (once per turn).
    held_by = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="holding",
        verbose_name=_("apresado por"),
    )
    silenced = models.BooleanField(_("no puede hablar"), default=False)
    broke_free_round = models.PositiveSmallIntegerField(_("asalto en que intentó liberarse"), null=True, blank=True)
    # V24 — left the fight.
    fled = models.BooleanField(_("ha huido"), default=False)

    class Meta:
        verbose_name = _("participante")
        verbose_name_plural = _("participantes")
        ordering = ["order", "id"]
        constraints = [models.UniqueConstraint(fields=["combat", "character"], name="vaesen_combatant_once")]

    def __str__(self) -> str:
        return str(self.character)


class VaesenAction(models.Model):
    """An action declared in a combat that an opponent may answer with a
    reaction before it is rolled (V18, V21, V23, V24): an attack, a grapple,
    an attempt to break free or to flee. Declared, then (once the reaction is
    declared, or declined) rolled and settled."""

    class Kind(models.TextChoices):
        ATTACK = "ataque", _("Ataque")
        GRAPPLE = "apresar", _("Apresar")
        BREAK_FREE = "liberarse", _("Liberarse")
        FLEE = "huir", _("Huir")

    class Reaction(models.TextChoices):
        NONE = "ninguna", _("Sin reacción")
        DODGE = "esquivar", _("Esquivar (Agilidad)")
        PARRY_STRENGTH = "parar_fuerza", _("Parar (Fuerza)")
        PARRY_MELEE = "parar_combate", _("Parar (Combate cuerpo a cuerpo)")
        BREAK_HOLD = "zafarse", _("Zafarse (Fuerza)")
        HOLD = "retener", _("Retener (Fuerza)")
        STOP = "impedir", _("Impedir la huida (Agilidad)")

    combat = models.ForeignKey(VaesenCombat, on_delete=models.CASCADE, related_name="actions")
    kind = models.CharField(_("acción"), max_length=10, choices=Kind.choices)
    round = models.PositiveSmallIntegerField(_("asalto"))
    actor = models.ForeignKey(VaesenCombatant, on_delete=models.CASCADE, related_name="actions_made")
    # The attacked or held one; for breaking free, the holder; for fleeing,
    # the enemy who tries to stop it (chosen with the reaction).
    target = models.ForeignKey(
        VaesenCombatant, null=True, blank=True, on_delete=models.CASCADE, related_name="actions_received"
    )
    weapon = models.CharField(_("arma"), max_length=80, blank=True)
    skill = models.CharField(_("habilidad"), max_length=40)
    damage = models.PositiveSmallIntegerField(_("daño"), default=0)
    bonus = models.PositiveSmallIntegerField(_("bonificación"), default=0)
    ambush_bonus = models.PositiveSmallIntegerField(default=0)
    silence = models.BooleanField(_("tapar la boca"), default=False)
    declared_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    reaction = models.CharField(_("reacción"), max_length=14, choices=Reaction.choices, blank=True)
    reaction_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    roll = models.OneToOneField(
        "table.TableRoll", null=True, blank=True, on_delete=models.SET_NULL, related_name="vaesen_action"
    )
    reaction_roll = models.OneToOneField(
        "table.TableRoll", null=True, blank=True, on_delete=models.SET_NULL, related_name="vaesen_reaction"
    )
    armour_roll = models.OneToOneField(
        "table.TableRoll", null=True, blank=True, on_delete=models.SET_NULL, related_name="vaesen_armour"
    )
    injury_roll = models.OneToOneField(
        "table.TableRoll", null=True, blank=True, on_delete=models.SET_NULL, related_name="vaesen_combat_injury"
    )
    # What the rolls settled (the rules' reading, kept for the page).
    successes_left = models.PositiveSmallIntegerField(null=True, blank=True)
    succeeded = models.BooleanField(null=True, blank=True)
    damage_taken = models.PositiveSmallIntegerField(null=True, blank=True)
    outcome = models.CharField(_("resultado"), max_length=300, blank=True)
    may_swap = models.BooleanField(default=False)
    swapped = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("acción de combate")
        verbose_name_plural = _("acciones de combate")
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.actor}"

    @property
    def pending(self) -> bool:
        return self.resolved_at is None
