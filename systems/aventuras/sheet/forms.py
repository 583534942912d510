"""Hora de Aventuras sheet forms. Every value a player types is checked here,
with Spanish messages; services receive normalised data (``services.SheetData``)."""

from __future__ import annotations

import json
from typing import Any

from crispy_forms.helper import FormHelper
from crispy_forms.layout import Submit
from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.limits import LIMIT_MESSAGES, text_field
from rules.aventuras import ACTION_KINDS, ATTRIBUTES, UNHIGHLIGHTED_SCORE
from sheets.forms import RowsFormSet, rows_formset
from sheets.models import Character, SheetEvent
from systems.aventuras.models import (
    ACTION_KIND_LABELS,
    ATTRIBUTE_CHOICES,
    ATTRIBUTE_LABELS,
    MAX_SCORE,
    AventurasFeat,
    AventurasSheet,
    AventurasState,
    AventurasTool,
)
from systems.aventuras.sheet.services import (
    CORE_FIELDS,
    EXPORT_FORMAT,
    NPC_FIELDS,
    SHEET_EXPORT_FIELDS,
    PlayState,
    SheetData,
)

# [ENGINE DEFAULT] S004 gives no range for a highlighted attribute's score: a
# hero's is 1–6 (the dice of a roll, A2); the GM's characters go up to 10.
PC_SCORE_RANGE = (1, 6)
NPC_SCORE_RANGE = (1, MAX_SCORE)
HEALTH_RANGE = (1, 20)
# The sheet's own fields a hero has and a GM character does not (A25: the flaw earns hero points).
PC_ONLY = ("flaw", "flaw_earns", "private_notes")
# A3 — the dice a state adds or takes; A7 — the threshold it moves.
STATE_MODIFIER_RANGE = (-5, 5)
# A choice not on the list (a tampered or stale form), said as the rest of the site says it.
CHOICE_MESSAGES = {"required": _("Elige una opción."), "invalid_choice": _("Esa opción no está en la lista.")}
APPLIES_CHOICES = [("", _("todas las acciones")), *[(kind, ACTION_KIND_LABELS[kind]) for kind in ACTION_KINDS]]


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


def _notes_field(name: str, label, help_text="") -> forms.CharField:
    return text_field(
        Character, name, label=label, widget=forms.Textarea(attrs={"rows": 3}), required=False, help_text=help_text
    )


