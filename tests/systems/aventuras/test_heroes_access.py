"""Second review of the hero point pages (A21–A28): who may reach each action
(404 for outsiders, 403 for readers and for players acting for another's
hero, the login page for anonymous visitors), both the full page and the
htmx partial, the GM saying why when spending a player's point, the
decision's «where» limited to the scenes the user may read, the panel's
forms folded for phones, and constant queries for «Nueva aventura»."""

from __future__ import annotations

import re

import pytest
from django.contrib.messages import get_messages
from django.core.exceptions import ValidationError
from django.urls import reverse

from campaigns.models import Post, Role
from rules.aventuras import HeroSpend
from sheets.models import SheetEvent
from systems.aventuras.heroes import services
from systems.aventuras.models import AventurasSheet, AventurasState, HeroMove, HeroRequest
from tests.factories import add_member, make_post, make_scene
from tests.systems.aventuras.conftest import aventuras_character

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
GM_WHY = "Escribe por qué gastas un punto de Héroe de otra persona."


def hero_url(w, name="hero-page", character=None, *args):
    return reverse(f"aventuras:{name}", args=[w.campaign.slug, (character or w.pc).pk, *args])


def heroes_url(w, name="heroes", *args):
    return reverse(f"aventuras:{name}", args=[w.campaign.slug, *args])


def points(character) -> int:
    return AventurasSheet.objects.get(pk=character.pk).hero_points


def earn_data(**overrides):
    return {"kind": "flaw", "scene": "", "why": "Se paró con el acertijo", **overrides}


def gift_data(w, **overrides):
    return {"receiver": str(w.other_pc.pk), "scene": "", "why": "Me sacó del pozo", **overrides}


def state_data(w, **overrides):
    return {"state_name": "Cansado", "scene": str(w.scene.pk), "why": "Toda la noche con BMO", **overrides}


# --- anonymous visitors: the login page -------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [lambda w: hero_url(w), lambda w: heroes_url(w), lambda w: heroes_url(w, "new-adventure")],
    ids=["hero-page", "heroes", "new-adventure"],
)
def test_anonymous_visitors_are_sent_to_the_login_page(aventuras_world, address):
    """Signed-in-only pages, as the rest of the site: a redirect to log in, back here after."""
    w = aventuras_world
    target = address(w)
    for extra in ({}, HTMX):
        response = w.client("anonymous").get(target, **extra)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("accounts:login")) and "next=" in response["Location"]
    assert w.client("anonymous").post(hero_url(w, "hero-earn"), earn_data()).status_code == 302
    assert not HeroRequest.objects.exists() and not HeroMove.objects.exists()


# --- A25: earn ----------------------------------------------------------------------------


@pytest.mark.parametrize("htmx", [False, True])
def test_earn_access_outsider_404_reader_and_other_player_403(aventuras_world, htmx):
    w = aventuras_world
    extra = HTMX if htmx else {}
    url = hero_url(w, "hero-earn")
    assert w.client("outsider").post(url, earn_data(), **extra).status_code == 404
    assert w.client("reader").post(url, earn_data(), **extra).status_code == 403
    assert w.client("other").post(url, earn_data(), **extra).status_code == 403
    assert not HeroRequest.objects.exists() and points(w.pc) == 5


def test_earn_full_page_redirects_with_the_message_and_a_refusal_keeps_the_text(aventuras_world):
    """A25 — without htmx: done → the hero's page with a message; refused → the page with the form as typed."""
    w = aventuras_world
    gm = w.client("gm")
    response = gm.post(hero_url(w, "hero-earn"), earn_data())
    assert response.status_code == 302 and response["Location"] == hero_url(w)
    assert [str(m) for m in get_messages(response.wsgi_request)] == ["Palomita gana un punto de Héroe."]
    assert points(w.pc) == 6
    response = gm.post(hero_url(w, "hero-earn"), earn_data(kind="robo", why="Lo robó <b>todo</b>"))
    page = response.content.decode()
    assert response.status_code == 200 and "<html" in page
    assert "Esa opción no está en la lista." in page and 'value="Lo robó &lt;b&gt;todo&lt;/b&gt;"' in page
    assert points(w.pc) == 6


