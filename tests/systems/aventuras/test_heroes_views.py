"""The hero point pages and actions outside rolls (issue 16, item 4; A21–A28):
who may see and do what (404 for outsiders, 403 for readers and for players
acting for another's hero), the full page and the htmx partial, refusals in
Spanish with the typed text kept, and constant query counts."""

from __future__ import annotations

import pytest
from django.contrib.messages import get_messages
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse

from campaigns.models import Post
from campaigns.permissions import campaign_access
from rules.aventuras import HeroSpend
from systems.aventuras.heroes import dashboard, ledger, panel, services
from systems.aventuras.models import AventurasSheet, AventurasState, HeroMove, HeroRequest
from tests.factories import make_post

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def hero_url(w, character=None, name="hero-page", **kwargs):
    return reverse(f"aventuras:{name}", args=[w.campaign.slug, (character or w.pc).pk, *kwargs.values()])


def heroes_url(w, name="heroes", *args):
    return reverse(f"aventuras:{name}", args=[w.campaign.slug, *args])


def points(character) -> int:
    return AventurasSheet.objects.get(pk=character.pk).hero_points


def spend_data(w, prefix, target, **extra):
    return {f"{prefix}-scene": str(w.scene.pk), f"{prefix}-target": str(target), f"{prefix}-why": "", **extra}


# --- who sees the pages -------------------------------------------------------------------


@pytest.mark.parametrize("htmx", [False, True])
def test_hero_page_access_outsider_404_reader_and_other_player_403(aventuras_world, htmx):
    w = aventuras_world
    extra = HTMX if htmx else {}
    assert w.client("outsider").get(hero_url(w), **extra).status_code == 404
    assert w.client("reader").get(hero_url(w), **extra).status_code == 403
    assert w.client("other").get(hero_url(w), **extra).status_code == 403
    assert w.client("anonymous").get(hero_url(w), **extra).status_code == 302
    # The GM's own character has no hero points (A20).
    assert w.client("gm").get(hero_url(w, w.npc), **extra).status_code == 404
    for who in ("player", "gm"):
        response = w.client(who).get(hero_url(w), **extra)
        assert response.status_code == 200
        html = response.content.decode()
        assert f'id="heroes-panel-{w.pc.pk}"' in html
        assert "5 puntos de Héroe" in html
        assert ("<html" in html) is not htmx


@pytest.mark.parametrize("htmx", [False, True])
def test_campaign_hero_page_access(aventuras_world, htmx):
    w = aventuras_world
    extra = HTMX if htmx else {}
    assert w.client("outsider").get(heroes_url(w), **extra).status_code == 404
    assert w.client("reader").get(heroes_url(w), **extra).status_code == 403
    gm = w.client("gm").get(heroes_url(w), **extra).content.decode()
    assert "Palomita" in gm and "Tarta Dulce" in gm and ("Nueva aventura" in gm) is not htmx
    player = w.client("player").get(heroes_url(w), **extra).content.decode()
    assert "Palomita" in player and "Tarta Dulce" not in player and "Nueva aventura" not in player


def test_actions_outsider_404_reader_403_other_player_403(aventuras_world):
    w = aventuras_world
    howl = w.pc.aventuras.feats.get()
    data = spend_data(w, "proeza", howl.pk)
    url = hero_url(w, name="hero-spend", use="proeza")
    for who, status in (("outsider", 404), ("reader", 403), ("other", 403)):
        for extra in ({}, HTMX):
            assert w.client(who).post(url, data, **extra).status_code == status
    asked = services.ask(character=w.pc, actor=w.player, kind="flaw", why="Me pudo")
    decide = heroes_url(w, "hero-decide", asked.pk)
    assert w.client("outsider").post(decide, {"decision": "aceptar"}).status_code == 404
    assert w.client("reader").post(decide, {"decision": "aceptar"}).status_code == 403
    assert w.client("reader").post(heroes_url(w, "new-adventure"), {"confirm": "on"}).status_code == 403
    assert w.client("player").post(heroes_url(w, "new-adventure"), {"confirm": "on"}).status_code == 403
    assert points(w.pc) == 5 and not HeroMove.objects.exists()


