"""The pages of a takeover of an absent player's character (issue 17,
item 2): the direction's form (page and htmx fragment), handing the
character back, the dashboard's and the campaign page's panels, and the
permission matrix of table/urls_takeover.py for every standing on a public
and a private campaign."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from pytest_django.asserts import assertContains, assertNotContains

from accounts.models import TakeoverConsent
from campaigns import absences
from campaigns.absences import campaign_today
from campaigns.models import Absence, Membership, ModerationAction, ModerationLog, Notification, Visibility
from table.models import Takeover
from tests.conftest import World, client_for, make_world
from tests.factories import add_member, play_character
from tests.table.test_takeover import add_cogm, away, start

XSS = "<script>alert(1)</script>"


def _start_url(world: World) -> str:
    return reverse("table:takeover-start", args=[world.campaign.slug])


def _end_url(world: World, takeover: Takeover) -> str:
    return reverse("table:takeover-end", args=[world.campaign.slug, takeover.pk])


def _dashboard(world: World) -> str:
    return reverse("campaigns:dashboard", args=[world.campaign.slug])


# --- the permission matrix ---------------------------------------------------------------

STANDINGS = ("anonymous", "outsider", "reader", "player", "other", "cogm", "gm")

# The "player" is Bruno, whose character Tomás the GM carries; the "other" is Ana.
# url name            method  anon outsider reader player other cogm  gm
PUBLIC = """
takeover-start        GET     302  403      403    403    403   200   200
takeover-start        POST    302  403      403    403    403   302   302
takeover-end          POST    302  403      403    302    403   302   302
"""
PRIVATE = """
takeover-start        GET     302  404      403    403    403   200   200
takeover-start        POST    302  404      403    403    403   302   302
takeover-end          POST    302  404      403    302    403   302   302
"""


def _matrix(table: str, visibility: str):
    for line in table.strip().splitlines():
        name, method, *codes = line.split()
        for standing, code in zip(STANDINGS, codes, strict=True):
            yield pytest.param(visibility, name, method, standing, int(code), id=f"{visibility}-{name}-{standing}")


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("visibility", "name", "method", "standing", "expected"),
    [*_matrix(PUBLIC, Visibility.PUBLIC), *_matrix(PRIVATE, Visibility.PRIVATE)],
)
def test_the_takeover_urls_answer_each_standing(visibility, name, method, standing, expected):
    world = make_world(visibility)
    cogm = add_cogm(world)
    away(world, world.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    users = {"player": world.bruno, "other": world.ana, "cogm": cogm}
    user = users.get(standing) or world.user(standing)
    if name == "takeover-end":
        url, data = _end_url(world, start(world)), {"reason": ""}
    else:
        url = _start_url(world)
        data = {"character": world.tomas.pk, "taken_by": user.pk if user else "", "scene": "", "reason": "De viaje"}
    client = client_for(user)
    response = client.get(url) if method == "GET" else client.post(url, data)
    assert response.status_code == expected
    if method == "POST" and expected == 302 and standing != "anonymous":
        taken = Takeover.objects.get()
        if name == "takeover-start":
            assert taken.taken_by == user and taken.ended_at is None
        else:
            assert taken.ended_by == user and taken.ended_at is not None


@pytest.mark.parametrize(("name", "method"), [("takeover-start", "delete"), ("takeover-end", "get")])
def test_the_wrong_method_is_refused(play, name, method):
    away(play, play.bruno)
    args = [play.campaign.slug] if name == "takeover-start" else [play.campaign.slug, start(play).pk]
    response = getattr(client_for(play.gm), method)(reverse(f"table:{name}", args=args))
    assert response.status_code == 405


def test_a_takeover_of_another_campaign_is_not_found(play):
    away(play, play.bruno)
    takeover = start(play)
    elsewhere = make_world()
    response = client_for(elsewhere.gm).post(reverse("table:takeover-end", args=[elsewhere.campaign.slug, takeover.pk]))
    assert response.status_code == 404
    assert Takeover.objects.current().filter(pk=takeover.pk).exists()


# --- the direction's form ------------------------------------------------------------------


def test_the_form_is_a_page_and_an_htmx_fragment(play):
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    page = client_for(play.gm).get(_start_url(play) + f"?personaje={play.tomas.pk}")
    assertContains(page, "<html")
    assertContains(page, "Llevar el personaje de un ausente")
    html = page.content.decode()
    assert f'<option value="{play.tomas.pk}" selected>Tomás Ferrer, de Bruno: ' in html
    assert "La Directora (dirección)" in html
    fragment = client_for(play.gm).get(_start_url(play), headers={"HX-Request": "true"})
    assertNotContains(fragment, "<html")
    assertContains(fragment, 'id="llevar-personaje"')
    assertContains(fragment, 'data-hx-post="' + _start_url(play) + '"')
    assert fragment["Vary"] == "HX-Request" or "HX-Request" in fragment["Vary"]


def test_without_away_players_the_form_says_so(play):
    page = client_for(play.gm).get(_start_url(play))
    assertContains(page, "Hoy no falta ningún jugador cuyo personaje esté libre.")
    assertNotContains(page, 'name="character"')


def test_a_refusal_comes_back_with_why_and_what_was_typed(play):
    away(play, play.bruno, consent=TakeoverConsent.NOBODY)
    data = {"character": play.tomas.pk, "taken_by": play.gm.pk, "scene": "", "reason": "Se fue sin avisar"}
    for headers in ({}, {"HX-Request": "true"}):
        response = client_for(play.gm).post(_start_url(play), data, headers=headers)
        assert response.status_code == 200
        assertContains(response, "Bruno no ha dado permiso para que otro lleve a su personaje.")
        assertContains(response, 'value="Se fue sin avisar"')
        assert ("<html" in response.content.decode()) is not bool(headers)
    assert not Takeover.objects.exists()


def test_a_named_player_needs_a_scene_in_the_form(play):
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    data = {"character": play.tomas.pk, "taken_by": play.ana.pk, "scene": "", "reason": ""}
    response = client_for(play.gm).post(_start_url(play), data)
    assertContains(response, "Un jugador lleva el personaje de otro solo en una escena: elígela.")
    data["scene"] = play.scene.pk
    response = client_for(play.gm).post(_start_url(play), data)
    assert response.status_code == 302 and response.url == _dashboard(play) + "#personajes-llevados"
    assert Takeover.objects.get().scene == play.scene


def test_a_forged_character_or_taker_is_refused_in_spanish(play):
    away(play, play.bruno)
    data = {"character": play.ines.pk, "taken_by": play.outsider.pk, "scene": "", "reason": ""}
    response = client_for(play.gm).post(_start_url(play), data)
    assertContains(response, "Elige el personaje de un jugador ausente de la lista.")
    assertContains(response, "Elige a la dirección o a un jugador de la partida.")
    assert not Takeover.objects.exists()


def test_a_reason_over_its_limit_is_a_form_error(play):
    away(play, play.bruno)
    data = {"character": play.tomas.pk, "taken_by": play.gm.pk, "scene": "", "reason": "x" * 301}
    response = client_for(play.gm).post(_start_url(play), data)
    assertContains(response, "Demasiado largo: como mucho 300 caracteres (has escrito 301).")
    assert not Takeover.objects.exists()


def test_starting_by_htmx_redirects_the_client(play):
    away(play, play.bruno)
    data = {"character": play.tomas.pk, "taken_by": play.gm.pk, "scene": "", "reason": ""}
    response = client_for(play.gm).post(_start_url(play), data, headers={"HX-Request": "true"})
    assert response.status_code == 200 and response["HX-Redirect"] == _dashboard(play) + "#personajes-llevados"
    assert Takeover.objects.current().get().taken_by == play.gm


# --- handing it back ------------------------------------------------------------------------


def test_the_owner_takes_the_character_back_from_the_campaign_page(play):
    away(play, play.bruno)
    takeover = start(play)
    bruno = client_for(play.bruno)
    page = bruno.get(play.campaign.get_absolute_url())
    assertContains(page, "La Directora lleva a tu personaje Tomás Ferrer desde el ")
    assertContains(page, "Recuperar mi personaje")
    assertContains(page, f'action="{_end_url(play, takeover)}"')
    response = bruno.post(_end_url(play, takeover), {"reason": ""})
    assert response.status_code == 302 and response.url == play.campaign.get_absolute_url()
    takeover.refresh_from_db()
    assert takeover.ended_by == play.bruno
    log = ModerationLog.objects.get(action=ModerationAction.TAKEOVER_ENDED)
    assert log.target_user == play.bruno
    # The cached campaign page moves with it.
    page = bruno.get(play.campaign.get_absolute_url())
    assertContains(page, "Tomás Ferrer vuelve a ser tuyo.")
    assertNotContains(page, "Recuperar mi personaje")


def test_the_taker_sees_what_they_carry_and_hands_it_back_by_htmx(play):
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    takeover = start(play, taken_by=play.ana, scene=play.scene)
    page = client_for(play.ana).get(play.campaign.get_absolute_url())
    assertContains(page, "Llevas a Tomás Ferrer, de Bruno, en la escena «El vestíbulo».")
    response = client_for(play.ana).post(_end_url(play, takeover), {"reason": ""}, headers={"HX-Request": "true"})
    assert response["HX-Redirect"] == play.campaign.get_absolute_url()
    assert Notification.objects.filter(user=play.bruno, text__startswith="Tomás Ferrer vuelve a ser tuyo").exists()


def test_ending_twice_says_it_was_already_back(play):
    away(play, play.bruno)
    takeover = start(play)
    client = client_for(play.gm)
    client.post(_end_url(play, takeover), {"reason": "Vuelve Bruno"})
    response = client.post(_end_url(play, takeover), {"reason": ""}, follow=True)
    assertContains(response, "Ese personaje ya estaba devuelto.")
    assert ModerationLog.objects.filter(action=ModerationAction.TAKEOVER_ENDED).count() == 1


# --- the dashboard panel ----------------------------------------------------------------------


def test_the_dashboard_lists_who_may_be_taken_and_who_is_carried(play):
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    page = client_for(play.gm).get(_dashboard(play))
    assertContains(page, "Personajes de jugadores ausentes")
    assertContains(page, "Tomás Ferrer, de Bruno (ausente hasta el ")
    assertContains(page, TakeoverConsent.GM_AND_NAMED.label)
    assertContains(page, f'href="{_start_url(play)}?personaje={play.tomas.pk}">Llevar su personaje</a>')
    takeover = start(play)
    page = client_for(play.gm).get(_dashboard(play))
    assertContains(page, "La Directora (dirección) lleva a Tomás Ferrer, de Bruno, desde el ")
    assertContains(page, f'action="{_end_url(play, takeover)}"')
    assertContains(page, "Devolver")
    assertNotContains(page, "Llevar su personaje</a>")


def test_the_dashboard_says_when_a_takeover_no_longer_lets_its_taker_write(play, monkeypatch):
    today = campaign_today(play.campaign)
    Membership.objects.filter(campaign=play.campaign, user=play.bruno).update(
        takeover_consent=TakeoverConsent.GM_AND_NAMED
    )
    Absence.objects.create(campaign=play.campaign, user=play.bruno, starts_on=today, ends_on=today)
    start(play, taken_by=play.ana, scene=play.scene)
    assertNotContains(client_for(play.gm).get(_dashboard(play)), "En pausa")
    membership = Membership.objects.select_related("user").get(campaign=play.campaign, user=play.bruno)
    absences.consent_set(membership=membership, consent=TakeoverConsent.GM)
    page = client_for(play.gm).get(_dashboard(play))
    assertContains(page, '· <span class="small fw-semibold">En pausa: Bruno ya no lo permite.</span>')
    # A day later, before the clock notices the return.
    tomorrow = timezone.now() + timedelta(days=1)
    monkeypatch.setattr(timezone, "now", lambda: tomorrow)
    assertContains(client_for(play.gm).get(_dashboard(play)), "En pausa: Bruno ya no está ausente.")


def test_a_player_who_allows_nothing_is_listed_without_the_button(play):
    away(play, play.bruno, consent=TakeoverConsent.NOBODY)
    page = client_for(play.gm).get(_dashboard(play))
    assertContains(page, TakeoverConsent.NOBODY.label)
    assertNotContains(page, "Llevar su personaje</a>")


def test_the_dashboard_has_no_panel_when_nobody_is_away(play):
    assertNotContains(client_for(play.gm).get(_dashboard(play)), "Personajes de jugadores ausentes")


def _away_players(world: World, n: int) -> None:
    for i in range(n):
        player = add_member(world.campaign, display_name=f"Ausente {i}")
        play_character(world.campaign, player, f"Personaje {i}")
        away(world, player)


@pytest.mark.parametrize("n", [1, 5])
def test_the_dashboard_panel_costs_the_same_for_1_or_5_away_members(play, django_assert_max_num_queries, n):
    other = make_world()
    client = client_for(other.gm)
    client.get(_dashboard(other))  # what the page keeps in the cache is warm
    with CaptureQueriesContext(connection) as queries:
        client.get(_dashboard(other))
    baseline = len(queries)
    away(play, play.bruno)
    start(play)
    _away_players(play, n)
    client = client_for(play.gm)
    client.get(_dashboard(play))
    # The panel's own queries: who is away, their memberships, their
    # characters, the current takeovers (for the candidates and for the
    # list) and the direction's ids; none per member.
    with django_assert_max_num_queries(baseline + 6):
        html = client.get(_dashboard(play)).content.decode()
    assert html.count("Llevar su personaje</a>") == n
    assert "La Directora (dirección) lleva a Tomás Ferrer" in html


def test_names_in_the_panels_are_escaped(play):
    play.bruno.display_name = XSS
    play.bruno.save()
    play.tomas.name = XSS
    play.tomas.save()
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    start(play, taken_by=play.ana, scene=play.scene)
    for user, url in ((play.gm, _dashboard(play)), (play.ana, play.campaign.get_absolute_url())):
        html = client_for(user).get(url).content.decode()
        assert XSS not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    html = client_for(play.gm).get(_start_url(play)).content.decode()
    assert XSS not in html
