from __future__ import annotations

from crispy_forms.helper import FormHelper
from crispy_forms.layout import Div, Layout, Submit
from django import forms
from django.utils.translation import gettext_lazy as _

from accounts.limits import LIMIT_MESSAGES, HiddenErrorsShown, max_length_of, number_field, text_field
from campaigns import extensions
from campaigns.models import (
    Application,
    Campaign,
    ModerationLog,
    Post,
    PostReport,
    PostRevision,
    Role,
    Scene,
)

BODY_MAX = max_length_of(Post, "body")
# A moderation reason is kept on the post it hides and in the moderation log.
REASON_MAX = min(
    max_length_of(Post, "hidden_reason"), max_length_of(PostReport, "reason"), max_length_of(ModerationLog, "reason")
)
# The reason of an edit is kept in the post's history and, when the GM edits
# someone else's post, in the moderation log.
EDIT_REASON_MAX = min(max_length_of(PostRevision, "reason"), max_length_of(ModerationLog, "reason"))


class CampaignForm(forms.ModelForm):
    class Meta:
        model = Campaign
        fields = (
            "title",
            "system",
            "visibility",
            "status",
            "description",
            "time_zone",
            "pace_public",
            "wait_for_posts",
        )
        widgets = {"description": forms.Textarea(attrs={"rows": 6})}
        error_messages = {"title": LIMIT_MESSAGES, "description": LIMIT_MESSAGES}
        help_texts = {
            "description": _("Markdown: **negrita**, *cursiva*, listas y enlaces. No se admite HTML."),
            "visibility": _("Pública: cualquiera lee las escenas abiertas a todos. Privada: solo los miembros."),
            "time_zone": _("Los plazos de la partida se dan en esta hora; cada miembro ve también la suya."),
        }

    def __init__(self, *args, submit_label=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["title"].widget.attrs["autofocus"] = True
        # A form that leaves the time zone out (an older page, a script) keeps the campaign's.
        self.fields["time_zone"].required = False
        if self.instance.pk:
            # The game is chosen once: its sheets, rolls and state are its own.
            self.fields["system"].disabled = True
            self.fields["system"].help_text = _("El sistema de juego se elige al crear la partida.")
        self.helper = FormHelper()
        self.helper.add_input(Submit("submit", submit_label or _("Crear partida")))

    def clean_title(self) -> str:
        title = " ".join(self.cleaned_data["title"].split())
        if not title:
            raise forms.ValidationError(_("Escribe un título."))
        return title

    def clean_time_zone(self) -> str:
        return self.cleaned_data["time_zone"] or self.instance.time_zone


class ApplicationForm(forms.Form):
    text = text_field(
        Application,
        "text",
        label=_("Preséntate"),
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=_("Unas líneas para la dirección: quién eres, qué personaje te gustaría llevar, tu ritmo."),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.helper = FormHelper()
        self.helper.add_input(Submit("submit", _("Enviar solicitud")))


class DecisionForm(forms.Form):
    decision = forms.ChoiceField(choices=[("accept", _("Aceptar")), ("reject", _("Rechazar"))])
    # The answer is kept on the application and in the moderation log.
    answer = forms.CharField(
        label=_("Respuesta"),
        required=False,
        max_length=min(max_length_of(Application, "answer"), max_length_of(ModerationLog, "reason")),
        error_messages=LIMIT_MESSAGES,
    )


class InvitationForm(forms.Form):
    role = forms.ChoiceField(
        label=_("Papel"), choices=[(Role.PLAYER, Role.PLAYER.label), (Role.READER, Role.READER.label)]
    )
    days = forms.IntegerField(
        label=_("Caduca en (días)"), min_value=1, max_value=90, initial=7, error_messages=LIMIT_MESSAGES
    )
    max_uses = forms.IntegerField(
        label=_("Usos máximos"), min_value=1, max_value=100, initial=5, error_messages=LIMIT_MESSAGES
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.helper = FormHelper()
        self.helper.form_tag = False


class ReasonForm(forms.Form):
    reason = forms.CharField(label=_("Motivo"), max_length=REASON_MAX, error_messages=LIMIT_MESSAGES)

    def clean_reason(self) -> str:
        reason = " ".join(self.cleaned_data["reason"].split())
        if not reason:
            raise forms.ValidationError(_("Explica el motivo."))
        return reason


class OptionalReasonForm(forms.Form):
    # Resolving a report keeps the reason in the moderation log only.
    reason = text_field(ModerationLog, "reason", label=_("Motivo"), required=False)


class RoleForm(forms.Form):
    role = forms.ChoiceField(label=_("Papel"), choices=Role.choices)


class SceneForm(forms.ModelForm):
    """A scene, with the fields the campaign's game adds (``extensions.SceneFields``)."""

    position = number_field(Scene, "position")

    class Meta:
        model = Scene
        fields = ("title", "description", "status", "everyone", "participants", "position")
        widgets = {
            "description": forms.Textarea(attrs={"rows": 5}),
            "participants": forms.CheckboxSelectMultiple,
        }
        error_messages = {"title": LIMIT_MESSAGES, "description": LIMIT_MESSAGES}

    def __init__(self, *args, campaign=None, members=(), creating: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["participants"].queryset = members
        self.fields["participants"].label_from_instance = lambda user: user.public_name
        self.fields["participants"].help_text = _("Solo cuenta si la escena no es para todos.")
        campaign = campaign or (self.instance.campaign if self.instance.pk else None)
        self.game_fields = extensions.scene_fields(campaign) if campaign is not None else {}
        self.fields.update(self.game_fields)
        if self.instance.pk:
            for name, value in extensions.scene_initial(self.instance).items():
                self.initial.setdefault(name, value)
            if self.instance.everyone:
                # A roll is sealed or public when it is made (rollog v1.1 §3.7).
                self.fields["everyone"].help_text = _(
                    "Desmárcalo para un grupo separado: solo la verán los miembros elegidos. Las tiradas ya "
                    "hechas en la escena siguen siendo públicas en el registro de tiradas; las nuevas serán privadas."
                )
        if creating:
            del self.fields["status"]
            del self.fields["position"]
        self.helper = FormHelper()
        self.helper.add_input(Submit("submit", _("Crear escena") if creating else _("Guardar escena")))

    def game_values(self) -> dict:
        """The cleaned values of the game's own fields."""
        return {name: self.cleaned_data[name] for name in self.game_fields}

    def clean(self):
        cleaned = super().clean()
        if not cleaned.get("everyone") and not cleaned.get("participants"):
            self.add_error("participants", _("Elige al menos un miembro, o haz la escena visible para todos."))
        return cleaned


class PostForm(HiddenErrorsShown, forms.Form):
    voice = forms.ChoiceField(
        label=_("Escribir como"),
        choices=(),
        error_messages={"invalid_choice": _("No puedes escribir así: elige una de las voces que te ofrece la lista.")},
    )
    npc_name = text_field(
        Post, "npc_name", label=_("Nombre del PNJ"), required=False, help_text=_("Solo si escribes como PNJ.")
    )
    body = forms.CharField(
        label=_("Mensaje"),
        widget=forms.Textarea(attrs={"rows": 8}),
        max_length=BODY_MAX,
        help_text=_("Markdown: **negrita**, *cursiva*, > cita, listas. Sin HTML."),
        error_messages={
            "max_length": _(
                "El mensaje es demasiado largo: como mucho %(limit_value)d caracteres (tiene %(show_value)d)."
            )
        },
    )
    note = text_field(
        Post,
        "note",
        label=_("Nota de juego (fuera de personaje)"),
        widget=forms.Textarea(attrs={"rows": 2}),
        required=False,
    )
    recipients = forms.ChoiceField(
        label=_("Destinatarios"),
        choices=Post.Recipients.choices,
        initial=Post.Recipients.ALL,
        error_messages={"invalid_choice": _("Elige a quién va el mensaje entre las opciones de la lista.")},
    )
    chosen = forms.ModelMultipleChoiceField(
        label=_("Miembros elegidos"),
        queryset=None,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Solo si el mensaje va a miembros elegidos. La dirección lo lee siempre."),
        error_messages={"invalid_choice": _("Solo puedes elegir a miembros que leen esta escena.")},
    )
    quote_of = forms.IntegerField(widget=forms.HiddenInput, required=False)
    # Made when the form is shown: the same form sent twice publishes once.
    submission_key = text_field(Post, "submission_key", widget=forms.HiddenInput, required=False)

    # Fields that apply only with one choice of another field (its id and
    # value): static/js/forms.js hides them otherwise; without JavaScript they
    # show, and what they hold is ignored unless that choice is made.
    SHOWN_WHEN = {"npc_name": "id_voice=npc", "chosen": "id_recipients=chosen"}

    def __init__(self, *args, characters=(), can_npc=False, members=None, **kwargs):
        super().__init__(*args, **kwargs)
        # The characters the author may speak as (the table chooses them).
        self.characters = {str(c.pk): c for c in characters}
        self.can_npc = can_npc
        choices = [
            (f"character:{pk}", _("Personaje: %(name)s") % {"name": c.name}) for pk, c in self.characters.items()
        ]
        if can_npc:
            choices.append(("npc", _("PNJ (escribe su nombre)")))
        else:
            # Only who may speak as an NPC names one (``permissions.can_write_as_npc``).
            del self.fields["npc_name"]
        choices.append(("ooc", _("Fuera de personaje")))
        self.fields["voice"].choices = choices
        self.fields["chosen"].queryset = members
        self.fields["chosen"].label_from_instance = lambda user: user.public_name
        self.helper = FormHelper()
        self.helper.form_tag = False
        self.helper.disable_csrf = True
        self.helper.layout = Layout(
            *(
                Div(name, data_shown_when=self.SHOWN_WHEN[name]) if name in self.SHOWN_WHEN else name
                for name in self.fields
            )
        )

    def clean_body(self) -> str:
        body = self.cleaned_data["body"]
        if not body.strip():
            raise forms.ValidationError(_("El mensaje está vacío."))
        return body

    def clean(self):
        cleaned = super().clean()
        voice = cleaned.get("voice", "")
        cleaned["character"] = None
        if voice.startswith("character:"):
            cleaned["character"] = self.characters.get(voice.split(":", 1)[1])
            cleaned["voice"] = Post.Voice.CHARACTER
        elif voice == "npc":
            cleaned["voice"] = Post.Voice.NPC
            name = " ".join(cleaned.get("npc_name", "").split())
            if not name:
                self.add_error("npc_name", _("Escribe el nombre del PNJ."))
            cleaned["npc_name"] = name
        elif voice == "ooc":
            cleaned["voice"] = Post.Voice.OOC
        if voice != "npc":
            # A name typed for an NPC, with another voice chosen, is not kept.
            cleaned["npc_name"] = ""
        if cleaned.get("recipients") == Post.Recipients.CHOSEN:
            if not cleaned.get("chosen") and "chosen" not in self.errors:
                self.add_error("chosen", _("Elige al menos un destinatario."))
        else:
            # Members ticked before choosing other recipients are not kept.
            cleaned["chosen"] = []
        return cleaned

    def character_for(self, voice: str):
        """The character a voice choice speaks as (None for NPC and OOC voices)."""
        if voice.startswith("character:"):
            return self.characters.get(voice.split(":", 1)[1])
        return None


class PostEditForm(forms.Form):
    body = PostForm.base_fields["body"]
    note = PostForm.base_fields["note"]
    reason = forms.CharField(
        label=_("Motivo del cambio (opcional)"),
        max_length=EDIT_REASON_MAX,
        required=False,
        error_messages=LIMIT_MESSAGES,
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.helper = FormHelper()
        self.helper.add_input(Submit("submit", _("Guardar cambios")))

    clean_body = PostForm.clean_body


class SearchForm(forms.Form):
    q = forms.CharField(
        label=_("Buscar en la partida"),
        max_length=200,
        min_length=2,
        error_messages={
            **LIMIT_MESSAGES,
            "min_length": _("Escribe al menos %(limit_value)d caracteres (has escrito %(show_value)d)."),
        },
    )
