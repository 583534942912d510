"""Forms of the hero point panel (A21–A28). They only collect choices and the
"why"; the services decide (and refuse in Spanish)."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.limits import LIMIT_MESSAGES, max_length_of
from rules.aventuras import HeroSpend
from systems.aventuras.heroes.services import MAX_RECOVERED_LEVELS
from systems.aventuras.models import HeroMove, HeroRequest

CHOOSE = {"required": _("Elige una opción."), "invalid_choice": _("Esa opción no está en la lista.")}
EMPTY = ("", _("— elige —"))
# Each spend's form: its prefix (the posted names and the ids on the page) and what it chooses.
SPEND_USES = {
    HeroSpend.IGNORE_STATE: ("ignorar", _("Estado que ignoras este turno")),
    HeroSpend.RECOVER: ("recuperar", _("Niveles de salud")),
    HeroSpend.FEAT: ("proeza", _("Proeza")),
}


WHY_LABEL = _("Por qué")
# A point of someone else's hero spent by the GM: the history says why.
SPEND_WHY_MISSING = _("Escribe por qué gastas un punto de Héroe de otra persona.")


def _why(*, required: bool, model=HeroMove, label=WHY_LABEL) -> forms.CharField:
    return forms.CharField(
        max_length=max_length_of(model, "why"),
        label=label,
        required=required,
        error_messages={**LIMIT_MESSAGES, "required": _("Escribe por qué.")},
        widget=forms.TextInput,
    )


def _scene_field(*, required: bool) -> forms.ChoiceField:
    return forms.ChoiceField(
        label=_("Escena"),
        required=required,
        error_messages={"required": _("Elige la escena en la que juegas."), "invalid_choice": CHOOSE["invalid_choice"]},
    )


class _SceneForm(forms.Form):
    """A form that names the scene (for the turn, A24, or where it happened)."""

    scene_required = True

    def __init__(self, *args, scenes=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.scenes = {str(s.pk): s for s in scenes}
        self.fields["scene"].choices = ([] if self.scene_required else [("", _("— ninguna —"))]) + [
            (pk, s.title) for pk, s in self.scenes.items()
        ]

    def clean(self):
        cleaned = super().clean()
        cleaned["scene_row"] = self.scenes.get(cleaned.get("scene") or "")
        return cleaned


class SpendForm(_SceneForm):
    """A23 — a spend that is not a roll; ``use`` says which (and the prefix).
    ``why_required``: someone other than the hero's player (the GM) spends
    it, so the history says why (as ``services.spend_why``)."""

    scene = _scene_field(required=True)
    target = forms.ChoiceField(error_messages=CHOOSE)
    with_experience = forms.BooleanField(label=_("Pagar con 2 PX (punto instantáneo, A28)"), required=False)
    why = _why(required=False)

    def __init__(self, *args, use: HeroSpend, options=(), why_required: bool = False, **kwargs):
        prefix, label = SPEND_USES[HeroSpend(use)]
        super().__init__(*args, prefix=prefix, **kwargs)
        self.use = HeroSpend(use)
        if why_required:
            self.fields["why"].required = True
            self.fields["why"].error_messages["required"] = SPEND_WHY_MISSING
        self.fields["target"].label = label
        if self.use == HeroSpend.RECOVER:
            self.fields["target"].choices = [(str(n), str(n)) for n in range(1, MAX_RECOVERED_LEVELS + 1)]
            self.fields["target"].initial = str(MAX_RECOVERED_LEVELS)
        else:
            self.fields["target"].choices = [EMPTY] + [(str(row.pk), row.name) for row in options]


class EarnForm(_SceneForm):
    """A25 — the GM grants, or a player asks for, a point for facing the flaw or a sacrifice."""

    scene_required = False
    kind = forms.ChoiceField(
        label=_("Por"),
        choices=[(k.value, k.label) for k in (HeroRequest.Kind.FLAW, HeroRequest.Kind.SACRIFICE)],
        error_messages=CHOOSE,
    )
    scene = _scene_field(required=False)
    why = _why(required=True, model=HeroRequest)


class GiftForm(_SceneForm):
    """A26 — one of your points to a hero who helped you (the GM approves)."""

    scene_required = False
    receiver = forms.ChoiceField(label=_("Para"), error_messages=CHOOSE)
    scene = _scene_field(required=False)
    why = _why(required=True, model=HeroRequest, label=_("Cómo te ha ayudado"))

    def __init__(self, *args, receivers=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.receivers = {str(c.pk): c for c in receivers}
        self.fields["receiver"].choices = [EMPTY] + [(pk, c.name) for pk, c in self.receivers.items()]

    def clean(self):
        cleaned = super().clean()
        cleaned["receiver_character"] = self.receivers.get(cleaned.get("receiver") or "")
        return cleaned


class StateForm(_SceneForm):
    """A27 — a state «por el morro» for this hero (the other side accepts)."""

    state_name = forms.CharField(
        max_length=max_length_of(HeroRequest, "state_name"),
        label=_("Estado"),
        help_text=_("Por ejemplo «hambriento» o «cansado»: dura la escena y da un punto de Héroe."),
        error_messages={**LIMIT_MESSAGES, "required": _("Escribe el estado.")},
    )
    scene = _scene_field(required=True)
    why = _why(required=True, model=HeroRequest, label=_("Por qué pega en la historia"))


class DecisionForm(forms.Form):
    """The buttons of a pending request: accept, refuse, or take it back."""

    decision = forms.ChoiceField(
        choices=[("aceptar", _("Aceptar")), ("rechazar", _("Rechazar")), ("retirar", _("Retirar"))],
        error_messages={"required": _("Elige aceptar o rechazar."), "invalid_choice": _("Elige aceptar o rechazar.")},
    )


class NewAdventureForm(forms.Form):
    """A21 — the GM's confirmation: every hero back to 5."""

    confirm = forms.BooleanField(
        label=_("Sí: todos los héroes vuelven a tener exactamente 5 puntos de Héroe"),
        error_messages={"required": _("Marca la casilla para confirmar la nueva aventura.")},
    )
    why = _why(required=False, label=_("Nota (opcional)"))
