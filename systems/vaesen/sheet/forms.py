"""Vaesen sheet forms. Every value a player types is checked here (with the
ranges of ``rules.vaesen``), with Spanish messages; services receive
normalised data (``services.SheetData``)."""

from __future__ import annotations

import json
from typing import Any

from crispy_forms.helper import FormHelper
from crispy_forms.layout import Submit
from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.limits import LIMIT_MESSAGES, split_lines, text_field
from rules.vaesen import (
    ATTRIBUTE_RANGE,
    ATTRIBUTES,
    CONDITION_NAMES,
    FACES,
    SKILL_RANGE,
    SKILLS,
    ConditionKind,
    Conditions,
)
from sheets.forms import RowsFormSet, rows_formset
from sheets.models import Character, SheetEvent
from systems.vaesen.models import (
    ATTRIBUTE_FIELDS,
    ATTRIBUTE_LABELS,
    SKILL_CHOICES,
    WEAPON_SKILLS,
    VaesenInjury,
    VaesenItem,
    VaesenSheet,
    VaesenWeapon,
)
from systems.vaesen.sheet.services import (
    CORE_FIELDS,
    EXPORT_FORMAT,
    REACTIONS,
    SHEET_EXPORT_FIELDS,
    PlayState,
    SheetData,
)

LINES_HELP = _("Uno por línea.")
LINE_MAX = 200
# The whole of a "one per line" list (the sheet keeps it in a JSON list, which has no length of its own).
LINES_MAX = 4000
# NPCs and creatures may go beyond a player character's ranges.
NPC_ATTRIBUTE_RANGE = (1, 10)
NPC_SKILL_RANGE = (0, 10)
# The sheet's lists of phrases: field name → label.
LIST_FIELDS = {
    "relationships": _("Relaciones"),
    "talents": _("Talentos"),
    "insights": _("Perspicacias"),
    "defects": _("Defectos"),
}
# The sheet's own fields a player character has and an NPC does not.
PC_ONLY = ("archetype", "age", "motivation", "trauma", "dark_secret", "resources", *LIST_FIELDS)
NPC_ONLY = ("npc_kind", "resistance", "fear")


def skill_field_name(skill: str) -> str:
    """The form field of a skill: ``skill_3`` for the fourth of ``SKILL_CHOICES``."""
    return f"skill_{[name for name, _label in SKILL_CHOICES].index(skill)}"


def _number(label, low: int, high: int, *, required: bool = True, help_text: str = "") -> forms.IntegerField:
    return forms.IntegerField(
        label=label,
        min_value=low,
        max_value=high,
        required=required,
        help_text=help_text,
        error_messages={**LIMIT_MESSAGES, "invalid": _("Escribe un número entero.")},
        widget=forms.NumberInput(attrs={"min": low, "max": high, "inputmode": "numeric"}),
    )


def _lines_field(label) -> forms.CharField:
    return forms.CharField(
        label=label,
        max_length=LINES_MAX,
        error_messages=LIMIT_MESSAGES,
        widget=forms.Textarea(attrs={"rows": 2}),
        required=False,
        help_text=LINES_HELP,
    )


def _notes_field(name: str, label, help_text="") -> forms.CharField:
    return text_field(
        Character, name, label=label, widget=forms.Textarea(attrs={"rows": 3}), required=False, help_text=help_text
    )


