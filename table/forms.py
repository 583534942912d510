"""The post form at the table: the forum's post form plus the GM's requests
it may answer and the roll rows of the campaign's game."""

from __future__ import annotations

from crispy_forms.helper import FormHelper
from django import forms
from django.forms.models import ModelChoiceIterator
from django.utils.translation import gettext_lazy as _

from accounts.limits import text_field
from accounts.models import User
from campaigns.forms import PostForm
from campaigns.models import Scene
from rolls.forms import client_seed_field
from sheets.models import Character
from table import takeover as takeovers
from table.models import Takeover

# Roll rows offered with a post ("añadir tirada"); unused rows are ignored.
ROLL_ROWS = 3


class ReadOnceChoices(ModelChoiceIterator):
    """A model choice field's choices from its queryset's rows, read once
    however often they are asked for (the scene page reads them for its
    cached form's key, then again to render the form when not cached)."""

    def __iter__(self):
        if self.field.empty_label is not None:
            yield ("", self.field.empty_label)
        for obj in self.queryset:
            yield self.choice(obj)

    def __len__(self):
        return len(self.queryset) + (1 if self.field.empty_label is not None else 0)


class TablePostForm(PostForm):
    # Any request id is taken here; the service says why one cannot be
    # answered (already answered, cancelled, asked of someone else).
    answers = forms.IntegerField(label=_("Petición de la dirección"), required=False, widget=forms.HiddenInput)
    answer_seed = client_seed_field(marked=True)

    def __init__(self, *args, system=None, npcs=(), requests=(), taken=None, scene_id=None, **kwargs):
        members = kwargs.get("members")
        super().__init__(*args, **kwargs)
        # The characters the writer carries for their absent owners
        # (``table.takeover``: character id → the owner's name) say so.
        if taken:
            self.fields["voice"].choices = [
                self._voice_choice(value, label, taken) for value, label in self.fields["voice"].choices
            ]
        chosen = self.fields["chosen"]
        chosen.iterator = ReadOnceChoices
        chosen.queryset = chosen.queryset  # the widget takes its choices anew
        if members is not None and members._result_cache is not None:
            # Members the caller already read (for the page's key) are not read again.
            chosen.queryset._result_cache = members._result_cache
        self.requests = {r.pk: r for r in requests}
        if self.requests:
            choices = [
                (r.pk, _("Contestar: %(purpose)s (%(name)s)") % {"purpose": r.purpose, "name": r.character.name})
                for r in requests
            ]
            self.fields["answers"].widget = forms.RadioSelect(
                choices=[*choices, ("", _("No contestar en este mensaje"))]
            )
            self.initial.setdefault("answers", requests[0].pk)
        self.npcs = {str(c.pk): c for c in npcs}
        data = args[0] if args else kwargs.get("data")
        # The campaign's game makes the rows (none when its system is not installed).
        self.roll_forms = (
            system.roll_rows(
                data,
                prefixes=[f"tirada-{i}" for i in range(ROLL_ROWS)],
                characters=list(self.characters.values()),
                npcs=self.npcs if self.can_npc else None,
                scene_id=scene_id,
            )
            if system is not None
            else []
        )

    def _voice_choice(self, value: str, label, taken: dict[int, str]) -> tuple[str, str]:
        kind, _colon, pk = value.partition(":")
        if kind != "character" or int(pk) not in taken:
            return value, label
        values = {"name": self.characters[pk].name, "owner": taken[int(pk)]}
        return value, _("Personaje: %(name)s (en nombre de %(owner)s)") % values

    def clean(self):
        cleaned = super().clean()
        answers = cleaned.get("answers")
        request = self.requests.get(answers) if answers is not None else None
        if request is not None:
            if cleaned["character"] is None or cleaned["character"].pk != request.character_id:
                self.add_error(
                    "answers",
                    _("Para contestar a la petición, escribe como %(name)s.") % {"name": request.character.name},
                )
        return cleaned

    def is_valid(self) -> bool:
        # Every row is validated too, so that all errors show at once.
        rows_valid = [row.is_valid() for row in self.roll_forms]
        return super().is_valid() and all(rows_valid)

    def used_rolls(self) -> list[forms.Form]:
        return [row for row in self.roll_forms if row.is_valid() and row.cleaned_data.get("used")]