# --- spends (A23, A24, A28) -----------------------------------------------------------------


def test_spend_with_htmx_answers_the_panel_and_without_redirects_with_a_message(aventuras_world):
    w = aventuras_world
    howl = w.pc.aventuras.feats.get()
    url = hero_url(w, name="hero-spend", use="proeza")
    response = w.client("player").post(url, spend_data(w, "proeza", howl.pk, **{"proeza-why": "<b>¡Auuu!</b>"}), **HTMX)
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert "Punto de Héroe gastado en «activar una proeza»: Aullido." in html
    assert "4 puntos de Héroe" in html
    # Untrusted text is escaped in the history.
    assert "&lt;b&gt;¡Auuu!&lt;/b&gt;" in html and "<b>¡Auuu!</b>" not in html
    # A24 — a second feat this turn: refused in Spanish, in place, nothing changed.
    response = w.client("player").post(url, spend_data(w, "proeza", howl.pk, **{"proeza-why": "Otra vez"}), **HTMX)
    html = response.content.decode()
    assert "Ya has gastado un punto de Héroe en «activar una proeza» este turno" in html
    assert 'value="Otra vez"' in html  # the typed text comes back
    assert points(w.pc) == 4
    # Without htmx: a redirect to the hero's page and a message (next turn).
    make_post(w.scene, w.player, voice=Post.Voice.CHARACTER, character=w.pc)
    client = w.client("player")
    response = client.post(url, spend_data(w, "proeza", howl.pk))
    assert response.status_code == 302 and response.url == hero_url(w)
    assert [str(m) for m in get_messages(response.wsgi_request)] == [
        "Punto de Héroe gastado en «activar una proeza»: Aullido."
    ]
    assert points(w.pc) == 3


def test_a_refused_spend_without_htmx_shows_the_page_with_the_form(aventuras_world):
    w = aventuras_world
    AventurasSheet.objects.filter(pk=w.pc.pk).update(hero_points=0)
    howl = w.pc.aventuras.feats.get()
    response = w.client("player").post(
        hero_url(w, name="hero-spend", use="proeza"), spend_data(w, "proeza", howl.pk, **{"proeza-why": "Lo necesito"})
    )
    html = response.content.decode()
    assert response.status_code == 200 and "<html" in html
    assert "Palomita no tiene puntos de Héroe que gastar." in html and 'value="Lo necesito"' in html
    assert not HeroMove.objects.exists()


def test_spend_form_errors_in_spanish(aventuras_world):
    w = aventuras_world
    url = hero_url(w, name="hero-spend", use="proeza")
    html = w.client("player").post(url, {"proeza-scene": "", "proeza-target": "999"}, **HTMX).content.decode()
    assert "Elige la escena en la que juegas." in html and "Esa opción no está en la lista." in html
    assert w.client("player").post(hero_url(w, name="hero-spend", use="volar"), {}).status_code == 404
    assert not HeroMove.objects.exists()


def test_ignore_a_state_shows_it_ignored_this_turn_on_the_panel_and_in_the_scene(aventuras_world):
    w = aventuras_world
    hungry = AventurasState.objects.create(sheet_id=w.pc.pk, name="Hambriento", modifier=-1)
    response = w.client("player").post(
        hero_url(w, name="hero-spend", use="ignorar"), spend_data(w, "ignorar", hungry.pk), **HTMX
    )
    assert "ignorado este turno" in response.content.decode()
    context = panel.scene_panel(w.scene, campaign_access(w.player, w.campaign), characters=[w.pc])
    html = render_to_string(
        context["aventuras_balances_template"], {**context, "campaign": w.campaign, "scene": w.scene}
    )
    assert "Palomita: 4 PH" in html and "«Hambriento» ignorado este turno" in html


