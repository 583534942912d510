import re

import pytest
from django.core import mail
from django.urls import reverse

from accounts.models import User
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

STRONG = "ornitorrinco-azul-77"


def _signup_data(**overrides):
    data = {"username": "lucia", "email": "lucia@example.org", "password1": STRONG, "password2": STRONG}
    data.update(overrides)
    return data


def test_signup_creates_the_account_logs_in_and_welcomes_in_spanish(client):
    response = client.post(reverse("accounts:signup"), _signup_data(), follow=True)
    assert response.redirect_chain == [(reverse("home"), 302)]
    user = User.objects.get(username="lucia")
    assert user.email == "lucia@example.org"
    assert user.language == "es"
    assert response.context["user"] == user
    assert "Te damos la bienvenida a Hitos, lucia." in response.text


def test_signup_keeps_what_was_typed_and_explains_mismatched_passwords_in_spanish(client):
    response = client.post(reverse("accounts:signup"), _signup_data(password2="otra-cosa-distinta-9"))
    assert response.status_code == 200
    assert response.context["form"].errors["password2"] == [
        "Las dos contraseñas no coinciden: escribe la misma en los dos campos."
    ]
    assert 'value="lucia"' in response.text
    assert 'value="lucia@example.org"' in response.text
    assert not User.objects.filter(username="lucia").exists()


def test_signup_applies_djangos_password_validators_in_our_words(client):
    response = client.post(reverse("accounts:signup"), _signup_data(password1="12345678", password2="12345678"))
    assert response.status_code == 200
    assert response.context["form"].errors["password2"] == [
        "Es una contraseña demasiado común: elige otra más difícil de adivinar.",
        "No puede tener solo números: añade alguna letra o signo.",
    ]
    response = client.post(reverse("accounts:signup"), _signup_data(password1="lucia-x", password2="lucia-x"))
    assert response.context["form"].errors["password2"] == [
        "Se parece demasiado a tu nombre de usuario: elige otra.",
        "Es demasiado corta: usa al menos 8 caracteres.",
    ]
    assert not User.objects.filter(username="lucia").exists()


def test_signup_refuses_an_e_mail_that_already_has_an_account(client):
    UserFactory(email="Lucia@Example.org")
    response = client.post(reverse("accounts:signup"), _signup_data())
    assert "Ya hay una cuenta con este correo." in response.text


def test_signup_requires_every_field_and_says_which_in_tu(client):
    response = client.post(reverse("accounts:signup"), {})
    assert response.context["form"].errors == {
        "username": ["Elige un nombre de usuario."],
        "email": ["Escribe tu correo electrónico."],
        "password1": ["Elige una contraseña."],
        "password2": ["Escribe otra vez la contraseña."],
    }
    assert "Este campo es obligatorio." not in response.text


def test_signup_remembers_the_language_the_newcomer_was_using(client):
    client.cookies["django_language"] = "en"
    client.post(reverse("accounts:signup"), _signup_data())
    assert User.objects.get(username="lucia").language == "en"


def test_signed_in_user_is_sent_home_from_signup(user_client):
    response = user_client.get(reverse("accounts:signup"))
    assert response.status_code == 302
    assert response.url == reverse("home")


def test_login_with_good_credentials(client):
    user = UserFactory(username="mario")
    response = client.post(reverse("accounts:login"), {"username": "mario", "password": "clave-de-prueba-123"})
    assert response.status_code == 302
    assert response.url == reverse("home")
    assert client.session["_auth_user_id"] == str(user.pk)


def test_login_with_a_wrong_password_says_so_in_spanish_and_keeps_the_username(client):
    UserFactory(username="mario")
    response = client.post(reverse("accounts:login"), {"username": "mario", "password": "no-es-esta"})
    assert response.status_code == 200
    assert "Por favor, introduzca un nombre de usuario y clave correctos" in response.text
    assert 'value="mario"' in response.text
    assert "_auth_user_id" not in client.session


def test_logout_needs_post_and_ends_the_session(user_client):
    assert user_client.get(reverse("accounts:logout")).status_code == 405
    response = user_client.post(reverse("accounts:logout"))
    assert response.status_code == 302
    assert "_auth_user_id" not in user_client.session


