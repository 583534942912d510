from crispy_forms.helper import FormHelper
from crispy_forms.layout import Submit
from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.utils.translation import gettext_lazy as _

from accounts.models import User


class SignUpForm(UserCreationForm):
    email = forms.EmailField(
        label=_("Correo electrónico"),
        help_text=_("Solo para recuperar tu contraseña y, si quieres, recibir avisos."),
    )

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")

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
        fields = ("display_name", "language")
        labels = {"language": _("Idioma preferido")}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["language"].choices = [("", _("El de mi navegador"))] + [
            (code, name) for code, name in self.fields["language"].choices if code
        ]
        self.helper = FormHelper()
        self.helper.add_input(Submit("submit", _("Guardar perfil")))

    def clean_display_name(self) -> str:
        return " ".join(self.cleaned_data["display_name"].split())