class TakeoverForm(forms.Form):
    """The direction gives an absent player's character to someone
    (``table:takeover-start``): what the owner allows decides who may take
    it, and for which scenes (``table.takeover.refusal``)."""

    character = forms.ModelChoiceField(
        label=_("Personaje"),
        queryset=Character.objects.none(),
        error_messages={"invalid_choice": _("Elige el personaje de un jugador ausente de la lista.")},
    )
    taken_by = forms.ModelChoiceField(
        label=_("Quién lo lleva"),
        queryset=User.objects.none(),
        error_messages={"invalid_choice": _("Elige a la dirección o a un jugador de la partida.")},
    )
    scene = forms.ModelChoiceField(
        label=_("Escena"),
        queryset=Scene.objects.none(),
        required=False,
        empty_label=_("Todas las escenas (solo la dirección)"),
        help_text=_("Obligatoria si lo lleva un jugador: solo la llevará en esa escena."),
        error_messages={"invalid_choice": _("Elige una escena de la partida que no esté archivada.")},
    )
    reason = text_field(
        Takeover,
        "reason",
        label=_("Motivo"),
        required=False,
        help_text=_("Queda en el registro de moderación y su dueño lo verá."),
    )

    def __init__(self, *args, campaign, candidates, direction: set[int], **kwargs):
        super().__init__(*args, **kwargs)
        # Every away player's character not carried now; what its owner
        # allows is checked in ``clean`` so that a refusal says why.
        self.candidates = {c.character.pk: c for c in candidates if c.current is None}
        self.direction = direction
        character = self.fields["character"]
        character.queryset = Character.objects.filter(pk__in=list(self.candidates)).order_by("name", "pk")
        character.label_from_instance = self._character_label
        taken_by = self.fields["taken_by"]
        taken_by.queryset = takeovers.takers(campaign)
        taken_by.label_from_instance = self._taker_label
        self.fields["scene"].queryset = takeovers.playable_scenes(campaign)
        self.helper = FormHelper()
        self.helper.form_tag = False

    def _character_label(self, character: Character) -> str:
        candidate = self.candidates[character.pk]
        return _("%(name)s, de %(owner)s: %(consent)s") % {
            "name": character.name,
            "owner": candidate.owner.public_name,
            "consent": candidate.consent_label,
        }

    def _taker_label(self, user: User) -> str:
        return _("%(name)s (dirección)") % {"name": user.public_name} if user.pk in self.direction else user.public_name

    def clean_reason(self) -> str:
        return " ".join(self.cleaned_data["reason"].split())

    def clean(self):
        cleaned = super().clean()
        character, taken_by = cleaned.get("character"), cleaned.get("taken_by")
        if character is None or taken_by is None or "scene" in self.errors:
            return cleaned
        candidate = self.candidates[character.pk]
        if taken_by.pk == candidate.owner.pk:
            self.add_error("taken_by", _("Su dueño no se lleva a sí mismo el personaje: elige a otra persona."))
            return cleaned
        refused = takeovers.refusal(
            consent=candidate.consent,
            owner=candidate.owner,
            away=True,
            taker_is_direction=taken_by.pk in self.direction,
            scene=cleaned.get("scene"),
        )
        if refused is not None:
            self.add_error(refused.code if refused.code in self.fields else "character", refused)
        return cleaned


class TakeoverEndForm(forms.Form):
    """Giving a carried character back (``table:takeover-end``). The reason
    goes in the moderation log after the character's and the taker's names,
    so it is kept as short as the one given when it was taken."""

    reason = text_field(Takeover, "reason", label=_("Motivo"), required=False)

    def clean_reason(self) -> str:
        return " ".join(self.cleaned_data["reason"].split())
