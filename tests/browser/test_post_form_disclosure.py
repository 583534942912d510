"""Issue 14, in a real Chromium at 360 px: the post form shows what applies.
A player sees neither the NPC's name nor the members to choose until they
choose those recipients; the GM sees the NPC's name only with the NPC voice.
static/js/forms.js shows and hides them, also in a form that comes back by
htmx after an error. Any console error or CSP violation fails the test
(tests/browser/conftest.py)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from playwright.sync_api import Locator, Page, expect

from accounts.models import User
from campaigns.models import Post
from tests.conftest import World, make_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "clave-de-prueba-123"  # tests.factories.UserFactory
PHONE = {"width": 360, "height": 740}


@pytest.fixture
def play(live_server) -> World:
    return make_world()


def _field(scope: Page | Locator, label: str) -> Locator:
    return scope.get_by_label(re.compile(rf"^\s*{re.escape(label)}\*?\s*$"))


def _log_in(page: Page, user: User, then: str) -> None:
    page.goto(f"/cuenta/entrar/?next={then}")
    _field(page, "Nombre de usuario").fill(user.username)
    _field(page, "Contraseña").fill(PASSWORD)
    page.get_by_role("button", name="Entrar").click()
    expect(page.get_by_role("banner").get_by_role("link", name=user.public_name)).to_be_visible()


def _no_sideways_scroll(page: Page) -> None:
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")


def test_a_player_sees_the_members_only_when_choosing_them(page: Page, play: World):
    scene_url = reverse("table:scene-detail", args=[play.campaign.slug, play.scene.pk])
    _log_in(page, play.ana, scene_url)
    page.set_viewport_size(PHONE)
    form = page.get_by_role("region", name="Escribir un mensaje")
    expect(form.get_by_text("Nombre del PNJ")).to_have_count(0)
    expect(form.get_by_role("group", name="Miembros elegidos")).to_be_hidden()
    expect(form.get_by_role("checkbox", name="Bruno")).to_be_hidden()
    _field(form, "Destinatarios").select_option(label="Miembros elegidos")
    expect(form.get_by_role("checkbox", name="Bruno")).to_be_visible()
    _field(form, "Destinatarios").select_option(label="Solo la dirección")
    expect(form.get_by_role("checkbox", name="Bruno")).to_be_hidden()
    _no_sideways_scroll(page)

    # Chosen recipients with nobody chosen: the form comes back by htmx, the list still shown.
    _field(form, "Destinatarios").select_option(label="Miembros elegidos")
    _field(form, "Mensaje").fill("Bruno, ¿ves la llave?")
    form.get_by_role("button", name="Publicar").click()
    expect(form.get_by_text("Elige al menos un destinatario.")).to_be_visible()
    expect(form.get_by_role("checkbox", name="Bruno")).to_be_visible()
    form.get_by_role("checkbox", name="Bruno").check()
    form.get_by_role("button", name="Publicar").click()
    expect(page).to_have_url(re.compile(r"#mensaje-\d+$"))
    post = Post.objects.latest("pk")
    assert post.recipients == Post.Recipients.CHOSEN and list(post.chosen_recipients.all()) == [play.bruno]


def test_the_gm_names_an_npc_only_with_that_voice(page: Page, play: World):
    scene_url = reverse("table:scene-detail", args=[play.campaign.slug, play.scene.pk])
    _log_in(page, play.gm, scene_url)
    page.set_viewport_size(PHONE)
    form = page.get_by_role("region", name="Escribir un mensaje")
    name = _field(form, "Nombre del PNJ")
    # The GM has no character: the NPC voice comes first, and its name with it.
    expect(_field(form, "Escribir como")).to_have_value("npc")
    expect(name).to_be_visible()
    _field(form, "Escribir como").select_option(label="Fuera de personaje")
    expect(name).to_be_hidden()
    _field(form, "Escribir como").select_option(label="PNJ (escribe su nombre)")
    expect(name).to_be_visible()
    name.fill("Don Celso")
    _field(form, "Mensaje").fill("¿Quién anda ahí?")
    form.get_by_role("button", name="Publicar").click()
    expect(page).to_have_url(re.compile(r"#mensaje-\d+$"))
    post = Post.objects.latest("pk")
    assert (post.voice, post.npc_name) == (Post.Voice.NPC, "Don Celso")
    _no_sideways_scroll(page)
