"""Sheet forms. Every value a player types is checked here (and by the rules'
own checks), with Spanish messages; services receive normalised data."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from crispy_forms.helper import FormHelper
from crispy_forms.layout import Submit
from django import forms
from django.forms.formsets import TOTAL_FORM_COUNT
from django.forms.utils import ErrorDict
from django.http import QueryDict
from django.utils.translation import gettext_lazy as _

from accounts.limits import LIMIT_MESSAGES, HiddenErrorsShown, max_length_of, split_lines, text_field
from campaigns.models import Post
from rolls.forms import client_seed_field
from rules.hitos_codes import parse_damage_code
from rules.hitos_options import HitosOptions
from rules.hitos_scores import (
    CULTOS_INNOMBRABLES_BUDGET,
    Characteristics,
    check_characteristic,
    check_skill_category,
    creation_warnings,
    derived_scores,
)
from sheets.forms import RowsFormSet, rows_formset
from sheets.models import Character, SheetEvent
from systems.hitos.models import CHARACTERISTIC_FIELDS, CHARACTERISTIC_LABELS, Aspect, HitosSheet, Skill, Weapon
from systems.hitos.sheet.meters import METER_ACTIONS, METERS, NEEDS_AMOUNT
from systems.hitos.sheet.services import (
    CORE_FIELDS,
    EXPORT_FORMAT,
    ExhaustedAspect,
    PlayState,
    SheetData,
    TemporaryAspect,
)
from systems.hitos.texts import SKILL_CATEGORY_CHOICES, budget_warning_texts, shown_scores

LINES_HELP = _("Uno por línea.")
# Concept, traits, hitos and complications are each one aspect row.
ASPECT_MAX = max_length_of(Aspect, "phrase")
# A secuela is a phrase like an aspect (the sheet keeps them in a JSON list,
# which has no length of its own).
SECUELA_MAX = ASPECT_MAX


def _lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def _characteristic_field(name: str) -> forms.IntegerField:
    return forms.IntegerField(
        label=CHARACTERISTIC_LABELS[name],
        error_messages={"invalid": _("Escribe un número entero entre 1 y 10.")},
        widget=forms.NumberInput(attrs={"min": 1, "max": 10, "inputmode": "numeric"}),
    )


class SheetForm(forms.Form):
    """The HITOS sheet. Rendered with crispy-forms without its own <form> tag:
    the skills and weapons formsets share the page's form."""

    name = text_field(Character, "name", label=_("Nombre"))
    concept = text_field(Aspect, "phrase", label=_("Concepto (aspecto)"))
    cita = text_field(HitosSheet, "cita", label=_("Cita"), required=False)
    fortaleza = _characteristic_field("fortaleza")
    trait_fortaleza = text_field(Aspect, "phrase", label=_("Rasgo de Fortaleza (aspecto)"), required=False)
    reflejos = _characteristic_field("reflejos")
    trait_reflejos = text_field(Aspect, "phrase", label=_("Rasgo de Reflejos (aspecto)"), required=False)
    voluntad = _characteristic_field("voluntad")
    trait_voluntad = text_field(Aspect, "phrase", label=_("Rasgo de Voluntad (aspecto)"), required=False)
    intelecto = _characteristic_field("intelecto")
    trait_intelecto = text_field(Aspect, "phrase", label=_("Rasgo de Intelecto (aspecto)"), required=False)
    hitos = forms.CharField(
        label=_("Hitos"), widget=forms.Textarea(attrs={"rows": 4}), required=False, help_text=LINES_HELP
    )
    complications = forms.CharField(
        label=_("Complicaciones"), widget=forms.Textarea(attrs={"rows": 2}), required=False, help_text=LINES_HELP
    )
    drama = forms.IntegerField(label=_("Drama"), min_value=0, max_value=20, error_messages=LIMIT_MESSAGES)
    drama_points = forms.IntegerField(
        label=_("Puntos dramáticos actuales"), min_value=0, max_value=40, required=False, error_messages=LIMIT_MESSAGES
    )
    degeneracion = forms.IntegerField(
        label=_("Degeneración"), min_value=0, max_value=10, initial=0, error_messages=LIMIT_MESSAGES
    )
    armour = text_field(HitosSheet, "armour", label=_("Armadura"), required=False)
    rd = forms.IntegerField(
        label=_("RD de la armadura"), min_value=0, max_value=20, initial=0, error_messages=LIMIT_MESSAGES
    )
    secuelas_temporales = forms.CharField(
        label=_("Secuelas temporales"), widget=forms.Textarea(attrs={"rows": 2}), required=False, help_text=LINES_HELP
    )
    secuelas_permanentes = forms.CharField(
        label=_("Secuelas permanentes"),
        widget=forms.Textarea(attrs={"rows": 2}),
        required=False,
        help_text=LINES_HELP,
    )
    public_description = text_field(
        Character,
        "public_description",
        label=_("Descripción pública"),
        widget=forms.Textarea(attrs={"rows": 4}),
        required=False,
    )
    private_notes = text_field(
        Character,
        "private_notes",
        label=_("Notas privadas"),
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        help_text=_("Solo las ves tú y la dirección."),
    )
    gm_notes = text_field(
        Character,
        "gm_notes",
        label=_("Notas de la dirección"),
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        help_text=_("Solo las ve la dirección."),
    )

    def __init__(self, *args, is_gm: bool = False, creating: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        if not is_gm:
            del self.fields["gm_notes"]
        if creating or not is_gm:
            # A new character starts with as many points as its Drama (H26);
            # afterwards only the GM corrects the count by hand.
            del self.fields["drama_points"]
        self.helper = FormHelper()
        self.helper.form_tag = False
        self.helper.disable_csrf = True

    def _clean_characteristic(self, name: str) -> int:
        value = self.cleaned_data[name]
        try:
            return check_characteristic(value, str(CHARACTERISTIC_LABELS[name]))
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean_fortaleza(self) -> int:
        return self._clean_characteristic("fortaleza")

    def clean_reflejos(self) -> int:
        return self._clean_characteristic("reflejos")

    def clean_voluntad(self) -> int:
        return self._clean_characteristic("voluntad")

    def clean_intelecto(self) -> int:
        return self._clean_characteristic("intelecto")

    def clean_name(self) -> str:
        name = " ".join(self.cleaned_data["name"].split())
        if not name:
            raise forms.ValidationError(_("Escribe un nombre."))
        return name

    def clean_hitos(self) -> list[str]:
        return split_lines(self.cleaned_data["hitos"], max_length=ASPECT_MAX)

    def clean_complications(self) -> list[str]:
        return split_lines(self.cleaned_data["complications"], max_length=ASPECT_MAX)

    def clean_secuelas_temporales(self) -> list[str]:
        return split_lines(self.cleaned_data["secuelas_temporales"], max_length=SECUELA_MAX)

    def clean_secuelas_permanentes(self) -> list[str]:
        return split_lines(self.cleaned_data["secuelas_permanentes"], max_length=SECUELA_MAX)

    def sheet_fields(self) -> dict[str, Any]:
        data = self.cleaned_data
        fields = {
            name: data[name]
            for name in (
                "name",
                "cita",
                *CHARACTERISTIC_FIELDS,
                "drama",
                "degeneracion",
                "armour",
                "rd",
                "public_description",
                "private_notes",
            )
        }
        fields["secuelas"] = [{"text": t, "permanent": False} for t in data["secuelas_temporales"]] + [
            {"text": t, "permanent": True} for t in data["secuelas_permanentes"]
        ]
        if "gm_notes" in self.fields:
            fields["gm_notes"] = data["gm_notes"]
        if "drama_points" in self.fields and data.get("drama_points") is not None:
            fields["drama_points"] = data["drama_points"]
        return fields

    def sheet_data(self, skills, weapons) -> SheetData:
        data = self.cleaned_data
        return SheetData(
            fields=self.sheet_fields(),
            concept=data["concept"],
            traits={name: data[f"trait_{name}"] for name in CHARACTERISTIC_FIELDS},
            hitos=data["hitos"],
            complications=data["complications"],
            skills=skills,
            weapons=weapons,
        )

    @staticmethod
    def initial_for(character: Character) -> dict[str, Any]:
        aspects = [a for a in character.aspects.all() if a.ended_at is None]
        sheet = character.hitos
        initial: dict[str, Any] = {name: getattr(character, name) for name in CORE_FIELDS}
        initial |= {
            name: getattr(sheet, name)
            for name in (
                "cita",
                *CHARACTERISTIC_FIELDS,
                "drama",
                "drama_points",
                "degeneracion",
                "armour",
                "rd",
            )
        }
        initial["concept"] = next((a.phrase for a in aspects if a.kind == Aspect.Kind.CONCEPT), "")
        for a in aspects:
            if a.kind == Aspect.Kind.TRAIT:
                initial[f"trait_{a.characteristic}"] = a.phrase
        initial["hitos"] = "\n".join(a.phrase for a in aspects if a.kind == Aspect.Kind.HITO)
        initial["complications"] = "\n".join(a.phrase for a in aspects if a.kind == Aspect.Kind.COMPLICATION)
        initial["secuelas_temporales"] = "\n".join(s["text"] for s in sheet.secuelas if not s.get("permanent"))
        initial["secuelas_permanentes"] = "\n".join(s["text"] for s in sheet.secuelas if s.get("permanent"))
        return initial


class NpcForm(forms.Form):
    """A quick NPC stat block: no drama points (H24), no sanity meter."""

    name = text_field(Character, "name", label=_("Nombre"))
    concept = text_field(Aspect, "phrase", label=_("Concepto (aspecto)"), required=False)
    fortaleza = _characteristic_field("fortaleza")
    reflejos = _characteristic_field("reflejos")
    voluntad = _characteristic_field("voluntad")
    intelecto = _characteristic_field("intelecto")
    rd = forms.IntegerField(label=_("RD"), min_value=0, max_value=20, initial=0, error_messages=LIMIT_MESSAGES)
    damage_code = text_field(
        HitosSheet, "damage_code", label=_("Código de daño"), required=False, help_text=_("Por ejemplo C, M o mM.")
    )
    gm_notes = text_field(
        Character,
        "gm_notes",
        label=_("Notas de la dirección"),
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
    )

    clean_fortaleza = SheetForm.clean_fortaleza
    clean_reflejos = SheetForm.clean_reflejos
    clean_voluntad = SheetForm.clean_voluntad
    clean_intelecto = SheetForm.clean_intelecto
    _clean_characteristic = SheetForm._clean_characteristic
    clean_name = SheetForm.clean_name

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.helper = FormHelper()
        self.helper.form_tag = False
        self.helper.disable_csrf = True

    def clean_damage_code(self) -> str:
        code = self.cleaned_data["damage_code"].strip()
        if code:
            try:
                parse_damage_code(code)
            except ValueError as exc:
                raise forms.ValidationError(str(exc)) from None
        return code

    def sheet_data(self, skills) -> SheetData:
        data = self.cleaned_data
        fields = {name: data[name] for name in ("name", *CHARACTERISTIC_FIELDS, "rd", "damage_code", "gm_notes")}
        return SheetData(fields=fields, concept=data["concept"], skills=skills)


class SkillForm(forms.Form):
    name = text_field(Skill, "name", label=_("Habilidad"))
    category = forms.ChoiceField(label=_("Categoría"), choices=[("", "—"), *SKILL_CATEGORY_CHOICES])
    value = forms.IntegerField(
        label=_("Valor"),
        min_value=0,
        max_value=10,
        error_messages=LIMIT_MESSAGES,
        widget=forms.NumberInput(attrs={"min": 0, "max": 10, "inputmode": "numeric"}),
    )

    def clean_category(self) -> str:
        try:
            return check_skill_category(self.cleaned_data["category"])
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None


class WeaponForm(forms.Form):
    name = text_field(Weapon, "name", label=_("Arma"))
    damage_code = text_field(Weapon, "damage_code", label=_("Código de daño"))
    melee = forms.TypedChoiceField(
        label=_("Tipo"),
        choices=[("1", _("Cuerpo a cuerpo")), ("0", _("A distancia"))],
        coerce=lambda v: v == "1",
        initial="1",
    )
    notes = text_field(Weapon, "notes", label=_("Notas"), required=False)

    def clean_damage_code(self) -> str:
        code = self.cleaned_data["damage_code"].strip()
        try:
            parse_damage_code(code)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None
        return code


class _RowsFormSet(RowsFormSet):
    def rows(self) -> list[tuple]:
        rows = []
        for form in self.forms:
            if not form.cleaned_data or self._should_delete_form(form):
                continue
            rows.append(tuple(form.cleaned_data[name] for name in form.fields if name != "DELETE"))
        return rows


SkillFormSet = rows_formset(SkillForm, _RowsFormSet, extra=3, max_num=40)
WeaponFormSet = rows_formset(WeaponForm, _RowsFormSet, extra=1, max_num=20)


@dataclass(frozen=True)
class Rows:
    """A list of rows of the sheet form that grows one row at a time: its
    formset, its prefix, the name of the address that gives one more row
    (``rows``: "habilidades", "armas") and the name of the button that adds
    one without JavaScript."""

    formset: type[forms.BaseFormSet]
    prefix: str
    rows: str
    button: str

    @property
    def total_name(self) -> str:
        return f"{self.prefix}-{TOTAL_FORM_COUNT}"

    @property
    def max_num(self) -> int:
        return self.formset.max_num

    def new_row(self, index: int) -> forms.Form:
        """The empty row ``index`` as its formset makes it, the first field
        focused (it comes when asked for)."""
        formset = self.formset(prefix=self.prefix)
        row = formset.form(
            auto_id=formset.auto_id,
            prefix=formset.add_prefix(index),
            empty_permitted=True,
            use_required_attribute=False,
            renderer=formset.renderer,
        )
        formset.add_fields(row, index)
        first = next(iter(row.fields.values()))
        first.widget.attrs["autofocus"] = True
        return row

    def with_one_more(self, data: QueryDict) -> QueryDict:
        """The form's data with one more row (none past ``max_num``)."""
        data = data.copy()
        total = data.get(self.total_name, "")
        count = int(total) if total.isascii() and total.isdigit() and len(total) <= 4 else 0
        data[self.total_name] = str(min(count + 1, self.max_num))
        return data


SKILL_ROWS = Rows(SkillFormSet, "skills", "habilidades", "add_skill")
WEAPON_ROWS = Rows(WeaponFormSet, "weapons", "armas", "add_weapon")
ROWS = {rows.rows: rows for rows in (SKILL_ROWS, WEAPON_ROWS)}


def shown_unchecked(*forms_and_formsets) -> None:
    """Forms shown again with what was typed, but not checked: a row was
    added and nothing is saved, so nothing can be wrong yet (no error shows
    until the sheet is saved or recalculated)."""
    for item in forms_and_formsets:
        if isinstance(item, forms.BaseFormSet):
            shown_unchecked(*item.forms)
            item._errors = [form.errors for form in item.forms]
            item._non_form_errors = item.error_class(error_class="nonform", renderer=item.renderer)
        else:
            item._errors = ErrorDict(renderer=item.renderer)


def skills_initial(character: Character) -> list[dict[str, Any]]:
    return [{"name": s.name, "category": s.category, "value": s.value} for s in character.skills.all()]


def weapons_initial(character: Character) -> list[dict[str, Any]]:
    return [
        {"name": w.name, "damage_code": w.damage_code, "melee": "1" if w.melee else "0", "notes": w.notes}
        for w in character.weapons.all()
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
        Character,
        "review_comment",
        label=_("Comentario"),
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
    )
    accept_budget = forms.BooleanField(label=_("Acepto las desviaciones del presupuesto de creación"), required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.helper = FormHelper()
        self.helper.add_input(Submit("submit", _("Enviar la revisión")))

    def clean(self):
        data = super().clean()
        if data.get("decision") == "return" and not data.get("comment", "").strip():
            self.add_error("comment", _("Explica qué hay que cambiar."))
        return data


def _post_field(campaign) -> forms.ModelChoiceField:
    return forms.ModelChoiceField(
        label=_("Mensaje (nº, opcional)"),
        queryset=Post.objects.filter(scene__campaign=campaign),
        required=False,
        widget=forms.NumberInput(attrs={"min": 1, "inputmode": "numeric"}),
        error_messages={"invalid_choice": _("No hay ningún mensaje con ese número en esta partida.")},
    )


METER_ACTION_LABELS = {
    "damage": _("Daño (ya restada la RD)"),
    "imbalance": _("Desequilibrio mental"),
    "shock": _("Shock tras el descanso"),
    "stress": _("Estrés tras el descanso"),
    "stabilise": _("Estabilizar (borra barras)"),
    "heal": _("Curar (aspas primero)"),
    "healing_roll": _("Tirada de curación semanal"),
    "recovery_roll": _("Tirada de recuperación mensual"),
}


class MeterForm(HiddenErrorsShown, forms.Form):
    action = forms.ChoiceField(label=_("Acción"))
    amount = forms.IntegerField(
        label=_("Cantidad"),
        min_value=0,
        max_value=200,
        required=False,
        error_messages={
            **LIMIT_MESSAGES,
            "invalid": _("Escribe un número entero de 0 o más."),
            "min_value": _("La cantidad no puede ser negativa."),
        },
        widget=forms.NumberInput(attrs={"min": 0, "inputmode": "numeric"}),
    )
    rested = forms.BooleanField(
        label=_("Con descanso suficiente (tiradas de curación y recuperación)"), required=False, initial=True
    )
    reason = text_field(SheetEvent, "reason", label=_("Motivo"), required=False)
    # The browser's seed for the test the action may roll (mass damage,
    # trauma, healing, recovery), and the key that makes a retried form
    # harmless; marked, as the form's prefix renames it.
    client_seed = client_seed_field(marked=True)

    def __init__(self, *args, meter: str, campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.meter = meter
        self.fields["action"].choices = [(a, METER_ACTION_LABELS[a]) for a in METER_ACTIONS[meter]]
        self.fields["post"] = _post_field(campaign)
        self.prefix = meter

    def clean(self):
        data = super().clean()
        if data.get("action") in NEEDS_AMOUNT and data.get("amount") is None and "amount" not in self.errors:
            self.add_error("amount", _("Indica la cantidad."))
        return data


class DramaForm(forms.Form):
    change = forms.TypedChoiceField(label=_("Cambio"), choices=[("-1", _("Gastar 1")), ("1", _("Ganar 1"))], coerce=int)
    reason = text_field(SheetEvent, "reason", label=_("Motivo"), required=False)

    def __init__(self, *args, campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["post"] = _post_field(campaign)
        self.prefix = "drama"


class AspectForm(forms.Form):
    phrase = text_field(Aspect, "phrase", label=_("Aspecto temporal"))
    duration = forms.ChoiceField(label=_("Duración"), choices=Aspect.Duration.choices)
    origin = text_field(Aspect, "origin", label=_("Origen"), required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.prefix = "aspect"


class AspectActionForm(forms.Form):
    action = forms.ChoiceField(choices=[("exhaust", _("Agotar")), ("recover", _("Recuperar")), ("end", _("Retirar"))])
    until = forms.ChoiceField(
        required=False,
        choices=[(Aspect.Duration.SESSION, _("próxima sesión")), (Aspect.Duration.STORY, _("próxima historia"))],
    )


class NewSessionForm(forms.Form):
    reason = text_field(SheetEvent, "reason", label=_("Nota"), required=False)
    new_story = forms.BooleanField(label=_("Empieza también una nueva historia"), required=False)


class NewSceneForm(forms.Form):
    reason = text_field(SheetEvent, "reason", label=_("Nota"), required=False)


class ImportForm(forms.Form):
    file = forms.FileField(label=_("Archivo de ficha (JSON)"))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.helper = FormHelper()
        self.helper.add_input(Submit("submit", _("Importar")))

    def clean_file(self) -> dict[str, Any]:
        upload = self.cleaned_data["file"]
        not_a_sheet = _("El archivo no es una ficha de HITOS exportada desde este sitio.")
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


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


# --- the sheet in play, from an exported file ---------------------------------------

NOT_EXPORTED_SHAPE = _("%(what)s: el formato no es el de una ficha exportada.")
EXHAUST_UNTIL_MESSAGE = _("Un aspecto se agota hasta la próxima sesión o la próxima historia.")
EXHAUSTIBLE_KINDS = (Aspect.Kind.CONCEPT, Aspect.Kind.TRAIT, Aspect.Kind.HITO, Aspect.Kind.COMPLICATION)
EXHAUST_UNTIL = (Aspect.Duration.SESSION, Aspect.Duration.STORY)
# A guard on what one upload may create, like the formsets' ``max_num``.
IMPORTED_ASPECTS_MAX = 100


def _texts(item: Any, keys: tuple[str, ...]) -> bool:
    """Whether ``item`` is an object whose ``keys``, where present, are texts."""
    return isinstance(item, dict) and all(isinstance(item.get(key, ""), str) for key in keys)


def _import_marks(value: Any, problems: list[str]) -> dict[str, tuple[int, int]]:
    """Slashes and crosses by meter: whole numbers of 0 or more. A meter the
    file leaves out is not in the result (it starts clean)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.append(NOT_EXPORTED_SHAPE % {"what": _("Medidores")})
        return {}
    marks = {}
    for kind in METERS.values():
        entry = value.get(kind.key)
        if entry is None:
            continue
        counts = [entry.get(name) if isinstance(entry, dict) else None for name in ("slashes", "crosses")]
        if all(type(count) is int and count >= 0 for count in counts):
            marks[kind.key] = (counts[0], counts[1])
        else:
            problems.append(
                _("%(meter)s: las barras y las aspas deben ser números enteros de 0 o más.") % {"meter": kind.label}
            )
    return marks


def _temporary_aspect(item: Any, what: str, problems: list[str]) -> TemporaryAspect | None:
    """Checked like a temporary aspect typed on the sheet (``AspectForm``)."""
    if not _texts(item, ("phrase", "duration", "origin", "exhausted_until")):
        problems.append(NOT_EXPORTED_SHAPE % {"what": what})
        return None
    form = AspectForm({f"aspect-{name}": item.get(name, "") for name in ("phrase", "duration", "origin")})
    until = item.get("exhausted_until", "")
    found = [
        f"{what}, {Aspect._meta.get_field(name).verbose_name}: {' '.join(errors)}"
        for name, errors in form.errors.items()
    ]
    if until and until not in EXHAUST_UNTIL:
        found.append(f"{what}, {Aspect._meta.get_field('exhausted_until').verbose_name}: {EXHAUST_UNTIL_MESSAGE}")
    problems += found
    if found:
        return None
    data = form.cleaned_data
    return TemporaryAspect(data["phrase"], data["duration"], data["origin"], until)


def _exhausted_aspect(item: Any, what: str, problems: list[str]) -> ExhaustedAspect | None:
    """An own aspect (concept, trait, hito, complication) exhausted until the
    next session or story; the sheet finds it by kind and phrase."""
    if (
        not _texts(item, ("kind", "characteristic", "phrase", "exhausted_until"))
        or item.get("kind") not in EXHAUSTIBLE_KINDS
        or not item.get("phrase", "").strip()
    ):
        problems.append(NOT_EXPORTED_SHAPE % {"what": what})
        return None
    trait = item["kind"] == Aspect.Kind.TRAIT
    characteristic = item.get("characteristic", "") if trait else ""
    if trait and characteristic not in CHARACTERISTIC_FIELDS:
        problems.append(NOT_EXPORTED_SHAPE % {"what": what})
        return None
    until = item.get("exhausted_until", "")
    if until not in EXHAUST_UNTIL:
        problems.append(f"{what}, {Aspect._meta.get_field('exhausted_until').verbose_name}: {EXHAUST_UNTIL_MESSAGE}")
        return None
    return ExhaustedAspect(item["kind"], item["phrase"], until, characteristic)


def _import_aspects(value: Any, parse, label: str, numbered: str, problems: list[str]) -> list | None:
    """A list of aspects, each read by ``parse``; ``None`` when the file has none (an older export)."""
    if value is None:
        return None
    if not isinstance(value, list):
        problems.append(NOT_EXPORTED_SHAPE % {"what": label})
        return None
    if len(value) > IMPORTED_ASPECTS_MAX:
        problems.append(
            _("%(what)s: como mucho %(max)s (el archivo trae %(count)s).")
            % {"what": label, "max": IMPORTED_ASPECTS_MAX, "count": len(value)}
        )
        return None
    parsed = [parse(item, numbered % {"n": n}, problems) for n, item in enumerate(value, start=1)]
    return [aspect for aspect in parsed if aspect is not None]


def import_play_state(data: dict[str, Any]) -> PlayState:
    """The sheet in play as an exported file tells it (``services.sheet_export``):
    the marks of both meters, the temporary aspects (duration, origin and
    exhaustion) and the exhausted own aspects. What the file leaves out (an
    older export) starts as on a new sheet; a bad value is a
    ``ValidationError`` listing every problem."""
    problems: list[str] = []
    play = PlayState(
        marks=_import_marks(data.get("meters"), problems),
        temporary=_import_aspects(
            data.get("temporary_aspects"),
            _temporary_aspect,
            _("Aspectos temporales"),
            _("Aspecto temporal %(n)s"),
            problems,
        ),
        exhausted=_import_aspects(
            data.get("exhausted_aspects"),
            _exhausted_aspect,
            _("Aspectos agotados"),
            _("Aspecto agotado %(n)s"),
            problems,
        ),
    )
    if problems:
        raise forms.ValidationError(problems)
    return play


def import_form_data(data: dict[str, Any]) -> dict[str, Any]:
    """An exported sheet as the POST data of the sheet form and its formsets,
    so an import is validated exactly like a typed sheet."""
    chars = data.get("characteristics") if isinstance(data.get("characteristics"), dict) else {}
    traits = data.get("traits") if isinstance(data.get("traits"), dict) else {}
    secuelas = [s for s in _list(data.get("secuelas")) if isinstance(s, dict)]
    post: dict[str, Any] = {
        "name": _text(data.get("name")),
        "concept": _text(data.get("concept")),
        "cita": _text(data.get("cita")),
        "hitos": "\n".join(_text(h) for h in _list(data.get("hitos"))),
        "complications": "\n".join(_text(c) for c in _list(data.get("complications"))),
        "drama": data.get("drama", ""),
        "degeneracion": data.get("degeneracion", 0),
        "armour": _text(data.get("armour")),
        "rd": data.get("rd", 0),
        "damage_code": _text(data.get("damage_code")),
        "secuelas_temporales": "\n".join(_text(s.get("text")) for s in secuelas if not s.get("permanent")),
        "secuelas_permanentes": "\n".join(_text(s.get("text")) for s in secuelas if s.get("permanent")),
        "public_description": _text(data.get("public_description")),
        "private_notes": _text(data.get("private_notes")),
        "gm_notes": _text(data.get("gm_notes")),
    }
    for name in CHARACTERISTIC_FIELDS:
        post[name] = chars.get(name, "")
        post[f"trait_{name}"] = _text(traits.get(name))
    skills = [s for s in _list(data.get("skills")) if isinstance(s, dict)]
    post.update({"skills-TOTAL_FORMS": len(skills), "skills-INITIAL_FORMS": 0})
    for i, s in enumerate(skills):
        post.update(
            {
                f"skills-{i}-name": _text(s.get("name")),
                f"skills-{i}-category": _text(s.get("category")),
                f"skills-{i}-value": s.get("value", ""),
            }
        )
    weapons = [w for w in _list(data.get("weapons")) if isinstance(w, dict)]
    post.update({"weapons-TOTAL_FORMS": len(weapons), "weapons-INITIAL_FORMS": 0})
    for i, w in enumerate(weapons):
        post.update(
            {
                f"weapons-{i}-name": _text(w.get("name")),
                f"weapons-{i}-damage_code": _text(w.get("damage_code")),
                f"weapons-{i}-melee": "1" if w.get("melee", True) else "0",
                f"weapons-{i}-notes": _text(w.get("notes")),
            }
        )
    return {k: str(v) if v is not None else "" for k, v in post.items()}


def _count(value) -> int:
    try:
        return max(0, int(value))
    except (TypeError, ValueError):
        return 0


def sheet_preview(data, options: HitosOptions) -> dict[str, Any]:
    """The derived scores and budget warnings of what is typed so far (raw
    form data, possibly half-typed), for the live preview. The rules do the
    arithmetic; anything they refuse just leaves that part out."""
    try:
        characteristics = Characteristics(*(int(data.get(name, "")) for name in CHARACTERISTIC_FIELDS))
    except (TypeError, ValueError):
        return {"scores": None, "warnings": []}
    skills = []
    for i in range(min(_count(data.get("skills-TOTAL_FORMS")), 40)):
        category, value = data.get(f"skills-{i}-category", ""), data.get(f"skills-{i}-value", "").strip()
        # ASCII digits only ("²" is a digit to str.isdigit but not to int) and
        # short: a skill is worth 0–10.
        if category and value.isascii() and value.isdigit() and len(value) <= 2 and not data.get(f"skills-{i}-DELETE"):
            skills.append((category, int(value)))
    combate = max((value for category, value in skills if category == "combate"), default=0)
    scores = shown_scores(derived_scores(characteristics, combate=combate, options=options))
    try:
        warnings = creation_warnings(
            CULTOS_INNOMBRABLES_BUDGET,
            characteristics=characteristics,
            skills=skills,
            hitos=len(_lines(data.get("hitos", ""))),
            citas=1 if data.get("cita", "").strip() else 0,
            drama=_count(data.get("drama")),
            complications=len(_lines(data.get("complications", ""))),
        )
    except ValueError:
        warnings = []
    return {"scores": scores, "warnings": budget_warning_texts(warnings)}