class SheetForm(forms.Form):
    """The sheet of a hero or, with ``npc``, of a GM character. Rendered
    without its own <form> tag: the feats and tools formsets share the page's form."""

    name = text_field(Character, "name", label=_("Nombre"))
    concept = text_field(AventurasSheet, "concept", label=_("Concepto"), required=False)
    highlighted = forms.MultipleChoiceField(
        label=_("Atributos destacados"),
        choices=ATTRIBUTE_CHOICES,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        error_messages={"invalid_choice": _("«%(value)s» no es un atributo.")},
        help_text=_("Con un atributo destacado se tiran tantos dados como su puntuación; si no, dos (A2)."),
    )
    health = _number(_("Niveles de salud"), *HEALTH_RANGE)
    flaw = text_field(AventurasSheet, "flaw", label=_("Defecto"), required=False)
    flaw_earns = text_field(
        AventurasSheet,
        "flaw_earns",
        label=_("Cómo se gana un punto de Héroe con él"),
        required=False,
        help_text=_("Acordadlo en la mesa: enfrentarse al defecto para ayudar a otros da un punto de Héroe (A25)."),
    )
    public_description = text_field(
        Character,
        "public_description",
        label=_("Descripción pública"),
        widget=forms.Textarea(attrs={"rows": 4}),
        required=False,
    )
    private_notes = _notes_field("private_notes", _("Notas privadas"), _("Solo las ves tú y la dirección."))
    gm_notes = _notes_field("gm_notes", _("Notas de la dirección"), _("Solo las ve la dirección."))
    known = forms.BooleanField(
        label=_("Los jugadores ya lo conocen"),
        required=False,
        help_text=_("Podrán elegirlo como objetivo de sus acciones aunque aún no haya salido en su escena."),
    )
    reason = forms.CharField(
        label=_("Motivo del cambio"),
        max_length=SheetEvent._meta.get_field("reason").max_length,
        required=True,
        error_messages={**LIMIT_MESSAGES, "required": _("Indica el motivo del cambio: queda en el historial.")},
        help_text=_("Queda en el historial de la ficha."),
    )

    def __init__(self, *args, npc: bool = False, is_gm: bool = False, asks_reason: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        if not asks_reason:
            # Only someone other than the owner changing the sheet says why (and must).
            del self.fields["reason"]
        self.npc = npc
        low, high = NPC_SCORE_RANGE if npc else PC_SCORE_RANGE
        for attribute in ATTRIBUTES:
            self.fields[attribute] = _number(
                ATTRIBUTE_LABELS[attribute],
                low,
                high,
                required=False,
                help_text=_("Solo cuenta si está destacado."),
            )
        if npc:
            for name in PC_ONLY:
                del self.fields[name]
        else:
            del self.fields["known"]
        if not (is_gm or npc):
            del self.fields["gm_notes"]
        self.helper = FormHelper()
        self.helper.form_tag = False
        self.helper.disable_csrf = True

    def attribute_fields(self) -> list:
        return [self[attribute] for attribute in ATTRIBUTES]

    def clean_name(self) -> str:
        name = " ".join(self.cleaned_data["name"].split())
        if not name:
            raise forms.ValidationError(_("Escribe un nombre."))
        return name

    def clean(self):
        data = super().clean()
        highlighted = data.get("highlighted") or []
        for attribute in ATTRIBUTES:
            if attribute in self.errors:
                continue
            if attribute in highlighted:
                if data.get(attribute) is None:
                    self.add_error(attribute, _("Un atributo destacado necesita su puntuación."))
            else:
                # A2 — an attribute not highlighted rolls two dice, whatever was typed.
                data[attribute] = UNHIGHLIGHTED_SCORE
        # Stored in the order of the rules' attributes.
        data["highlighted"] = [a for a in ATTRIBUTES if a in highlighted]
        return data

    def sheet_data(self, feats: list[dict[str, Any]], tools: list[dict[str, Any]]) -> SheetData:
        data = self.cleaned_data
        names = [
            n for n in (*self.fields, *ATTRIBUTES) if n in CORE_FIELDS or n in SHEET_EXPORT_FIELDS or n in NPC_FIELDS
        ]
        fields = {name: data[name] for name in dict.fromkeys(names)}
        return SheetData(fields=fields, feats=feats, tools=tools)

    @staticmethod
    def initial_for(character: Character) -> dict[str, Any]:
        sheet = character.aventuras
        initial: dict[str, Any] = {name: getattr(character, name) for name in CORE_FIELDS}
        initial |= {name: getattr(sheet, name) for name in (*SHEET_EXPORT_FIELDS, *NPC_FIELDS)}
        initial["highlighted"] = list(sheet.highlighted or [])
        return initial


SHEET_INITIAL = {attribute: UNHIGHLIGHTED_SCORE for attribute in ATTRIBUTES} | {"health": 5}


class FeatForm(forms.Form):
    """A feat (proeza); some need a hero point to work (A23)."""

    name = text_field(AventurasFeat, "name", label=_("Proeza"))
    description = text_field(
        AventurasFeat, "description", label=_("Qué hace"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )
    needs_hero_point = forms.BooleanField(label=_("Necesita un punto de Héroe (A23)"), required=False)


class ToolForm(forms.Form):
    """A tool: +1 to +3 to one attribute, for the uses it names (A29)."""

    name = text_field(AventurasTool, "name", label=_("Herramienta"))
    attribute = forms.ChoiceField(label=_("Atributo"), choices=ATTRIBUTE_CHOICES, error_messages=CHOICE_MESSAGES)
    bonus = _number(_("Bonificación"), 1, 3)
    uses = text_field(AventurasTool, "uses", label=_("Para qué sirve"), required=False)


class _RowsFormSet(RowsFormSet):
    def rows(self) -> list[dict[str, Any]]:
        return [
            {name: value for name, value in form.cleaned_data.items() if name != "DELETE"}
            for form in self.forms
            if form.cleaned_data and not self._should_delete_form(form)
        ]


# ``validate_max``: a sent form (or an imported file) with more rows is refused, not stored.
FeatFormSet = rows_formset(FeatForm, _RowsFormSet, extra=2, max_num=30)
ToolFormSet = rows_formset(ToolForm, _RowsFormSet, extra=1, max_num=30)


def feats_initial(character: Character) -> list[dict[str, Any]]:
    return [
        {"name": f.name, "description": f.description, "needs_hero_point": f.needs_hero_point}
        for f in character.aventuras.feats.all()
    ]


def tools_initial(character: Character) -> list[dict[str, Any]]:
    return [
        {"name": t.name, "attribute": t.attribute, "bonus": t.bonus, "uses": t.uses}
        for t in character.aventuras.tools.all()
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


def _reason_field(*, required: bool = False) -> forms.CharField:
    return forms.CharField(
        label=_("Motivo"),
        max_length=REASON_FIELD_MAX,
        required=required,
        error_messages={**LIMIT_MESSAGES, "required": _("Indica el motivo.")},
    )


# Someone other than the owner changes the sheet in play: the history says why.
REASON_MISSING = _("Indica el motivo: cambias la ficha de otra persona y queda en su historial.")


class _ReasonForm(forms.Form):
    """A change in play whose ``reason`` goes to the history; with
    ``reason_required`` (someone other than the owner, the GM, changes the
    sheet) it must say why."""

    def __init__(self, *args, reason_required: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        if reason_required:
            self.fields["reason"].required = True
            self.fields["reason"].error_messages["required"] = REASON_MISSING


class HealthForm(_ReasonForm):
    """The − / + buttons of the health levels."""

    change = forms.TypedChoiceField(choices=[("-1", "−1"), ("1", "+1")], coerce=int)
    reason = _reason_field()


class StateForm(_ReasonForm):
    """A state on the character: its name, the dice it adds or takes (A3),
    the threshold it moves (A7), which actions it touches."""

    name = text_field(AventurasState, "name", label=_("Estado"))
    modifier = _number(_("Dados"), *STATE_MODIFIER_RANGE, help_text=_("Negativo si quita dados (A3)."))
    threshold = forms.ChoiceField(
        label=_("Umbral (A7)"),
        choices=AventurasState.Threshold.choices,
        required=False,
        error_messages=CHOICE_MESSAGES,
    )
    applies_to = forms.ChoiceField(
        label=_("A qué acciones"), choices=APPLIES_CHOICES, required=False, error_messages=CHOICE_MESSAGES
    )
    reason = _reason_field()

    def clean_name(self) -> str:
        name = " ".join(self.cleaned_data["name"].split())
        if not name:
            raise forms.ValidationError(_("Escribe el nombre del estado."))
        return name


class StateRemoveForm(_ReasonForm):
    reason = _reason_field()


class ExperienceForm(forms.Form):
    """The GM sets the experience points, saying why."""

    experience = _number(_("Puntos de Experiencia"), 0, 9999)
    reason = _reason_field(required=True)


class ImportForm(forms.Form):
    file = forms.FileField(label=_("Archivo de ficha (JSON)"))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.helper = FormHelper()
        self.helper.add_input(Submit("submit", _("Importar")))

    def clean_file(self) -> dict[str, Any]:
        upload = self.cleaned_data["file"]
        not_a_sheet = _("El archivo no es una ficha de Hora de Aventuras exportada desde este sitio.")
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


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else ""
    return "" if value is None or isinstance(value, (dict, list)) else str(value)


IMPORTED_STATES_MAX = 50


def _count(data: dict[str, Any], name: str, what, *, maximum: int) -> int:
    value = data.get(name, 0)
    if type(value) is not int or not 0 <= value <= maximum:
        raise forms.ValidationError(
            _("%(what)s: escribe un número entero de 0 a %(max)s.") % {"what": what, "max": maximum}
        )
    return value


def import_play_state(data: dict[str, Any]) -> PlayState:
    """The sheet in play from an exported file: health lost, experience, hero
    points and states. Anything malformed is a ``ValidationError`` in Spanish.
    A state "por el morro" lasted a scene of the old campaign (A27): it is
    not brought back."""
    health_lost = _count(data, "health_lost", _("Niveles de salud perdidos"), maximum=HEALTH_RANGE[1])
    experience = _count(data, "experience", _("Experiencia"), maximum=9999)
    hero_points = data.get("hero_points")
    if hero_points is not None and (type(hero_points) is not int or hero_points < 0):
        raise forms.ValidationError(_("Puntos de Héroe: escribe un número entero de 0 o más."))
    raw = _list(data.get("states"))
    if len(raw) > IMPORTED_STATES_MAX:
        raise forms.ValidationError(_("El archivo trae demasiados estados."))
    states = []
    for number, item in enumerate(raw, start=1):
        form = StateForm({k: _value(item.get(k)) for k in StateForm.base_fields} if isinstance(item, dict) else {})
        if not form.is_valid():
            raise forms.ValidationError(
                _("Estado %(n)s: %(problems)s")
                % {"n": number, "problems": " ".join(e for errors in form.errors.values() for e in errors)}
            )
        if item.get("for_free") is True:
            continue
        states.append({k: v for k, v in form.cleaned_data.items() if k != "reason"})
    return PlayState(health_lost=health_lost, experience=experience, hero_points=hero_points, states=states)


def import_form_data(data: dict[str, Any]) -> dict[str, Any]:
    """An exported sheet as the POST data of the sheet form and its formsets,
    so an import is validated exactly like a typed sheet."""
    post: dict[str, Any] = {
        name: _value(data.get(name))
        for name in (*CORE_FIELDS, *SHEET_EXPORT_FIELDS, *NPC_FIELDS)
        if name != "highlighted"
    }
    post["highlighted"] = [_value(a) for a in _list(data.get("highlighted"))]
    for prefix, fields in (("feats", FeatForm.base_fields), ("tools", ToolForm.base_fields)):
        rows = [row for row in _list(data.get(prefix)) if isinstance(row, dict)]
        post.update({f"{prefix}-TOTAL_FORMS": str(len(rows)), f"{prefix}-INITIAL_FORMS": "0"})
        for i, row in enumerate(rows):
            post.update({f"{prefix}-{i}-{name}": _value(row.get(name)) for name in fields})
    return post
