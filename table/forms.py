"""The post form at the table: the forum's post form plus the GM's requests
it may answer and the roll rows of the campaign's game."""

from __future__ import annotations

from django import forms
from django.forms.models import ModelChoiceIterator
from django.utils.translation import gettext_lazy as _

from campaigns.forms import PostForm
from rolls.forms import client_seed_field

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

    def __init__(self, *args, system=None, npcs=(), requests=(), **kwargs):
        members = kwargs.get("members")
        super().__init__(*args, **kwargs)
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
            [
                system.roll_row(
                    data,
                    prefix=f"tirada-{i}",
                    characters=list(self.characters.values()),
                    npcs=self.npcs if self.can_npc else None,
                )
                for i in range(ROLL_ROWS)
            ]
            if system is not None
            else []
        )

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
