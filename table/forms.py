"""The post form at the table: the forum's post form plus the GM's requests
it may answer and the roll rows of the campaign's game."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from campaigns.forms import PostForm
from rolls.forms import client_seed_field

# Roll rows offered with a post ("añadir tirada"); unused rows are ignored.
ROLL_ROWS = 3


class TablePostForm(PostForm):
    # Any request id is taken here; the service says why one cannot be
    # answered (already answered, cancelled, asked of someone else).
    answers = forms.IntegerField(label=_("Petición de la dirección"), required=False, widget=forms.HiddenInput)
    answer_seed = client_seed_field(marked=True)

    def __init__(self, *args, system=None, npcs=(), requests=(), **kwargs):
        super().__init__(*args, **kwargs)
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
