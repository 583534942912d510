import re
from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

import pytest
from django.db import OperationalError, connection
from django.template import TemplateSyntaxError
from django.test import Client, override_settings
from django.urls import get_resolver, reverse

from accounts.models import User
from campaigns.models import Membership, Role
from hitos_site import errors
from tests.factories import CampaignFactory, UserFactory
from tests.site.urls_failing import INTERNAL_DETAIL

pytestmark = pytest.mark.django_db

FAILING = "/pruebas/falla/"
with_failing_view = override_settings(DEBUG=False, ROOT_URLCONF="tests.site.urls_failing")


@contextmanager
def database_down() -> Iterator[list[str]]:
    """Every query on the default connection fails as if the server were gone.

    Yields the SQL that was attempted, so a test can show the database was
    really asked (and refused) rather than never reached.
    """
    attempted: list[str] = []

    def refuse(execute, sql, params, many, context):
        attempted.append(sql)
        raise OperationalError("could not connect to server: Connection refused")

    with connection.execute_wrapper(refuse):
        yield attempted


def failing_client(**defaults) -> Client:
    return Client(raise_request_exception=False, **defaults)


def assert_is_the_spanish_500_page(response) -> None:
    assert response.status_code == 500
    assert response["Content-Type"] == "text/html; charset=utf-8"
    html = response.text
    assert html.startswith("<!doctype html>")
    assert '<html lang="es">' in html
    assert "<title>Algo ha fallado · Hitos</title>" in html
    assert re.findall(r"<h1[ >]", html) == ["<h1 "]
    assert '<h1 class="h3">Algo ha fallado por nuestra parte</h1>' in html
    assert "No es culpa tuya: nada de lo que has hecho lo ha causado." in html
    assert "Vuelve a intentarlo dentro de un momento" in html
    assert f'<a href="{reverse("home")}">Volver al inicio</a>' in html
    # The site's look: its stylesheets, brand bar, skip link, landmarks and footer.
    assert '<link rel="stylesheet" href="/static/vendor/bootstrap/bootstrap.min.css">' in html
    assert '<link rel="stylesheet" href="/static/css/site.css">' in html
    assert '<a class="visually-hidden-focusable skip-link" href="#contenido">Saltar al contenido</a>' in html
    assert '<a class="navbar-brand fw-bold" href="/">Hitos</a>' in html
    assert "<header>" in html and '<main id="contenido"' in html and "<footer" in html
    assert "Hitos: partidas de rol por web con tiradas verificables." in html
    # Nothing internal, and nothing the strict CSP would block.
    for leak in (INTERNAL_DETAIL, "Traceback", "RuntimeError", "OperationalError", "Connection refused", ".py"):
        assert leak not in html, leak
    assert "<script" not in html and "<style" not in html and " style=" not in html
    assert "'self'" in response["Content-Security-Policy"]


def test_the_site_registers_its_own_server_error_handler():
    assert get_resolver().resolve_error_handler(500) is errors.server_error


@with_failing_view
def test_a_failing_page_shows_the_spanish_500_page_without_internal_detail():
    response = failing_client().get(FAILING)
    assert_is_the_spanish_500_page(response)
    assert f'<a href="{FAILING}">Volver a intentarlo</a>' in response.text


@with_failing_view
def test_a_failing_form_submission_does_not_offer_to_send_it_again():
    response = failing_client().post(FAILING, {"texto": "hola"})
    assert_is_the_spanish_500_page(response)
    assert "Volver a intentarlo" not in response.text


@with_failing_view
def test_a_signed_in_user_gets_the_same_page_without_the_user_menu():
    user = UserFactory(display_name="Ana Lectora")
    client = failing_client()
    client.force_login(user)
    response = client.get(FAILING)
    assert_is_the_spanish_500_page(response)
    assert "Ana Lectora" not in response.text
    assert "Cerrar sesión" not in response.text


@with_failing_view
def test_the_500_page_follows_the_language_already_chosen_for_the_request():
    user = UserFactory(language="en")
    client = failing_client()
    client.force_login(user)
    response = client.get(FAILING)
    assert response.status_code == 500
    assert '<html lang="en">' in response.text
    assert INTERNAL_DETAIL not in response.text


@override_settings(DEBUG=False)
def test_the_500_page_works_while_the_database_is_down():
    # The home page lists campaigns, so its query is what fails.
    client = failing_client()
    with database_down() as attempted:
        response = client.get(reverse("home"))
    assert attempted
    assert_is_the_spanish_500_page(response)
    assert User.objects.count() == 0  # The connection answers again once the outage is over.


@with_failing_view
def test_the_500_page_works_for_a_signed_in_user_while_the_database_is_down():
    # Finding who is signed in reads the session and the user from the
    # database: that is what fails here, before any view runs.
    client = failing_client()
    client.force_login(UserFactory(display_name="Ana Lectora"))
    with database_down() as attempted:
        response = client.get(FAILING)
    assert any("session" in sql for sql in attempted)
    assert_is_the_spanish_500_page(response)
    assert "Ana Lectora" not in response.text


@with_failing_view
def test_the_500_page_does_not_need_the_database_to_choose_english():
    client = failing_client(headers={"Accept-Language": "en"})
    with database_down():
        response = client.get(FAILING)
    assert response.status_code == 500
    assert '<html lang="en">' in response.text
    assert INTERNAL_DETAIL not in response.text


@with_failing_view
def test_a_500_page_that_cannot_be_rendered_falls_back_to_plain_spanish_html(caplog):
    with mock.patch.object(errors.loader, "get_template", side_effect=TemplateSyntaxError("plantilla rota")):
        response = failing_client().get(FAILING)
    assert response.status_code == 500
    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert response.content.decode() == errors.FALLBACK_PAGE
    assert '<html lang="es">' in response.text
    assert "<h1>Algo ha fallado por nuestra parte</h1>" in response.text
    assert INTERNAL_DETAIL not in response.text and "plantilla rota" not in response.text
    assert "The 500 page could not be rendered" in caplog.text


@with_failing_view
def test_a_missing_static_manifest_falls_back_to_plain_spanish_html(settings, tmp_path):
    # Production's manifest storage refuses to name a file collectstatic never saw.
    manifest_storage = {"BACKEND": "django.contrib.staticfiles.storage.ManifestStaticFilesStorage"}
    with override_settings(STATIC_ROOT=tmp_path, STORAGES={**settings.STORAGES, "staticfiles": manifest_storage}):
        response = failing_client().get(FAILING)
    assert response.status_code == 500
    assert response.content.decode() == errors.FALLBACK_PAGE


@override_settings(DEBUG=False)
def test_not_found_page_is_the_sites_own_in_spanish(client):
    response = client.get("/r/no-es-un-enlace/")
    assert response.status_code == 404
    assert "Página no encontrada" in response.text
    assert "Saltar al contenido" in response.text


@override_settings(DEBUG=False)
def test_forbidden_page_shows_the_reason_in_spanish(client):
    campaign = CampaignFactory()
    reader = UserFactory()
    Membership.objects.create(campaign=campaign, user=reader, role=Role.READER)
    client.force_login(reader)
    response = client.get(reverse("campaigns:dashboard", args=[campaign.slug]))
    assert response.status_code == 403
    assert "Solo la dirección de la partida puede hacer esto." in response.text
    assert "No puedes hacer esto" in response.text