# --- A26: gift ----------------------------------------------------------------------------


@pytest.mark.parametrize("htmx", [False, True])
def test_gift_access_outsider_404_reader_403(aventuras_world, htmx):
    w = aventuras_world
    extra = HTMX if htmx else {}
    url = hero_url(w, "hero-gift")
    assert w.client("outsider").post(url, gift_data(w), **extra).status_code == 404
    assert w.client("reader").post(url, gift_data(w), **extra).status_code == 403
    # Another player does not give Palomita's points.
    assert w.client("other").post(url, gift_data(w), **extra).status_code == 403
    assert not HeroRequest.objects.exists()


def test_gift_full_page_redirects_and_a_refusal_keeps_the_text(aventuras_world):
    """A26 — «pueden dar uno de sus puntos de Héroe a otro héroe»: without htmx too."""
    w = aventuras_world
    player = w.client("player")
    response = player.post(hero_url(w, "hero-gift"), gift_data(w))
    assert response.status_code == 302 and response["Location"] == hero_url(w)
    assert HeroRequest.objects.get().giver_id == w.pc.pk and points(w.pc) == 5
    # The same gift again waits already: refused in Spanish, the text kept, the page whole.
    response = player.post(hero_url(w, "hero-gift"), gift_data(w, why="Otra vez del pozo"))
    page = response.content.decode()
    assert response.status_code == 200 and "<html" in page
    assert "esperando a la dirección" in page and 'value="Otra vez del pozo"' in page
    assert HeroRequest.objects.count() == 1


# --- A27: a state «por el morro» ----------------------------------------------------------


@pytest.mark.parametrize("htmx", [False, True])
def test_state_access_outsider_404_reader_and_other_player_403(aventuras_world, htmx):
    w = aventuras_world
    extra = HTMX if htmx else {}
    url = hero_url(w, "hero-state")
    assert w.client("outsider").post(url, state_data(w), **extra).status_code == 404
    assert w.client("reader").post(url, state_data(w), **extra).status_code == 403
    assert w.client("other").post(url, state_data(w), **extra).status_code == 403
    assert not HeroRequest.objects.exists()


def test_state_full_page_redirects_and_a_refusal_keeps_the_text(aventuras_world):
    w = aventuras_world
    player = w.client("player")
    response = player.post(hero_url(w, "hero-state"), state_data(w))
    assert response.status_code == 302 and response["Location"] == hero_url(w)
    assert HeroRequest.objects.get().state_name == "Cansado"
    response = player.post(hero_url(w, "hero-state"), state_data(w, state_name="Pegajoso", why=""))
    page = response.content.decode()
    assert response.status_code == 200 and "<html" in page
    assert "Escribe por qué." in page and 'value="Pegajoso"' in page
    assert HeroRequest.objects.count() == 1


# --- A23: the GM spending a player's point says why ------------------------------------------


def test_a23_the_gm_spends_a_players_point_only_saying_why_service(aventuras_world):
    """Who, when, why: a point of Palomita spent by the GM needs the reason; her player's does not."""
    w = aventuras_world
    hungry = AventurasState.objects.create(sheet=w.pc.aventuras, name="Hambriento")
    AventurasSheet.objects.filter(pk=w.pc.pk).update(health_lost=2)
    w.pc.refresh_from_db()
    howl = w.pc.aventuras.feats.get()
    attempts = {
        HeroSpend.IGNORE_STATE: lambda actor, why: services.ignore_state(
            character=w.pc, actor=actor, scene=w.scene, state_id=hungry.pk, why=why
        ),
        HeroSpend.RECOVER: lambda actor, why: services.recover(
            character=w.pc, actor=actor, scene=w.scene, levels=1, why=why
        ),
        HeroSpend.FEAT: lambda actor, why: services.activate_feat(
            character=w.pc, actor=actor, scene=w.scene, feat_id=howl.pk, why=why
        ),
    }
    for attempt in attempts.values():
        for why in ("", "  "):
            with pytest.raises(ValidationError) as refused:
                attempt(w.gm, why)
            assert refused.value.messages == [GM_WHY]
    assert points(w.pc) == 5 and not HeroMove.objects.exists() and not SheetEvent.objects.exists()
    move = attempts[HeroSpend.FEAT](w.gm, "Asusta al troll")
    assert (move.by, move.why) == (w.gm, "Asusta al troll")
    # Her player spends without a reason.
    attempts[HeroSpend.IGNORE_STATE](w.player, "")
    assert points(w.pc) == 3


