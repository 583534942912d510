"""The game-system seam (issue 12): the registry, what the table asks of the
campaign's system, and the defects the seam removes by construction."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse

from campaigns import services as forum
from campaigns.models import Campaign, Scene
from campaigns.permissions import campaign_access
from rolls import presenters
from sheets.models import SheetEvent
from systems.hitos.models import Aspect, HitosEvent
from systems.hitos.system import Hitos
from table import checks, systems
from tests.conftest import client_for


def _temporary(character, duration):
    return Aspect.objects.create(
        character=character, kind=Aspect.Kind.TEMPORARY, phrase=f"Aspecto de {duration}", duration=duration
    )


# --- the registry -----------------------------------------------------------------------


def test_hitos_is_registered_under_the_key_campaigns_store():
    assert isinstance(systems.get("hitos"), Hitos)
    assert [s.key for s in systems.installed()] == ["hitos", "vaesen", "aventuras"]
    assert systems.for_game({"system": "hitos"}) is systems.get("hitos")
    assert systems.for_game({"system": "free"}) is None
    assert systems.for_game({}) is None


def test_two_systems_may_not_share_a_key():
    class Impostor(systems.GameSystem):
        key = "hitos"

    with pytest.raises(ImproperlyConfigured):
        systems.register(Impostor())
    systems.register(Hitos())  # the same system again (a re-run ready()) is no conflict
    assert isinstance(systems.get("hitos"), Hitos)


def test_the_startup_check_finds_a_system_nobody_offers(monkeypatch):
    assert checks.game_systems() == []

    class Orphan(systems.GameSystem):
        key = "huerfano"

    monkeypatch.setitem(systems._systems, "huerfano", Orphan())
    assert [e.id for e in checks.game_systems()] == ["table.E002"]


def test_the_log_pages_say_plainly_when_no_table_registered_a_card(monkeypatch):
    monkeypatch.setattr(presenters, "_builders", {})
    with pytest.raises(ImproperlyConfigured, match="table"):
        presenters.log_cards([], access=None)


# --- a campaign whose system is not installed -------------------------------------------


def test_a_campaign_of_a_system_not_installed_has_posts_but_no_roll_rows(play):
    Campaign.objects.filter(pk=play.campaign.pk).update(system="pasapalabra")
    scene_url = play.scene.get_absolute_url()
    page = client_for(play.ana).get(scene_url)
    assert page.status_code == 200
    assert page.context["form"].roll_forms == []
    assert 'name="tirada-0-purpose"' not in page.content.decode()
    chance = client_for(play.ana).get(reverse("table:post-roll-chance", args=[play.campaign.slug, play.scene.pk]))
    assert chance.status_code == 404
    posted = client_for(play.ana).post(
        reverse("table:post-create", args=[play.campaign.slug, play.scene.pk]),
        {"voice": f"character:{play.ines.pk}", "body": "Sin dados.", "recipients": "all", "submission_key": "k1"},
    )
    assert posted.status_code == 302
    assert play.scene.posts.filter(body="Sin dados.").exists()


# --- a new scene, whoever starts it -----------------------------------------------------


def test_a_scene_created_from_the_campaign_page_ends_scene_long_aspects(play):
    """The defect issue 12 names: only the sheets' own "nueva escena" ended them."""
    scene_long = _temporary(play.ines, Aspect.Duration.SCENE)
    session_long = _temporary(play.ines, Aspect.Duration.SESSION)
    response = client_for(play.gm).post(
        reverse("campaigns:scene-create", args=[play.campaign.slug]),
        {"title": "El sótano", "description": "", "everyone": "on", "aspects": ""},
    )
    assert response.status_code == 302
    scene_long.refresh_from_db()
    session_long.refresh_from_db()
    assert scene_long.ended_at is not None
    assert session_long.ended_at is None
    event = SheetEvent.objects.get(campaign=play.campaign, kind=HitosEvent.NEW_SCENE)
    assert event.actor == play.gm and "El sótano" in event.reason


def test_a_scene_created_by_a_service_without_actor_is_told_as_the_gms(play):
    scene_long = _temporary(play.tomas, Aspect.Duration.SCENE)
    forum.scene_create(campaign=play.campaign, title="El desván")
    scene_long.refresh_from_db()
    assert scene_long.ended_at is not None
    assert SheetEvent.objects.get(kind=HitosEvent.NEW_SCENE).actor == play.gm


# --- the off-game scene -----------------------------------------------------------------


def test_the_offgame_scene_page_offers_no_game_tools(play):
    offgame = Scene.objects.create(campaign=play.campaign, title="Fuera de juego", is_offgame=True, position=0)
    page = client_for(play.gm).get(offgame.get_absolute_url())
    assert page.status_code == 200
    assert page.context["scene_tools_template"] == ""
    html = page.content.decode()
    assert reverse("hitos:combat", args=[play.campaign.slug, offgame.pk]) not in html
    assert reverse("table:request-create", args=[play.campaign.slug, offgame.pk]) not in html


def test_the_system_adds_its_tools_to_an_ordinary_scene(play):
    context = systems.get("hitos").scene_context(play.scene, campaign_access(play.gm, play.campaign), characters=[])
    assert context["scene_tools_template"] == "hitos/_scene_tools.html"
    page = client_for(play.gm).get(play.scene.get_absolute_url())
    assert reverse("hitos:combat", args=[play.campaign.slug, play.scene.pk]) in page.content.decode()


def test_the_badge_line_comes_from_the_system_that_signed_the_roll():
    from table.cards import badge_line

    hitos_entry = {"dice": [3, 7, 9], "game": {"system": "hitos", "C": 7, "total": 12, "success": True}}
    assert badge_line(hitos_entry) == "3 · 7 · 9 (C 7) → 12 éxito"
    # After a positive activation the pair counts, not C (H15): the badge says so.
    activated = {
        "dice": [6, 2, 6],
        "game": {"system": "hitos", "reading": "positive", "C": 6, "value": 12, "total": 17, "success": True},
    }
    assert badge_line(activated) == "6 · 2 · 6 (valor 12) → 17 éxito"
    assert badge_line({"dice": [4], "game": {"system": "desconocido"}}) is None
    assert badge_line({"dice": [4], "game": {"system": "free", "total": 4}}) is None