def test_recover_and_pay_with_experience(aventuras_world):
    w = aventuras_world
    AventurasSheet.objects.filter(pk=w.pc.pk).update(health_lost=2, hero_points=0)
    data = spend_data(w, "recuperar", 2, **{"recuperar-with_experience": "on"})
    w.client("player").post(hero_url(w, name="hero-spend", use="recuperar"), data, **HTMX)
    sheet = AventurasSheet.objects.get(pk=w.pc.pk)
    assert (sheet.health_lost, sheet.hero_points, sheet.experience) == (0, 0, 2)


# --- earnings (A25–A27) ---------------------------------------------------------------------


def test_earn_gm_grants_player_asks(aventuras_world):
    w = aventuras_world
    data = {"kind": "flaw", "scene": "", "why": "Se paró con el acertijo"}
    html = w.client("gm").post(hero_url(w, name="hero-earn"), data, **HTMX).content.decode()
    assert "Palomita gana un punto de Héroe." in html and points(w.pc) == 6
    html = w.client("player").post(hero_url(w, name="hero-earn"), data, **HTMX).content.decode()
    assert "Petición enviada a la dirección." in html and points(w.pc) == 6
    assert HeroRequest.objects.get().status == "pending"
    html = w.client("player").post(hero_url(w, name="hero-earn"), {"kind": "flaw", "why": ""}, **HTMX).content.decode()
    assert "Escribe por qué." in html


def test_gift_then_gm_approves_from_the_campaign_page(aventuras_world):
    w = aventuras_world
    data = {"receiver": str(w.other_pc.pk), "scene": "", "why": "Me sacó del pozo"}
    html = w.client("player").post(hero_url(w, name="hero-gift"), data, **HTMX).content.decode()
    assert "hasta entonces no se mueve" in html and points(w.pc) == 5
    gift = HeroRequest.objects.get()
    # Only the owner gives: the GM plays everyone but does not give a player's points.
    assert w.client("gm").post(hero_url(w, name="hero-gift"), data).status_code == 403
    decide = heroes_url(w, "hero-decide", gift.pk)
    assert w.client("player").post(decide, {"decision": "aceptar"}, **HTMX).status_code == 403
    html = w.client("gm").post(decide, {"decision": "aceptar"}, **HTMX).content.decode()
    assert 'id="heroes-requests"' in html and "Petición aceptada" in html
    assert (points(w.pc), points(w.other_pc)) == (4, 6)


def test_state_por_el_morro_proposed_by_the_gm_accepted_from_the_scene_bar(aventuras_world):
    w = aventuras_world
    data = {"state_name": "Cansado", "scene": str(w.scene.pk), "why": "<i>BMO</i> toda la noche"}
    html = w.client("gm").post(hero_url(w, name="hero-state"), data, **HTMX).content.decode()
    assert "quien lleva a Palomita tiene que aceptarla" in html
    proposal = HeroRequest.objects.get()
    decide = heroes_url(w, "hero-decide", proposal.pk)
    response = w.client("player").post(decide, {"decision": "aceptar", "where": f"escena:{w.scene.pk}"}, **HTMX)
    html = response.content.decode()
    assert 'id="aventuras-balances"' in html and "Palomita: 6 PH" in html
    state = AventurasState.objects.get()
    assert state.for_free and state.scene == w.scene and points(w.pc) == 6
    # Without htmx: back to the scene with a message.
    again = services.propose_state(character=w.pc, actor=w.gm, state_name="Pegajoso", why="Sirope", scene=w.scene)
    response = w.client("player").post(
        heroes_url(w, "hero-decide", again.pk), {"decision": "rechazar", "where": f"escena:{w.scene.pk}"}
    )
    assert response.status_code == 302 and response.url == w.scene.get_absolute_url()
    assert [str(m) for m in get_messages(response.wsgi_request)] == ["Petición rechazada."]