@pytest.mark.parametrize("htmx", [False, True])
def test_a23_the_gm_spends_a_players_point_only_saying_why_form(aventuras_world, htmx):
    w = aventuras_world
    extra = HTMX if htmx else {}
    howl = w.pc.aventuras.feats.get()
    url = hero_url(w, "hero-spend", None, "proeza")
    data = {"proeza-scene": str(w.scene.pk), "proeza-target": str(howl.pk), "proeza-why": ""}
    response = w.client("gm").post(url, data, **extra)
    page = response.content.decode()
    assert response.status_code == 200 and GM_WHY in page
    assert ("<html" in page) is not htmx
    assert points(w.pc) == 5
    # On the panel the GM sees the reason asked for; her player does not.
    why_input = re.compile(r'<input[^>]*name="proeza-why"[^>]*>')
    assert " required" in why_input.search(w.client("gm").get(hero_url(w), **HTMX).content.decode()).group()
    assert " required" not in why_input.search(w.client("player").get(hero_url(w), **HTMX).content.decode()).group()
    response = w.client("gm").post(url, {**data, "proeza-why": "Asusta al troll"}, **extra)
    assert response.status_code == (200 if htmx else 302)
    assert HeroMove.objects.get().why == "Asusta al troll"
    # Her player, in another turn (A24: a new post), without a reason.
    make_post(w.scene, w.player, voice=Post.Voice.CHARACTER, character=w.pc)
    assert w.client("player").post(url, data, **extra).status_code == (200 if htmx else 302)
    assert list(HeroMove.objects.order_by("pk").values_list("by", "why")) == [
        (w.gm.pk, "Asusta al troll"),
        (w.player.pk, ""),
    ]


# --- a decision's «where»: only a scene the user may read --------------------------------------


def test_a_decision_never_leads_to_a_scene_the_user_cannot_read(aventuras_world):
    """A player deciding with ``where=escena:<id>`` of a scene for others only
    goes back to the campaign's hero page, and sees no balances of that scene."""
    w = aventuras_world
    secret = make_scene(w.campaign, title="La cueva secreta", everyone=False, participants=[w.other])
    proposal = services.propose_state(character=w.pc, actor=w.gm, state_name="Cansado", why="BMO", scene=w.scene)
    decide = heroes_url(w, "hero-decide", proposal.pk)
    response = w.client("player").post(decide, {"decision": "rechazar", "where": f"escena:{secret.pk}"})
    assert response.status_code == 302 and response["Location"] == heroes_url(w)
    again = services.propose_state(character=w.pc, actor=w.gm, state_name="Pegajoso", why="Sirope", scene=w.scene)
    decide = heroes_url(w, "hero-decide", again.pk)
    html = w.client("player").post(decide, {"decision": "rechazar", "where": f"escena:{secret.pk}"}, **HTMX)
    html = html.content.decode()
    assert 'id="heroes-requests"' in html and 'id="aventuras-balances"' not in html
    assert "La cueva secreta" not in html
    # A scene the player reads still leads back to it.
    third = services.propose_state(character=w.pc, actor=w.gm, state_name="Triste", why="Llueve", scene=w.scene)
    response = w.client("player").post(
        heroes_url(w, "hero-decide", third.pk), {"decision": "rechazar", "where": f"escena:{w.scene.pk}"}
    )
    assert response.status_code == 302 and response["Location"] == w.scene.get_absolute_url()


