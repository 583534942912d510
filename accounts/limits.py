"""Limits shared by every form of the site, in the lowest layer so that every
app may use them (ARCHITECTURE.md, "Layers").

A value the user types is checked against the limit of the model field it is
stored in (``max_length_of``), never against a repeated number: over-long
text must be a form error, not a database error (PostgreSQL refuses it with a
server error page, SQLite would keep it). The messages say the limit.
"""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError
from django.db import connection, models
from django.utils.translation import gettext_lazy as _

TOO_LONG_MESSAGE = _("Demasiado largo: como mucho %(limit_value)d caracteres (has escrito %(show_value)d).")
LINE_TOO_LONG_MESSAGE = _("La línea %(line)d es demasiado larga: como mucho %(limit)d caracteres (tiene %(length)d).")
LIMIT_MESSAGES = {
    "max_length": TOO_LONG_MESSAGE,
    "min_value": _("Escribe un número de %(limit_value)s o más."),
    "max_value": _("Escribe un número de %(limit_value)s o menos."),
}


def max_length_of(model: type[models.Model], name: str) -> int:
    """The length limit of ``model``'s text field ``name``."""
    return model._meta.get_field(name).max_length


def text_field(model: type[models.Model], name: str, **kwargs) -> forms.CharField:
    """A form field for text stored in ``model.name``, limited to that field's
    ``max_length`` (with our message)."""
    return forms.CharField(max_length=max_length_of(model, name), error_messages=LIMIT_MESSAGES, **kwargs)


def number_field(model: type[models.Model], name: str, **kwargs) -> forms.IntegerField:
    """``model``'s integer field ``name`` as a form field bounded by what the
    database stores (unless ``kwargs`` bound it more), with our messages."""
    field = model._meta.get_field(name)
    low, high = connection.ops.integer_field_range(field.get_internal_type())
    kwargs.setdefault("min_value", low)
    kwargs.setdefault("max_value", high)
    return field.formfield(error_messages=LIMIT_MESSAGES, **kwargs)


def split_lines(text: str, *, max_length: int) -> list[str]:
    """The non-empty lines of a "one per line" text area, spaces normalised,
    each stored as one row: a line longer than ``max_length`` is refused with
    its number (as the user counts them, blank lines included)."""
    lines = []
    for number, line in enumerate(text.splitlines(), start=1):
        phrase = " ".join(line.split())
        if len(phrase) > max_length:
            raise ValidationError(
                LINE_TOO_LONG_MESSAGE,
                code="line_too_long",
                params={"line": number, "limit": max_length, "length": len(phrase)},
            )
        if phrase:
            lines.append(phrase)
    return lines


# The most digits an id of a row has (a 64-bit integer's are 19): a longer one is no row's.
ID_MAX_DIGITS = 18


class ModelIdsField(forms.ModelMultipleChoiceField):
    """A checkbox list of rows that refuses a huge id as any other id it does
    not offer: the database's look-up would fail on a number no column holds."""

    def clean(self, value):
        for pk in value if isinstance(value, list | tuple) else ():
            if isinstance(pk, str) and len(pk.strip()) > ID_MAX_DIGITS:
                raise ValidationError(
                    self.error_messages["invalid_choice"], code="invalid_choice", params={"value": pk}
                )
        return super().clean(value)


class HiddenErrorsShown:
    """A form mixin: the errors of its hidden fields (a browser seed, a
    submission key) are also the form's own errors, which crispy-forms shows
    above the form; it draws no error for a field it does not draw."""

    def clean(self):
        cleaned = super().clean()
        for name, field in self.fields.items():
            if field.widget.is_hidden and name in self.errors:
                for error in list(self.errors[name]):
                    self.add_error(None, error)
        return cleaned


def refusal_message(form: forms.BaseForm, *, missing: str) -> str:
    """Why a small form shown in a page (a reason, a decision) was refused, for
    the message after the redirect: ``missing`` when a field was only left
    empty or given a choice it does not offer, the form's own errors
    otherwise (they name the limit)."""
    codes = {error.code for errors in form.errors.as_data().values() for error in errors}
    if codes <= {"required", "invalid_choice"}:
        return missing
    return " ".join(str(error) for errors in form.errors.values() for error in errors)