def test_deciding_twice_is_refused_in_spanish(aventuras_world):
    w = aventuras_world
    asked = services.ask(character=w.pc, actor=w.player, kind="flaw", why="Me pudo")
    decide = heroes_url(w, "hero-decide", asked.pk)
    w.client("gm").post(decide, {"decision": "aceptar", "where": f"ficha:{w.pc.pk}"}, **HTMX)
    html = w.client("gm").post(decide, {"decision": "aceptar", "where": f"ficha:{w.pc.pk}"}, **HTMX).content.decode()
    assert f'id="heroes-panel-{w.pc.pk}"' in html and "Esa petición ya está aceptada." in html
    html = w.client("gm").post(decide, {"decision": "volar"}, **HTMX).content.decode()
    assert "Elige aceptar o rechazar." in html
    assert points(w.pc) == 6


# --- A21 -------------------------------------------------------------------------------------


def test_new_adventure_asks_for_confirmation(aventuras_world):
    w = aventuras_world
    AventurasSheet.objects.filter(pk=w.pc.pk).update(hero_points=1)
    client = w.client("gm")
    page = client.get(heroes_url(w, "new-adventure")).content.decode()
    assert "Palomita: de 1 a 5" in page
    assert client.get(heroes_url(w, "new-adventure"), **HTMX).status_code == 200
    html = client.post(heroes_url(w, "new-adventure"), {"why": "El reino de hielo"}).content.decode()
    assert "Marca la casilla para confirmar la nueva aventura." in html and 'value="El reino de hielo"' in html
    assert points(w.pc) == 1
    response = client.post(heroes_url(w, "new-adventure"), {"confirm": "on", "why": "El reino de hielo"})
    assert response.status_code == 302
    assert points(w.pc) == 5 and points(w.other_pc) == 5
    assert HeroMove.objects.filter(kind="adventure").count() == 2


def test_dashboard_link_counts_the_requests_for_the_gm(aventuras_world, rf):
    w = aventuras_world
    services.ask(character=w.pc, actor=w.player, kind="flaw", why="Me pudo")
    added = dashboard.dashboard(rf.get("/"), campaign_access(w.gm, w.campaign))
    assert added.links == [("Puntos de Héroe (1 petición pendiente)", heroes_url(w))]
    assert dashboard.dashboard(rf.get("/"), campaign_access(w.player, w.campaign)) is None


# --- constant queries -----------------------------------------------------------------------


def _many_moves(w, count: int) -> None:
    for n in range(count):
        post = make_post(w.scene, w.player, voice=Post.Voice.CHARACTER, character=w.pc)
        AventurasState.objects.create(sheet_id=w.pc.pk, name=f"Estado {n}")
        with transaction.atomic():
            ledger.spend(w.pc, HeroSpend.FEAT, by=w.player, turn=ledger.post_turn(post.pk), with_experience=False)
            ledger.gain(w.pc, by=w.gm, reason="sacrificio")
        services.ask(character=w.other_pc, actor=w.other, kind="flaw" if n % 2 else "sacrifice", why=f"{n}")
        HeroRequest.objects.filter(status="pending").update(status="refused")
    services.offer_gift(giver=w.pc, receiver=w.other_pc, actor=w.player, why="gracias")


@pytest.mark.parametrize("count", [1, 12])
def test_pages_keep_a_constant_number_of_queries(aventuras_world, django_assert_max_num_queries, count):
    w = aventuras_world
    _many_moves(w, count)
    for who in ("player", "gm"):
        client = w.client(who)
        for extra in ({}, HTMX):
            with django_assert_max_num_queries(18):
                assert client.get(hero_url(w), **extra).status_code == 200
            with django_assert_max_num_queries(7):
                assert client.get(heroes_url(w), **extra).status_code == 200
    access = campaign_access(w.gm, w.campaign)
    characters = list(services.heroes(w.campaign))
    with django_assert_max_num_queries(5):
        panel.scene_panel(w.scene, access, characters=characters)
