from crispy_forms.helper import FormHelper
from crispy_forms.layout import Submit
from django import forms
from django.contrib.auth import password_validation
from django.contrib.auth.forms import AuthenticationForm, PasswordResetForm, UserCreationForm, UsernameField
from django.core.exceptions import ValidationError
from django.utils.html import format_html, format_html_join
from django.utils.translation import get_language, ngettext, ngettext_lazy
from django.utils.translation import gettext_lazy as _

from accounts.limits import LIMIT_MESSAGES, max_length_of
from accounts.models import User
from accounts.tasks import send_password_reset


class LoginForm(AuthenticationForm):
    """Django's log-in form sizes the username's input but never checks its
    length: an over-long name reached authenticate() and the log-in
    throttle's table of attempts (a server error on PostgreSQL). Here it is
    refused like any over-long field. For ``LoginView(authentication_form=…)``."""

    username = UsernameField(
        max_length=max_length_of(User, "username"),
        error_messages=LIMIT_MESSAGES,
        widget=forms.TextInput(attrs={"autofocus": True}),
    )


class BackgroundPasswordResetForm(PasswordResetForm):
    """Django's password-reset request, with the e-mail made and sent by the
    task worker (accounts.tasks): the page answers at once whatever the mail
    server does. For ``PasswordResetView(form_class=…)``, which passes the
    template names, the request and ``use_https`` (the link is built from
    ``SITE_URL`` instead); the default token generator and sender are used."""

    email = forms.EmailField(
        label=_("Correo electrónico"),
        max_length=max_length_of(User, "email"),
        error_messages=LIMIT_MESSAGES,
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )

    def save(self, *, request=None, use_https=False, subject_template_name=None, email_template_name=None, **_ignored):
        send_password_reset.enqueue(
            email=self.cleaned_data["email"],
            language=get_language(),
            subject_template_name=subject_template_name,
            email_template_name=email_template_name,
        )


# Our words, in tú, for what Django's password validators refuse (by their
# error code); a validator we do not know keeps its own message.
PASSWORD_MESSAGES = {
    "password_too_short": ngettext_lazy(
        "Es demasiado corta: usa al menos %(min_length)d carácter.",
        "Es demasiado corta: usa al menos %(min_length)d caracteres.",
        "min_length",
    ),
    "password_too_similar": _("Se parece demasiado a tu %(verbose_name)s: elige otra."),
    "password_too_common": _("Es una contraseña demasiado común: elige otra más difícil de adivinar."),
    "password_entirely_numeric": _("No puede tener solo números: añade alguna letra o signo."),
}


def password_rules_help() -> str:
    """The password field's help: what the configured validators
    (``AUTH_PASSWORD_VALIDATORS``) ask, in tú, as a list; a validator we do
    not know is described by its own help text."""
    rules = []
    for validator in password_validation.get_default_password_validators():
        if isinstance(validator, password_validation.MinimumLengthValidator):
            rules.append(
                ngettext(
                    "tener al menos %(min_length)d carácter",
                    "tener al menos %(min_length)d caracteres",
                    validator.min_length,
                )
                % {"min_length": validator.min_length}
            )
        elif isinstance(validator, password_validation.UserAttributeSimilarityValidator):
            rules.append(_("no parecerse a tu nombre de usuario ni a tu correo"))
        elif isinstance(validator, password_validation.CommonPasswordValidator):
            rules.append(_("no ser una contraseña habitual"))
        elif isinstance(validator, password_validation.NumericPasswordValidator):
            rules.append(_("no tener solo números"))
        else:
            rules.append(validator.get_help_text())
    if not rules:
        return ""
    return format_html(
        '{}<ul class="mb-0">{}</ul>',
        _("Tu contraseña debe:"),
        format_html_join("", "<li>{}</li>", ((rule,) for rule in rules)),
    )


