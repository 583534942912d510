"""A ledger line, a sheet's state or a history line names a scene only to a
reader who may open it (issue 29, item 2a): a gift made in a split-party
scene, or a state «por el morro» that lasts one, does not give the scene's
title away to the receiver's player when they are not in it."""

from __future__ import annotations

import pytest
from django.urls import reverse

from campaigns.models import Scene
from sheets.models import SheetEvent
from systems.aventuras.heroes import services
from systems.aventuras.models import AventurasState, HeroMove
from tests.factories import make_scene

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
SECRET_SCENE = "La cueva de la Reina Helada"


@pytest.fixture
def split(aventuras_world) -> Scene:
    """A split-party scene for the other player only."""
    w = aventuras_world
    return make_scene(w.campaign, title=SECRET_SCENE, everyone=False, participants=[w.other])


def _pages(w, character) -> dict[str, str]:
    args = [w.campaign.slug, character.pk]
    return {
        "hero": reverse("aventuras:hero-page", args=args),
        "sheet": reverse("sheets:sheet-detail", args=args),
        "history": reverse("sheets:sheet-history", args=args),
    }


def _shown(client, url: str) -> str:
    full = client.get(url)
    fragment = client.get(url, **HTMX)
    assert (full.status_code, fragment.status_code) == (200, 200)
    return full.content.decode() + fragment.content.decode()


def test_a_gift_from_a_split_party_scene_does_not_name_it_on_the_receivers_pages(aventuras_world, split):
    w = aventuras_world
    gift = services.offer_gift(giver=w.other_pc, receiver=w.pc, actor=w.other, why="Gracias", scene=split)
    services.decide(request_id=gift.pk, campaign=w.campaign, actor=w.gm, accept=True)
    assert HeroMove.objects.get(character=w.pc, kind=HeroMove.Kind.RECEIVE).scene == split
    pages = _pages(w, w.pc)
    player = w.client("player")
    assert SECRET_SCENE not in _shown(player, pages["hero"])
    assert SECRET_SCENE not in _shown(player, pages["sheet"])
    # The direction, and the giver who was there, still read where it happened.
    assert SECRET_SCENE in _shown(w.client("gm"), pages["hero"])
    assert SECRET_SCENE in _shown(w.client("other"), _pages(w, w.other_pc)["hero"])


def test_a_state_por_el_morro_in_a_split_party_scene_is_not_named_to_a_player_not_in_it(aventuras_world, split):
    w = aventuras_world
    proposal = services.propose_state(
        character=w.pc, actor=w.gm, state_name="Congelada", why="Un soplo de hielo", scene=split
    )
    services.decide(request_id=proposal.pk, campaign=w.campaign, actor=w.player, accept=True)
    assert AventurasState.objects.get(sheet_id=w.pc.pk, for_free=True).scene == split
    pages = _pages(w, w.pc)
    player = w.client("player")
    for name in ("hero", "sheet", "history"):
        assert SECRET_SCENE not in _shown(player, pages[name]), name
    assert "Congelada" in _shown(player, pages["sheet"])
    assert "Dura una escena (A27)." in _shown(player, pages["sheet"])
    assert SECRET_SCENE in _shown(w.client("gm"), pages["sheet"])


def test_a_state_ended_by_a_split_party_scene_does_not_name_it_in_the_history(aventuras_world):
    w = aventuras_world
    AventurasState.objects.create(sheet_id=w.pc.pk, name="Hambrienta", for_free=True, scene=w.scene)
    Scene.objects.filter(pk=w.scene.pk).update(status=Scene.Status.ARCHIVED)
    split = make_scene(w.campaign, title=SECRET_SCENE, everyone=False, participants=[w.other])
    services.scene_started(split, actor=w.gm)
    ended = SheetEvent.objects.get(character=w.pc)
    assert ended.summary == "El estado por el morro «Hambrienta» termina: su escena ya acabó"
    assert SECRET_SCENE not in _shown(w.client("player"), _pages(w, w.pc)["history"])