# --- A21: «Nueva aventura» ----------------------------------------------------------------


@pytest.mark.parametrize("htmx", [False, True])
def test_new_adventure_access_outsider_404_reader_and_player_403(aventuras_world, htmx):
    w = aventuras_world
    extra = HTMX if htmx else {}
    url = heroes_url(w, "new-adventure")
    AventurasSheet.objects.filter(pk=w.pc.pk).update(hero_points=1)
    for method in ("get", "post"):
        for who, status in (("outsider", 404), ("reader", 403), ("player", 403)):
            assert getattr(w.client(who), method)(url, {"confirm": "on"}, **extra).status_code == status
    assert points(w.pc) == 1 and not HeroMove.objects.exists()


def test_new_adventure_with_htmx_success_and_refusal(aventuras_world):
    """A21 — «cada héroe comienza el juego con cinco puntos de Héroe»: htmx answers with its part."""
    w = aventuras_world
    AventurasSheet.objects.filter(pk=w.pc.pk).update(hero_points=1)
    gm = w.client("gm")
    url = heroes_url(w, "new-adventure")
    html = gm.post(url, {"why": "El reino de hielo"}, **HTMX).content.decode()
    assert html.lstrip().startswith('<div id="adventure-form"') and "<html" not in html
    assert "Marca la casilla para confirmar la nueva aventura." in html and 'value="El reino de hielo"' in html
    assert points(w.pc) == 1
    html = gm.post(url, {"confirm": "on", "why": "El reino de hielo"}, **HTMX).content.decode()
    assert 'id="heroes-requests"' in html and "<html" not in html
    assert "Nueva aventura: 2 héroes vuelven a tener 5 puntos de Héroe." in html
    assert points(w.pc) == 5 and HeroMove.objects.filter(kind="adventure").count() == 2


@pytest.mark.parametrize("count", [1, 10])
def test_new_adventure_page_keeps_a_constant_number_of_queries(aventuras_world, django_assert_max_num_queries, count):
    """However many heroes and requests there are, the same queries."""
    w = aventuras_world
    for n in range(count):
        player = add_member(w.campaign, Role.PLAYER, username=f"heroe_{n}")
        hero = aventuras_character(w.campaign, player, f"Héroe {n}")
        services.ask(character=hero, actor=player, kind="flaw", why=f"Motivo {n}")
    gm = w.client("gm")
    for extra in ({}, HTMX):
        with django_assert_max_num_queries(8):
            response = gm.get(heroes_url(w, "new-adventure"), **extra)
        assert response.status_code == 200 and f"Héroe {count - 1}: de 5 a 5" in response.content.decode()


# --- the panel on a phone: each form folded -----------------------------------------------


def test_the_panels_forms_are_folded_and_a_refused_one_comes_back_open(aventuras_world):
    """On a phone the sheet's «En juego» keeps Salud and Estados a scroll away:
    each spend and earn form is a closed <details> with a clear summary."""
    w = aventuras_world
    AventurasState.objects.create(sheet=w.pc.aventuras, name="Hambriento")
    AventurasSheet.objects.filter(pk=w.pc.pk).update(health_lost=1)
    html = w.client("player").get(hero_url(w), **HTMX).content.decode()
    summaries = [
        "Ignorar un estado durante un turno",
        "Recuperarte (hasta dos niveles de salud)",
        "Activar una proeza",
        "Pedir un punto de Héroe",
        "Un estado por el morro",
        "Dar uno de tus puntos a quien te ayudó",
    ]
    assert html.count('<details class="aventuras-hero-form') == len(summaries)
    assert " open>" not in html
    for summary in summaries:
        assert f'<summary><h3 class="h6 d-inline">{summary}</h3></summary>' in html
    refused = w.client("player").post(hero_url(w, "hero-earn"), earn_data(why=""), **HTMX).content.decode()
    assert refused.count('<details class="aventuras-hero-form border rounded p-2 h-100" open>') == 1
    assert "Escribe por qué." in refused
