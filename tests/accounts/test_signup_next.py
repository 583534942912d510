"""Sign-up and log-in send the newcomer where they were going (a safe
``next``: an address of this site, never another one), and the sign-up form
speaks our Spanish, in tú, about the password rules actually configured
(issue 14)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from accounts.models import User
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

STRONG = "ornitorrinco-azul-77"
TARGET = "/invitacion/abc123/"
UNSAFE = ["https://malo.example/", "//malo.example/x/", "javascript:alert(1)", "http://testserver.malo.example/"]


def _form(html: str, opening: str) -> str:
    """The form of the page that starts with ``opening``, up to its end."""
    start = html.index(opening)
    return html[start : html.index("</form>", start)]


def _signup(client, **extra):
    data = {"username": "lucia", "email": "lucia@example.org", "password1": STRONG, "password2": STRONG, **extra}
    return client.post(reverse("accounts:signup"), data)


# --- next -----------------------------------------------------------------------------------


def test_the_sign_up_page_carries_a_safe_next_in_its_form_and_to_the_log_in_link(client):
    response = client.get(reverse("accounts:signup"), {"next": TARGET})
    assert response.status_code == 200
    assert f'<form method="post" action="{reverse("accounts:signup")}">' in response.text
    assert f'<input type="hidden" name="next" value="{TARGET}">' in response.text
    assert f'href="{reverse("accounts:login")}?next={TARGET}"' in response.text


@pytest.mark.parametrize("unsafe", UNSAFE)
def test_the_sign_up_page_drops_an_unsafe_next(client, unsafe):
    response = client.get(reverse("accounts:signup"), {"next": unsafe})
    assert response.context["next"] == ""
    # Neither the form nor the log-in link carry it (the footer's language
    # form only returns to this very page).
    assert 'name="next"' not in _form(response.text, f'<form method="post" action="{reverse("accounts:signup")}">')
    assert f'href="{reverse("accounts:login")}">Entrar</a>' in response.text


def test_signing_up_with_a_safe_next_goes_there_logged_in(client):
    response = _signup(client, next=TARGET)
    assert response.status_code == 302
    assert response.url == TARGET
    user = User.objects.get(username="lucia")
    assert client.session["_auth_user_id"] == str(user.pk)


@pytest.mark.parametrize("unsafe", UNSAFE)
def test_signing_up_with_an_unsafe_next_goes_home(client, unsafe):
    response = _signup(client, next=unsafe)
    assert response.url == reverse("home")
    assert User.objects.filter(username="lucia").exists()


def test_a_refused_sign_up_keeps_the_next(client):
    response = _signup(client, next=TARGET, password2="otra-cosa-distinta-9")
    assert response.status_code == 200
    assert f'<input type="hidden" name="next" value="{TARGET}">' in response.text


def test_a_signed_in_user_opening_the_sign_up_page_goes_to_a_safe_next_or_home(client):
    client.force_login(UserFactory())
    assert client.get(reverse("accounts:signup"), {"next": TARGET}).url == TARGET
    assert client.get(reverse("accounts:signup"), {"next": UNSAFE[0]}).url == reverse("home")


def test_the_log_in_page_carries_a_safe_next_and_logging_in_goes_there(client):
    UserFactory(username="mario")
    page = client.get(reverse("accounts:login"), {"next": TARGET})
    assert f'<input type="hidden" name="next" value="{TARGET}">' in page.text
    assert f'href="{reverse("accounts:signup")}?next={TARGET}"' in page.text
    response = client.post(
        reverse("accounts:login"), {"username": "mario", "password": "clave-de-prueba-123", "next": TARGET}
    )
    assert response.url == TARGET


@pytest.mark.parametrize("unsafe", UNSAFE)
def test_logging_in_with_an_unsafe_next_goes_home(client, unsafe):
    UserFactory(username="mario")
    page = client.get(reverse("accounts:login"), {"next": unsafe})
    assert page.context["next"] == ""
    assert 'name="next"' not in _form(page.text, '<form method="post" novalidate>')
    assert f'href="{reverse("accounts:signup")}">Crear cuenta</a>' in page.text
    response = client.post(
        reverse("accounts:login"), {"username": "mario", "password": "clave-de-prueba-123", "next": unsafe}
    )
    assert response.url == reverse("home")


# --- our words ------------------------------------------------------------------------------


def test_the_sign_up_help_texts_are_ours_in_tu_and_follow_the_configured_validators(client):
    text = client.get(reverse("accounts:signup")).text
    assert "Con él entras en Hitos. Hasta 150 caracteres: letras, números y los signos @ . + - _, sin espacios." in text
    assert (
        'Tu contraseña debe:<ul class="mb-0"><li>no parecerse a tu nombre de usuario ni a tu correo</li>'
        "<li>tener al menos 8 caracteres</li><li>no ser una contraseña habitual</li>"
        "<li>no tener solo números</li></ul>"
    ) in text
    assert "Escríbela otra vez, para comprobar que no hay erratas." in text
    # None of Django's defaults in usted, nor their typo.
    for usted in ("Su contraseña", "introduzca", "Requerido.", "carácteres", "Únicamente"):
        assert usted not in text


def test_the_password_help_changes_with_the_validators(client, settings):
    settings.AUTH_PASSWORD_VALIDATORS = [
        {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 12}}
    ]
    text = client.get(reverse("accounts:signup")).text
    assert 'Tu contraseña debe:<ul class="mb-0"><li>tener al menos 12 caracteres</li></ul>' in text
    response = _signup(client, password1="corta-pero", password2="corta-pero")
    assert response.context["form"].errors["password2"] == ["Es demasiado corta: usa al menos 12 caracteres."]


def test_a_username_taken_in_another_case_or_with_spaces_is_refused_in_our_words(client):
    UserFactory(username="Lucia")
    response = _signup(client)
    assert response.context["form"].errors["username"] == ["Ese nombre de usuario ya está ocupado: elige otro."]
    response = _signup(client, username="lucía garcía")
    assert response.context["form"].errors["username"] == [
        "Usa solo letras, números y los signos @ . + - _, sin espacios."
    ]
    response = _signup(client, username="x" * 151)
    assert response.context["form"].errors["username"] == [
        "Demasiado largo: como mucho 150 caracteres (has escrito 151)."
    ]
    response = _signup(client, username="otra", email="no-es-un-correo")
    assert response.context["form"].errors["email"] == ["Escribe un correo válido, como nombre@ejemplo.org."]
    # What was typed comes back.
    assert 'value="no-es-un-correo"' in response.text