class SheetForm(forms.Form):
    """The Vaesen sheet of a player character or, with ``npc``, an NPC's or a
    creature's stat block. Rendered without its own <form> tag: the equipment
    and weapons formsets share the page's form."""

    name = text_field(Character, "name", label=_("Nombre"))
    npc_kind = forms.ChoiceField(label=_("Tipo"), choices=VaesenSheet.NpcKind.choices)
    archetype = text_field(VaesenSheet, "archetype", label=_("Arquetipo"), required=False)
    age = _number(_("Edad"), 0, 200, required=False)
    motivation = text_field(VaesenSheet, "motivation", label=_("Motivación"), required=False)
    trauma = text_field(VaesenSheet, "trauma", label=_("Trauma"), required=False)
    dark_secret = text_field(VaesenSheet, "dark_secret", label=_("Secreto oscuro"), required=False)
    relationships = _lines_field(LIST_FIELDS["relationships"])
    talents = _lines_field(LIST_FIELDS["talents"])
    insights = _lines_field(LIST_FIELDS["insights"])
    defects = _lines_field(LIST_FIELDS["defects"])
    resources = _number(_("Recursos"), 0, 10, help_text=_("Los dados para comprar equipo (V31)."))
    armour = text_field(VaesenSheet, "armour", label=_("Armadura"), required=False)
    armour_protection = _number(_("Protección"), 0, 10, help_text=_("Dados de la armadura contra el daño (V22)."))
    armour_agility_penalty = _number(
        _("Penalización a Agilidad"), 0, 5, help_text=_("Dados menos en Agilidad por la armadura (V22).")
    )
    resistance = _number(
        _("Resistencia"),
        1,
        20,
        required=False,
        help_text=_("PNJ humanos y animales: puntos en lugar de estados (V20)."),
    )
    fear = _number(_("Miedo"), 0, 10, required=False, help_text=_("Éxitos necesarios en la prueba de Miedo (V26)."))
    public_description = text_field(
        Character,
        "public_description",
        label=_("Descripción pública"),
        widget=forms.Textarea(attrs={"rows": 4}),
        required=False,
    )
    private_notes = _notes_field("private_notes", _("Notas privadas"), _("Solo las ves tú y la dirección."))
    gm_notes = _notes_field("gm_notes", _("Notas de la dirección"), _("Solo las ve la dirección."))
    reason = forms.CharField(
        label=_("Motivo del cambio"),
        max_length=SheetEvent._meta.get_field("reason").max_length,
        required=False,
        error_messages=LIMIT_MESSAGES,
        help_text=_("Queda en el historial de la ficha."),
    )

    def __init__(self, *args, npc: bool = False, is_gm: bool = False, asks_reason: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        if not asks_reason:
            # Someone other than the owner changing the sheet says why.
            del self.fields["reason"]
        self.npc = npc
        attributes, skills = (NPC_ATTRIBUTE_RANGE, NPC_SKILL_RANGE) if npc else (ATTRIBUTE_RANGE, SKILL_RANGE)
        for attribute in ATTRIBUTES:
            self.fields[ATTRIBUTE_FIELDS[attribute]] = _number(ATTRIBUTE_LABELS[attribute], *attributes)
            for skill in SKILLS[attribute]:
                self.fields[skill_field_name(skill)] = _number(skill, *skills, required=False)
        for name in NPC_ONLY if not npc else (*PC_ONLY, "private_notes"):
            del self.fields[name]
        if not (is_gm or npc):
            del self.fields["gm_notes"]
        self.helper = FormHelper()
        self.helper.form_tag = False
        self.helper.disable_csrf = True

    def attribute_groups(self) -> list[tuple[Any, list]]:
        """Each attribute's field with its three skills' fields, for the template."""
        return [
            (
                self[ATTRIBUTE_FIELDS[attribute]],
                [self[skill_field_name(skill)] for skill in SKILLS[attribute]],
            )
            for attribute in ATTRIBUTES
        ]

    def clean_name(self) -> str:
        name = " ".join(self.cleaned_data["name"].split())
        if not name:
            raise forms.ValidationError(_("Escribe un nombre."))
        return name

    def _clean_lines(self, name: str) -> list[str]:
        return split_lines(self.cleaned_data[name], max_length=LINE_MAX)

    def clean_relationships(self) -> list[str]:
        return self._clean_lines("relationships")

    def clean_talents(self) -> list[str]:
        return self._clean_lines("talents")

    def clean_insights(self) -> list[str]:
        return self._clean_lines("insights")

    def clean_defects(self) -> list[str]:
        return self._clean_lines("defects")

    def clean(self):
        data = super().clean()
        if self.npc:
            kind = data.get("npc_kind")
            if kind in (VaesenSheet.NpcKind.HUMAN, VaesenSheet.NpcKind.ANIMAL):
                if data.get("resistance") is None and "resistance" not in self.errors:
                    self.add_error("resistance", _("Los PNJ humanos y los animales tienen puntos de Resistencia."))
                data["fear"] = data.get("fear")
            elif kind == VaesenSheet.NpcKind.CREATURE:
                if data.get("fear") is None and "fear" not in self.errors:
                    self.add_error("fear", _("Una criatura tiene un valor de Miedo."))
                # Creatures suffer conditions like the player characters.
                data["resistance"] = None
        return data

    def sheet_data(self, items: list[dict[str, Any]], weapons: list[dict[str, Any]]) -> SheetData:
        data = self.cleaned_data
        names = [n for n in self.fields if n in CORE_FIELDS or n in SHEET_EXPORT_FIELDS]
        fields = {name: data[name] for name in names}
        if not self.npc:
            fields["npc_kind"] = ""
        skills = {
            skill: data.get(skill_field_name(skill)) or 0 for attribute in ATTRIBUTES for skill in SKILLS[attribute]
        }
        return SheetData(fields=fields, skills=skills, items=items, weapons=weapons)

    @staticmethod
    def initial_for(character: Character) -> dict[str, Any]:
        sheet = character.vaesen
        initial: dict[str, Any] = {name: getattr(character, name) for name in CORE_FIELDS}
        initial |= {name: getattr(sheet, name) for name in SHEET_EXPORT_FIELDS}
        for name in LIST_FIELDS:
            initial[name] = "\n".join(getattr(sheet, name))
        for attribute in ATTRIBUTES:
            for skill in SKILLS[attribute]:
                initial[skill_field_name(skill)] = sheet.skill(skill)
        return initial


SHEET_INITIAL = {"fisico": 2, "precision": 2, "logica": 2, "empatia": 2, "resources": 2}
SHEET_INITIAL |= {"armour_protection": 0, "armour_agility_penalty": 0}


class ItemForm(forms.Form):
    """A piece of equipment: bonus dice to a skill (V16), availability (V31)."""

    name = text_field(VaesenItem, "name", label=_("Objeto"))
    bonus = _number(_("Bonificación"), 0, 3)
    skill = forms.ChoiceField(label=_("Habilidad"), choices=[("", "—"), *SKILL_CHOICES], required=False)
    availability = _number(_("Disponibilidad"), 1, 5, required=False)

    def clean(self):
        data = super().clean()
        if data.get("bonus") and not data.get("skill"):
            self.add_error("skill", _("Di a qué habilidad da los dados de bonificación."))
        return data


class WeaponForm(forms.Form):
    name = text_field(VaesenWeapon, "name", label=_("Arma"))
    skill = forms.ChoiceField(label=_("Habilidad"), choices=[(s, s) for s in WEAPON_SKILLS])
    damage = _number(_("Daño"), 1, 10)
    bonus = _number(_("Bonificación"), 0, 3)
    range = text_field(VaesenWeapon, "range", label=_("Alcance"), required=False)


class _RowsFormSet(RowsFormSet):
    def rows(self) -> list[dict[str, Any]]:
        return [
            {name: value for name, value in form.cleaned_data.items() if name != "DELETE"}
            for form in self.forms
            if form.cleaned_data and not self._should_delete_form(form)
        ]


# ``validate_max``: a sent form (or an imported file) with more rows is refused, not stored.
ItemFormSet = rows_formset(ItemForm, _RowsFormSet, extra=2, max_num=40)
WeaponFormSet = rows_formset(WeaponForm, _RowsFormSet, extra=1, max_num=20)


def items_initial(character: Character) -> list[dict[str, Any]]:
    return [
        {"name": i.name, "bonus": i.bonus, "skill": i.skill, "availability": i.availability}
        for i in character.vaesen.items.all()
    ]


def weapons_initial(character: Character) -> list[dict[str, Any]]:
    return [
        {"name": w.name, "skill": w.skill, "damage": w.damage, "bonus": w.bonus, "range": w.range}
        for w in character.vaesen.weapons.all()
    ]


class NotesForm(forms.Form):
    """What the owner may change after approval: notes, and the public
    description when the campaign allows it."""

    private_notes = SheetForm.base_fields["private_notes"]
    public_description = SheetForm.base_fields["public_description"]
    gm_notes = SheetForm.base_fields["gm_notes"]

    def __init__(self, *args, is_gm: bool, description_allowed: bool, **kwargs):
        super().__init__(*args, **kwargs)
        if not is_gm:
            del self.fields["gm_notes"]
        if not (is_gm or description_allowed):
            del self.fields["public_description"]
        self.helper = FormHelper()
        self.helper.add_input(Submit("submit", _("Guardar notas")))


class ReviewForm(forms.Form):
    decision = forms.ChoiceField(
        label=_("Decisión"),
        choices=[("approve", _("Aprobar")), ("return", _("Devolver con comentarios"))],
        widget=forms.RadioSelect,
    )
    comment = text_field(
        Character, "review_comment", label=_("Comentario"), widget=forms.Textarea(attrs={"rows": 3}), required=False
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.helper = FormHelper()
        self.helper.add_input(Submit("submit", _("Enviar la revisión")))

    def clean(self):
        data = super().clean()
        if data.get("decision") == "return" and not data.get("comment", "").strip():
            self.add_error("comment", _("Explica qué hay que cambiar."))
        return data


REASON_FIELD_MAX = SheetEvent._meta.get_field("reason").max_length


def _reason_field() -> forms.CharField:
    return forms.CharField(
        label=_("Motivo"), max_length=REASON_FIELD_MAX, required=False, error_messages=LIMIT_MESSAGES
    )


class ConditionForm(forms.Form):
    """The condition buttons of one kind (V8–V12, V28): each button sends its
    ``do`` ("marcar:Herido", "quitar:Herido", "sufrir" or "recuperar")."""

    kind = forms.ChoiceField(choices=[(k.value, k.value) for k in ConditionKind])
    do = forms.CharField(max_length=40, error_messages=LIMIT_MESSAGES)
    reason = _reason_field()

    def clean(self):
        data = super().clean()
        action, _sep, name = data.get("do", "").partition(":")
        if "do" in data and action not in ("marcar", "quitar", "sufrir", "recuperar"):
            self.add_error(
                "do", forms.ValidationError(_("Acción desconocida para los estados."), code="invalid_choice")
            )
        data["action"], data["name"] = action, name
        return data


class ResistanceForm(forms.Form):
    """The − / + buttons of an NPC's Resistencia (V20)."""

    change = forms.TypedChoiceField(choices=[("-1", "−1"), ("1", "+1")], coerce=int)
    reason = _reason_field()


class InjuryForm(forms.Form):
    """A critical injury by hand (V13), with its time limit (V28)."""

    kind = forms.ChoiceField(label=_("Tipo"), choices=VaesenInjury.Kind.choices)
    roll = _number(_("Tirada (d66)"), 11, 66, required=False)
    name = text_field(VaesenInjury, "name", label=_("Herida"))
    effect = text_field(VaesenInjury, "effect", label=_("Efecto"), required=False)
    time_limit = text_field(
        VaesenInjury,
        "time_limit",
        label=_("Plazo para tratarla"),
        required=False,
        help_text=_("Vacío si no tiene plazo; por ejemplo «un asalto» o «un día»."),
    )
    reason = _reason_field()

    def clean_roll(self):
        value = self.cleaned_data["roll"]
        if value is not None and not (1 <= value // 10 <= 6 and 1 <= value % 10 <= 6):
            raise forms.ValidationError(_("Una tirada d66 tiene dos cifras del 1 al 6, como 11, 36 o 66."))
        return value


class TerrorEndForm(forms.Form):
    """The GM's «Ya no está Aterrorizado» button (V27)."""

    reason = _reason_field()


class TreatedForm(forms.Form):
    treated = forms.TypedChoiceField(choices=[("1", "1"), ("0", "0")], coerce=lambda v: v == "1")
    reason = _reason_field()


class ImportForm(forms.Form):
    file = forms.FileField(label=_("Archivo de ficha (JSON)"))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.helper = FormHelper()
        self.helper.add_input(Submit("submit", _("Importar")))

    def clean_file(self) -> dict[str, Any]:
        upload = self.cleaned_data["file"]
        not_a_sheet = _("El archivo no es una ficha de Vaesen exportada desde este sitio.")
        if upload.size > 512 * 1024:
            raise forms.ValidationError(_("El archivo es demasiado grande para ser una ficha."))
        try:
            data = json.loads(upload.read().decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise forms.ValidationError(not_a_sheet) from None
        if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
            raise forms.ValidationError(not_a_sheet)
        return data

    def clean(self):
        data = super().clean()
        if "file" in data:
            try:
                data["play"] = import_play_state(data["file"])
            except forms.ValidationError as exc:
                self.add_error("file", exc)
        return data


# --- an exported file, read back ----------------------------------------------------


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _value(value: Any) -> str:
    return "" if value is None or isinstance(value, (dict, list)) else str(value)


IMPORTED_INJURIES_MAX = 50


def import_play_state(data: dict[str, Any]) -> PlayState:
    """The sheet in play from an exported file: its conditions and Broken
    states, the Resistencia it lost and its critical injuries. Anything
    malformed is a ``ValidationError`` in Spanish."""
    shape = _("%(what)s: el formato no es el de una ficha exportada.")
    conditions = data.get("conditions", {})
    if not isinstance(conditions, dict):
        raise forms.ValidationError(shape % {"what": _("Estados")})
    try:
        play_conditions = Conditions(
            physical=frozenset(_list(conditions.get("physical"))),
            mental=frozenset(_list(conditions.get("mental"))),
            broken_physical=conditions.get("broken_physical") is True,
            broken_mental=conditions.get("broken_mental") is True,
        )
    except (ValueError, TypeError):
        names = ", ".join(n for kind in ConditionKind for n in CONDITION_NAMES[kind])
        raise forms.ValidationError(_("Estados: solo valen %(names)s.") % {"names": names}) from None
    # V27 — Aterrorizado: 1–6 rounds with one of the reactions, or neither (older files: neither).
    terror = data.get("terror") or {}
    if not isinstance(terror, dict):
        raise forms.ValidationError(shape % {"what": _("Aterrorizado")})
    rounds, reaction = terror.get("terrified_rounds", 0), terror.get("terror_reaction", "")
    if type(rounds) is not int or not isinstance(reaction, str):
        raise forms.ValidationError(shape % {"what": _("Aterrorizado")})
    if not ((rounds == 0 and reaction == "") or (1 <= rounds <= FACES and reaction in REACTIONS)):
        raise forms.ValidationError(shape % {"what": _("Aterrorizado")})
    lost = data.get("resistance_lost", 0)
    if type(lost) is not int or lost < 0:
        raise forms.ValidationError(shape % {"what": _("Resistencia perdida")})
    # Files exported before these two existed have neither: nothing owed.
    unspent = data.get("resistance_unspent", 0)
    if type(unspent) is not int or not 0 <= unspent <= lost:
        raise forms.ValidationError(shape % {"what": _("Resistencia perdida")})
    pending = data.get("pending_injuries", [])
    kinds = {kind.value for kind in ConditionKind}
    if not isinstance(pending, list) or len(pending) > IMPORTED_INJURIES_MAX or not set(pending) <= kinds:
        raise forms.ValidationError(shape % {"what": _("Heridas críticas por tirar")})
    injuries = []
    raw = _list(data.get("injuries"))
    if len(raw) > IMPORTED_INJURIES_MAX:
        raise forms.ValidationError(_("El archivo trae demasiadas heridas críticas."))
    for number, item in enumerate(raw, start=1):
        form = InjuryForm({k: _value(item.get(k)) for k in InjuryForm.base_fields} if isinstance(item, dict) else {})
        if not form.is_valid():
            raise forms.ValidationError(
                _("Herida crítica %(n)s: %(problems)s")
                % {"n": number, "problems": " ".join(e for errors in form.errors.values() for e in errors)}
            )
        row = {k: v for k, v in form.cleaned_data.items() if k != "reason"}
        row["treated"] = item.get("treated") is True
        injuries.append(row)
    return PlayState(
        conditions=play_conditions,
        resistance_lost=lost,
        injuries=injuries,
        terrified_rounds=rounds,
        terror_reaction=reaction,
        resistance_unspent=unspent,
        pending_injuries=pending,
    )


def import_form_data(data: dict[str, Any]) -> dict[str, str]:
    """An exported sheet as the POST data of the sheet form and its formsets,
    so an import is validated exactly like a typed sheet."""
    post: dict[str, Any] = {name: _value(data.get(name)) for name in (*CORE_FIELDS, *SHEET_EXPORT_FIELDS)}
    for name in LIST_FIELDS:
        post[name] = "\n".join(_text(line) for line in _list(data.get(name)))
    skills = data.get("skills") if isinstance(data.get("skills"), dict) else {}
    for attribute in ATTRIBUTES:
        for skill in SKILLS[attribute]:
            post[skill_field_name(skill)] = _value(skills.get(skill, 0))
    for prefix, fields in (("items", ItemForm.base_fields), ("weapons", WeaponForm.base_fields)):
        rows = [row for row in _list(data.get(prefix)) if isinstance(row, dict)]
        post.update({f"{prefix}-TOTAL_FORMS": len(rows), f"{prefix}-INITIAL_FORMS": 0})
        for i, row in enumerate(rows):
            post.update({f"{prefix}-{i}-{name}": _value(row.get(name)) for name in fields})
    return {k: str(v) for k, v in post.items()}