def test_profile_requires_login(client):
    response = client.get(reverse("accounts:profile"))
    assert response.status_code == 302
    assert response.url.startswith(reverse("accounts:login"))


def test_profile_saves_display_name_and_language_and_sets_the_cookie(user_client, user):
    response = user_client.post(reverse("accounts:profile"), {"display_name": "  La   Vieja  ", "language": "en"})
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.display_name == "La Vieja"
    assert user.language == "en"
    assert response.cookies["django_language"].value == "en"
    # The preference now rules the interface, whatever the browser sends.
    page = user_client.get(reverse("home"), headers={"Accept-Language": "es"})
    assert page.headers["Content-Language"] == "en"


def test_profile_rejects_an_unknown_language(user_client, user):
    response = user_client.post(reverse("accounts:profile"), {"display_name": "X", "language": "fr"})
    assert response.status_code == 200
    assert "Escoja una opción válida." in response.text
    user.refresh_from_db()
    assert user.language == "es"


def test_profile_rejects_put(user_client):
    assert user_client.put(reverse("accounts:profile")).status_code == 405


def test_password_change_with_the_old_password(user_client, user):
    response = user_client.post(
        reverse("accounts:password-change"),
        {"old_password": "clave-de-prueba-123", "new_password1": STRONG, "new_password2": STRONG},
    )
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.check_password(STRONG)


def test_password_change_with_a_wrong_old_password_explains_in_spanish(user_client):
    response = user_client.post(
        reverse("accounts:password-change"),
        {"old_password": "mal", "new_password1": STRONG, "new_password2": STRONG},
    )
    assert "Su contraseña antigua es incorrecta." in response.text


def test_password_reset_sends_a_spanish_e_mail_with_a_working_link(client, settings):
    settings.SITE_URL = "https://mesa.example"
    user = UserFactory(email="olvido@example.org")
    response = client.post(reverse("accounts:password-reset"), {"email": "olvido@example.org"})
    assert response.status_code == 302
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["olvido@example.org"]
    assert message.subject == "Recupera tu contraseña de Hitos"
    link = re.search(r"https://mesa\.example(/cuenta/recuperar/\S+/)", message.body).group(1)
    form_page = client.get(link, follow=True)
    assert form_page.context["validlink"] is True
    response = client.post(form_page.redirect_chain[-1][0], {"new_password1": STRONG, "new_password2": STRONG})
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.check_password(STRONG)


def test_password_reset_for_an_unknown_address_sends_nothing_but_looks_the_same(client):
    response = client.post(reverse("accounts:password-reset"), {"email": "nadie@example.org"})
    assert response.status_code == 302
    assert response.url == reverse("accounts:password-reset-done")
    assert mail.outbox == []


def test_language_switch_sets_the_cookie_and_returns_to_the_page(client):
    response = client.post(reverse("language-set"), {"language": "en", "next": "/cuenta/entrar/"})
    assert response.status_code == 302
    assert response.url == "/cuenta/entrar/"
    assert response.cookies["django_language"].value == "en"
    page = client.get(reverse("home"))
    assert page.headers["Content-Language"] == "en"
    assert '<html lang="en">' in page.text
    assert "Public campaigns" in page.text


def test_language_switch_saves_a_signed_in_users_preference(user_client, user):
    user_client.post(reverse("language-set"), {"language": "en"})
    user.refresh_from_db()
    assert user.language == "en"


def test_language_switch_refuses_unknown_languages_and_foreign_redirects(client):
    assert client.post(reverse("language-set"), {"language": "xx"}).status_code == 400
    response = client.post(reverse("language-set"), {"language": "es", "next": "https://evil.example/"})
    assert response.url == reverse("home")


def test_language_switch_needs_post(client):
    assert client.get(reverse("language-set")).status_code == 405


def test_pages_are_spanish_by_default(client):
    response = client.get(reverse("accounts:login"))
    assert response.headers["Content-Language"] == "es"
    assert '<html lang="es">' in response.text
    assert "Saltar al contenido" in response.text


@pytest.mark.parametrize("language", ["es", "en"])
def test_language_menu_names_each_language_in_itself(client, language):
    client.cookies["django_language"] = language
    html = client.get(reverse("home")).text
    assert '<option value="es" lang="es"' in html
    assert ">Español</option>" in html
    assert ">English</option>" in html
    assert "Inglés" not in html