class SignUpForm(UserCreationForm):
    """Django's sign-up form with our own help and error messages, in tú."""

    # A form's EmailField takes up to 320 characters; the column holds fewer.
    email = forms.EmailField(
        label=_("Correo electrónico"),
        max_length=max_length_of(User, "email"),
        error_messages={
            **LIMIT_MESSAGES,
            "required": _("Escribe tu correo electrónico."),
            "invalid": _("Escribe un correo válido, como nombre@ejemplo.org."),
        },
        help_text=_("Solo para recuperar tu contraseña y, si quieres, recibir avisos."),
    )

    error_messages = {"password_mismatch": _("Las dos contraseñas no coinciden: escribe la misma en los dos campos.")}

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")
        error_messages = {
            "username": {
                **LIMIT_MESSAGES,
                "required": _("Elige un nombre de usuario."),
                # What the username's validator refuses (a space, a symbol…).
                "invalid": _("Usa solo letras, números y los signos @ . + - _, sin espacios."),
            }
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        username = self.fields["username"]
        username.label = _("Nombre de usuario")
        username.help_text = _(
            "Con él entras en Hitos. Hasta %(max_length)d caracteres: letras, números y los signos @ . + - _, "
            "sin espacios. Los demás verán tu nombre visible, que eliges en tu perfil."
        ) % {"max_length": username.max_length}
        self.fields["password1"].help_text = password_rules_help()
        self.fields["password1"].error_messages["required"] = _("Elige una contraseña.")
        self.fields["password2"].help_text = _("Escríbela otra vez, para comprobar que no hay erratas.")
        self.fields["password2"].error_messages["required"] = _("Escribe otra vez la contraseña.")
        self.helper = FormHelper()
        # The page draws the form tag, with the address to go to afterwards.
        self.helper.form_tag = False
        self.helper.add_input(Submit("submit", _("Crear cuenta")))

    def clean_username(self) -> str:
        # As Django's: names that differ only in case are the same name.
        username = self.cleaned_data["username"]
        if User.objects.filter(username__iexact=username).exists():
            raise forms.ValidationError(_("Ese nombre de usuario ya está ocupado: elige otro."), code="unique")
        return username

    def clean_email(self) -> str:
        email = User.objects.normalize_email(self.cleaned_data["email"]).strip()
        if User.objects.filter(email__iexact=email).exists():
            raise forms.ValidationError(_("Ya hay una cuenta con este correo. ¿Has olvidado tu contraseña?"))
        return email

    def validate_password_for_user(self, user, password_field_name="password2"):
        """Django's password validators, their refusals told in our words."""
        password = self.cleaned_data.get(password_field_name)
        if not password:
            return
        try:
            password_validation.validate_password(password, user)
        except ValidationError as refused:
            self.add_error(
                password_field_name,
                [
                    ValidationError(PASSWORD_MESSAGES[error.code], code=error.code, params=error.params)
                    if error.code in PASSWORD_MESSAGES
                    else error
                    for error in refused.error_list
                ],
            )


class ProfileForm(forms.ModelForm):
    class Meta:
        model = User
        fields = ("display_name", "language", "email_notifications", "time_zone", "takeover_consent")
        labels = {"language": _("Idioma preferido"), "email_notifications": _("Avisos por correo")}
        help_texts = {
            "email_notifications": _(
                "Cuándo te escribimos por mensajes nuevos en escenas que ves, mensajes para ti, respuestas a "
                "tus solicitudes y acciones de la dirección. Los avisos siguen apareciendo en la web sea cual "
                "sea tu elección."
            )
        }
        widgets = {"email_notifications": forms.RadioSelect, "takeover_consent": forms.RadioSelect}
        error_messages = {"display_name": LIMIT_MESSAGES}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["time_zone"].choices = [("", _("La de cada partida"))] + [
            (name, label) for name, label in self.fields["time_zone"].choices if name
        ]
        # As with the e-mails: a form that leaves it out keeps the current choice.
        self.fields["takeover_consent"].required = False
        self.fields["language"].choices = [("", _("El de mi navegador"))] + [
            (code, name) for code, name in self.fields["language"].choices if code
        ]
        # A form that leaves the choice out (an older page, a script) keeps
        # the current preference rather than failing.
        self.fields["email_notifications"].required = False
        self.helper = FormHelper()
        self.helper.add_input(Submit("submit", _("Guardar perfil")))

    def clean_display_name(self) -> str:
        return " ".join(self.cleaned_data["display_name"].split())

    def clean_email_notifications(self) -> str:
        return self.cleaned_data["email_notifications"] or self.instance.email_notifications

    def clean_takeover_consent(self) -> str:
        return self.cleaned_data["takeover_consent"] or self.instance.takeover_consent
