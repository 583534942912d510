"""Hora de Aventuras' rows: the sheet (``AventurasSheet`` beside the shared
character core) with its feats, tools and states; the hero point ledger and
the requests that need someone else's word; reactions to an action; the GM's
competitions and cooperations; a scene's initiative order.

Game arithmetic is never done here: the methods hand the stored values to
``rules.aventuras`` and return its answers. Changes go through the services
of each package (``sheet``, ``heroes``, ``rolls``, ``contests``).

A roll's own state (its attribute and difficulty, the chachis converted or
spent on a narrative effect, "ya está") lives in its ``TableRoll.facts``,
changed only with that row locked.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from rules import aventuras
from rules.aventuras import HeroGain, HeroSpend


class AventurasEvent(models.TextChoices):
    """Hora de Aventuras' own kinds of change in a sheet's history (``SheetEvent.kind``)."""

    HEALTH = "a_health", _("salud")
    STATE = "a_state", _("estados")
    HERO = "a_hero", _("puntos de Héroe")
    EXPERIENCE = "a_xp", _("experiencia")


# The attribute fields, in the order of ``rules.aventuras.ATTRIBUTES``.
ATTRIBUTE_LABELS = {
    "cachas": _("Cachas"),
    "cerebrito": _("Cerebrito"),
    "espabilado": _("Espabilado"),
    "majo": _("Majo"),
}
# A1 — the kinds of action, as people read them (``rules.aventuras.ACTION_KINDS``).
ACTION_KIND_LABELS = {"física": _("física"), "mental": _("mental"), "social": _("social")}
ATTRIBUTE_CHOICES = [(key, ATTRIBUTE_LABELS[key]) for key in aventuras.ATTRIBUTES]
# [ENGINE DEFAULT] S004 gives no number of health levels: a hero has five
# unless the GM's sheet says otherwise.
DEFAULT_HEALTH = 5
MAX_SCORE = 10


def _score(label):
    # A2 — the score rolled when the attribute is highlighted (1–6 for a hero; NPCs up to 10).
    return models.PositiveSmallIntegerField(
        label, default=aventuras.UNHIGHLIGHTED_SCORE, validators=[MinValueValidator(1), MaxValueValidator(MAX_SCORE)]
    )


class AventurasSheet(models.Model):
    """One character's Hora de Aventuras sheet (its primary key is the character's)."""

    character = models.OneToOneField(
        "sheets.Character", on_delete=models.CASCADE, primary_key=True, related_name="aventuras"
    )
    concept = models.CharField(_("concepto"), max_length=120, blank=True)
    cachas = _score(_("Cachas"))
    cerebrito = _score(_("Cerebrito"))
    espabilado = _score(_("Espabilado"))
    majo = _score(_("Majo"))
    # A2 — the attributes the player chose when making the hero (keys of ATTRIBUTES).
    highlighted = models.JSONField(_("atributos destacados"), default=list, blank=True)
    health = models.PositiveSmallIntegerField(
        _("niveles de salud"), default=DEFAULT_HEALTH, validators=[MinValueValidator(1), MaxValueValidator(20)]
    )
    health_lost = models.PositiveSmallIntegerField(_("niveles de salud perdidos"), default=0)
    # A21 — five at the start of every adventure, no cap; None for a GM character (A20).
    hero_points = models.PositiveIntegerField(_("puntos de Héroe"), null=True, blank=True)
    experience = models.PositiveIntegerField(_("puntos de Experiencia"), default=0)
    # A25 — the flaw, and how facing it earns a point (S004 asks the table to agree it).
    flaw = models.CharField(_("defecto"), max_length=300, blank=True)
    flaw_earns = models.CharField(_("cómo se gana un punto de Héroe con él"), max_length=300, blank=True)
    # A GM character the players already know of: a player's action may
    # target it (A18) before it shows up in their scene. Unused for heroes.
    known = models.BooleanField(
        _("conocido por los jugadores"),
        default=False,
        help_text=_("Los jugadores pueden elegirlo como objetivo aunque aún no haya salido en su escena."),
    )

    class Meta:
        verbose_name = _("ficha de Hora de Aventuras")
        verbose_name_plural = _("fichas de Hora de Aventuras")

    def __str__(self) -> str:
        return str(self.character)

    def score(self, attribute: str) -> int:
        """The stored score of an attribute (A2 decides whether it is rolled)."""
        if attribute not in ATTRIBUTE_LABELS:
            raise ValueError(f"Atributo desconocido: {attribute!r}.")
        return getattr(self, attribute)

    def is_highlighted(self, attribute: str) -> bool:
        return attribute in (self.highlighted or [])

    def dice_for(self, attribute: str) -> int:
        """A2 — the score if highlighted, otherwise 2."""
        return aventuras.attribute_score(self.score(attribute), self.is_highlighted(attribute))

    @property
    def health_left(self) -> int:
        return max(self.health - self.health_lost, 0)

    @property
    def is_hero(self) -> bool:
        return self.hero_points is not None

    def attribute_rows(self) -> list[dict]:
        """Each attribute with its label, score, whether it is highlighted and the dice it rolls."""
        return [
            {
                "key": key,
                "label": ATTRIBUTE_LABELS[key],
                "score": self.score(key),
                "highlighted": self.is_highlighted(key),
                "dice": self.dice_for(key),
            }
            for key in aventuras.ATTRIBUTES
        ]


class AventurasFeat(models.Model):
    """A feat (proeza); some need a hero point to work (A23)."""

    sheet = models.ForeignKey(AventurasSheet, on_delete=models.CASCADE, related_name="feats")
    name = models.CharField(_("proeza"), max_length=80)
    description = models.TextField(_("qué hace"), blank=True, max_length=2000)
    needs_hero_point = models.BooleanField(_("necesita un punto de Héroe"), default=False)

    class Meta:
        ordering = ["id"]
        verbose_name = _("proeza")
        verbose_name_plural = _("proezas")

    def __str__(self) -> str:
        return self.name


class AventurasTool(models.Model):
    """A tool: +1 to +3 dice to one attribute, for the uses it names (A29)."""

    sheet = models.ForeignKey(AventurasSheet, on_delete=models.CASCADE, related_name="tools")
    name = models.CharField(_("herramienta"), max_length=80)
    attribute = models.CharField(_("atributo"), max_length=12, choices=ATTRIBUTE_CHOICES)
    bonus = models.PositiveSmallIntegerField(
        _("bonificación"), default=1, validators=[MinValueValidator(1), MaxValueValidator(3)]
    )
    uses = models.CharField(_("para qué sirve"), max_length=200, blank=True)

    class Meta:
        ordering = ["id"]
        verbose_name = _("herramienta")
        verbose_name_plural = _("herramientas")

    def __str__(self) -> str:
        return self.name


class AventurasState(models.Model):
    """A state on a character (hambriento, cansado …): dice it adds or takes
    (A3) and a threshold it moves (A7). A state "por el morro" gave a hero
    point and lasts its scene (A27)."""

    class Threshold(models.TextChoices):
        NONE = "", _("no cambia el umbral")
        EASIER = "easier", _("éxito con 3 o más")
        HARDER = "harder", _("éxito solo con 5 o más")

    sheet = models.ForeignKey(AventurasSheet, on_delete=models.CASCADE, related_name="states")
    name = models.CharField(_("estado"), max_length=80)
    modifier = models.SmallIntegerField(_("dados"), default=0, validators=[MinValueValidator(-5), MaxValueValidator(5)])
    threshold = models.CharField(_("umbral"), max_length=8, choices=Threshold.choices, blank=True)
    # Which actions it touches ("" for all): one of ``rules.aventuras.ACTION_KINDS``.
    applies_to = models.CharField(_("a qué acciones"), max_length=10, blank=True)
    for_free = models.BooleanField(_("por el morro"), default=False)
    # A27 — the scene a state "por el morro" lasts (it goes when a new scene begins).
    scene = models.ForeignKey("campaigns.Scene", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        verbose_name = _("estado")
        verbose_name_plural = _("estados")

    def __str__(self) -> str:
        return self.name


class HeroMove(models.Model):
    """One move of a character's hero points (A21–A28): who, when, why, the
    points after it. A spend names its use and the turn it belongs to; the
    database refuses a second spend of the same use in the same turn (A24)."""

    class Kind(models.TextChoices):
        SPEND = "spend", _("gasto")
        GAIN = "gain", _("ganancia")
        GIVE = "give", _("regalo dado")
        RECEIVE = "receive", _("regalo recibido")
        ADVENTURE = "adventure", _("nueva aventura")
        ADJUST = "adjust", _("ajuste del director")

    campaign = models.ForeignKey("campaigns.Campaign", on_delete=models.CASCADE, related_name="+")
    character = models.ForeignKey("sheets.Character", on_delete=models.CASCADE, related_name="hero_moves")
    scene = models.ForeignKey("campaigns.Scene", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    kind = models.CharField(_("movimiento"), max_length=10, choices=Kind.choices)
    use = models.CharField(_("uso"), max_length=16, blank=True, choices=[(u.value, u.value) for u in HeroSpend])
    reason = models.CharField(_("motivo"), max_length=24, blank=True, choices=[(g.value, g.value) for g in HeroGain])
    delta = models.IntegerField(_("puntos"))
    points_after = models.PositiveIntegerField(_("puntos después"))
    # A28 — experience paid for an instant point (2), spent at once.
    experience_spent = models.PositiveSmallIntegerField(_("experiencia gastada"), default=0)
    # A24 — the turn a spend belongs to ("post:<id>" of the character's latest post in the scene).
    turn = models.CharField(max_length=40, blank=True)
    table_roll = models.ForeignKey(
        "table.TableRoll", null=True, blank=True, on_delete=models.SET_NULL, related_name="hero_moves"
    )
    # What it was spent on or for: the state ignored, the feat, the levels recovered …
    detail = models.CharField(_("detalle"), max_length=300, blank=True)
    why = models.CharField(_("por qué"), max_length=300, blank=True)
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["character", "turn", "use"],
                condition=Q(kind="spend") & ~Q(turn=""),
                name="aventuras_one_use_per_turn",
            )
        ]
        verbose_name = _("movimiento de puntos de Héroe")
        verbose_name_plural = _("movimientos de puntos de Héroe")

    def __str__(self) -> str:
        return f"{self.character_id} {self.kind} {self.delta:+d}"


class HeroRequest(models.Model):
    """A hero point that needs another person's word: a player's claim for
    facing their flaw or a sacrifice (A25, the GM decides), a point given to
    another hero (A26, the GM approves), a state "por el morro" (A27, player
    and GM agree: whoever proposes, the other accepts)."""

    class Kind(models.TextChoices):
        FLAW = "flaw", _("enfrentarse a su defecto")
        SACRIFICE = "sacrifice", _("un sacrificio")
        GIFT = "gift", _("un punto de otro héroe")
        STATE = "state", _("un estado por el morro")

    class Status(models.TextChoices):
        PENDING = "pending", _("pendiente")
        ACCEPTED = "accepted", _("aceptada")
        REFUSED = "refused", _("rechazada")
        WITHDRAWN = "withdrawn", _("retirada")

    campaign = models.ForeignKey("campaigns.Campaign", on_delete=models.CASCADE, related_name="+")
    scene = models.ForeignKey("campaigns.Scene", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    kind = models.CharField(_("tipo"), max_length=10, choices=Kind.choices)
    # Who would gain the point.
    character = models.ForeignKey("sheets.Character", on_delete=models.CASCADE, related_name="hero_requests")
    # A26 — who gives it.
    giver = models.ForeignKey(
        "sheets.Character", null=True, blank=True, on_delete=models.CASCADE, related_name="hero_gifts"
    )
    # A27 — the state proposed.
    state_name = models.CharField(_("estado"), max_length=80, blank=True)
    why = models.CharField(_("por qué"), max_length=300)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    status = models.CharField(_("estado de la petición"), max_length=10, choices=Status.choices, default="pending")
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        verbose_name = _("petición de punto de Héroe")
        verbose_name_plural = _("peticiones de puntos de Héroe")

    def __str__(self) -> str:
        return f"{self.kind} {self.character_id} ({self.status})"


class AventurasReaction(models.Model):
    """One target's reaction to an action (A14–A18): rolled, declined or
    still open. An action against several targets has one row per target."""

    action = models.ForeignKey("table.TableRoll", on_delete=models.CASCADE, related_name="aventuras_reactions")
    target = models.ForeignKey("sheets.Character", on_delete=models.CASCADE, related_name="aventuras_reactions")
    roll = models.OneToOneField(
        "table.TableRoll", null=True, blank=True, on_delete=models.SET_NULL, related_name="reaction_to"
    )
    declined_at = models.DateTimeField(null=True, blank=True)
    declined_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["action", "target"], name="aventuras_one_reaction_per_target")]

    def __str__(self) -> str:
        return f"{self.target_id} → {self.action_id}"

    @property
    def open(self) -> bool:
        return self.roll_id is None and self.declined_at is None


class AventurasContest(models.Model):
    """A competition (A13) or a cooperation (A19) the GM sets up in a scene;
    it is resolved when everyone taking part has a final roll."""

    class Kind(models.TextChoices):
        COMPETITION = "competition", _("Competición")
        COOPERATION = "cooperation", _("Cooperación")

    campaign = models.ForeignKey("campaigns.Campaign", on_delete=models.CASCADE, related_name="aventuras_contests")
    scene = models.ForeignKey("campaigns.Scene", on_delete=models.CASCADE, related_name="aventuras_contests")
    kind = models.CharField(_("tipo"), max_length=12, choices=Kind.choices)
    title = models.CharField(_("qué se disputa o se hace"), max_length=200)
    # A19 — the action's difficulty before the +1 per extra helper.
    difficulty = models.PositiveSmallIntegerField(
        _("dificultad"), default=0, validators=[MaxValueValidator(aventuras.MAX_PROBABILITY_DICE)]
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    cancelled_at = models.DateTimeField(null=True, blank=True)
    cancelled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    cancel_reason = models.CharField(_("por qué se anula"), max_length=300, blank=True)
    # The resolution as shown (winners, pooled tally …), written once when resolved.
    result = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return self.title


class AventurasContestant(models.Model):
    """A side of a competition or a helper in a cooperation, and its roll."""

    contest = models.ForeignKey(AventurasContest, on_delete=models.CASCADE, related_name="contestants")
    character = models.ForeignKey("sheets.Character", on_delete=models.CASCADE, related_name="+")
    attribute = models.CharField(_("atributo"), max_length=12, choices=ATTRIBUTE_CHOICES)
    # A13 — each side of a competition may face its own difficulty.
    difficulty = models.PositiveSmallIntegerField(
        _("dificultad"), default=0, validators=[MaxValueValidator(aventuras.MAX_PROBABILITY_DICE)]
    )
    roll = models.OneToOneField(
        "table.TableRoll", null=True, blank=True, on_delete=models.SET_NULL, related_name="contestant"
    )
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["contest", "character"], name="aventuras_one_side_per_character")
        ]

    def __str__(self) -> str:
        return f"{self.character_id} in {self.contest_id}"


class AventurasInitiative(models.Model):
    """A scene's initiative order (A20): the characters in it; ties left at
    the end are settled by a die each, rolled through the log."""

    scene = models.OneToOneField("campaigns.Scene", on_delete=models.CASCADE, related_name="aventuras_initiative")
    characters = models.ManyToManyField("sheets.Character", related_name="+")
    # character id (text) → the table roll id of its tie-break die.
    tiebreaks = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"initiative {self.scene_id}"
