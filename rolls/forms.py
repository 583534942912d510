from crispy_forms.helper import FormHelper
from crispy_forms.layout import Submit
from django import forms
from django.core.validators import RegexValidator
from django.utils.translation import gettext_lazy as _

from accounts.limits import LIMIT_MESSAGES, HiddenErrorsShown, max_length_of, text_field
from rolls.models import RollEntry
from rules.notation import MAX_LENGTH

# --- Roll forms -------------------------------------------------------------------------

CLIENT_SEED_MESSAGE = _("La semilla del navegador no es válida: de 1 a 64 letras, cifras, guiones o guiones bajos.")
# The largest extra modifier a roll form takes, either way.
MODIFIER_LIMIT = 30
# A modifier's reason is a label in the roll's signed breakdown (no column).
MODIFIER_REASON_MAX = 100
# rollog/v1 §3.3: 1–64 characters, the length of the stored field.
CLIENT_SEED_MAX_LENGTH = max_length_of(RollEntry, "client_seed")


def modifier_field(label, **kwargs) -> forms.IntegerField:
    """An optional modifier of a roll, at most MODIFIER_LIMIT either way."""
    kwargs.setdefault("required", False)
    return forms.IntegerField(
        label=label, min_value=-MODIFIER_LIMIT, max_value=MODIFIER_LIMIT, error_messages=LIMIT_MESSAGES, **kwargs
    )


def client_seed_field(*, marked: bool = False) -> forms.CharField:
    """The hidden field for a roll's browser seed (rollog/v1 §3.3), filled by
    ``static/js/client-seed.js``: fields named ``client_seed``, or ``marked``
    ones (``data-client-seed``) when a form holds several. Empty without
    JavaScript: the server then makes the seed and the roll says so."""
    attrs = {"data-client-seed": "true"} if marked else {}
    return forms.CharField(
        required=False,
        widget=forms.HiddenInput(attrs=attrs),
        strip=False,
        # The pattern also bounds the length (64), so one message covers both.
        validators=[RegexValidator(rf"\A[0-9A-Za-z_-]{{1,{CLIENT_SEED_MAX_LENGTH}}}\Z", CLIENT_SEED_MESSAGE)],
    )


class FreeRollForm(HiddenErrorsShown, forms.Form):
    notation = forms.CharField(
        label=_("Dados"),
        max_length=MAX_LENGTH,
        error_messages=LIMIT_MESSAGES,
        help_text=_("Por ejemplo 3d10, 2d6+1d8+2, 4d6kh3 (quedarse con los 3 mayores) o 6d6>=5 (contar éxitos)."),
    )
    purpose = text_field(RollEntry, "purpose", label=_("Para qué"), required=False)
    client_seed = client_seed_field()
    # The head of the log this page showed (§3.3): a SHA-256 in hex.
    seen = forms.CharField(
        required=False,
        widget=forms.HiddenInput,
        max_length=max_length_of(RollEntry, "entry_hash"),
        error_messages=LIMIT_MESSAGES,
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.helper = FormHelper()
        self.helper.add_input(Submit("submit", _("Tirar")))
