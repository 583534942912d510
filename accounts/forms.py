from crispy_forms.helper import FormHelper
from crispy_forms.layout import Submit
from django import forms
from django.contrib.auth.forms import AuthenticationForm, PasswordResetForm, UserCreationForm, UsernameField
from django.contrib.sites.shortcuts import get_current_site
from django.utils.translation import get_language
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
    template names, the request and ``use_https``; the default token generator
    and sender are used."""

    email = forms.EmailField(
        label=_("Correo electrónico"),
        max_length=max_length_of(User, "email"),
        error_messages=LIMIT_MESSAGES,
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )

    def save(self, *, request=None, use_https=False, subject_template_name=None, email_template_name=None, **_ignored):
        send_password_reset.enqueue(
            email=self.cleaned_data["email"],
            domain=get_current_site(request).domain,
            use_https=use_https,
            language=get_language(),
            subject_template_name=subject_template_name,
            email_template_name=email_template_name,
        )


class SignUpForm(UserCreationForm):
    # A form's EmailField takes up to 320 characters; the column holds fewer.
    email = forms.EmailField(
        label=_("Correo electrónico"),
        max_length=max_length_of(User, "email"),
        error_messages=LIMIT_MESSAGES,
        help_text=_("Solo para recuperar tu contraseña y, si quieres, recibir avisos."),
    )

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")
        error_messages = {"username": LIMIT_MESSAGES}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["username"].label = _("Nombre de usuario")
        self.helper = FormHelper()
        self.helper.add_input(Submit("submit", _("Crear cuenta")))

    def clean_email(self) -> str:
        email = User.objects.normalize_email(self.cleaned_data["email"]).strip()
        if User.objects.filter(email__iexact=email).exists():
            raise forms.ValidationError(_("Ya hay una cuenta con este correo. ¿Has olvidado tu contraseña?"))
        return email


class ProfileForm(forms.ModelForm):
    class Meta:
        model = User
        fields = ("display_name", "language", "email_notifications")
        labels = {"language": _("Idioma preferido"), "email_notifications": _("Avisos por correo")}
        help_texts = {
            "email_notifications": _(
                "Cuándo te escribimos por mensajes nuevos en escenas que ves, mensajes para ti, respuestas a "
                "tus solicitudes y acciones de la dirección. Los avisos siguen apareciendo en la web sea cual "
                "sea tu elección."
            )
        }
        widgets = {"email_notifications": forms.RadioSelect}
        error_messages = {"display_name": LIMIT_MESSAGES}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
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
