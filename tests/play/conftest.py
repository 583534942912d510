"""Fixtures for playing HITOS at the table (rolls from posts, activations,
roll requests, combat, horror, opposed rolls).

``play`` is a campaign with its roll log open: a GM, two players with
approved characters (skills, aspects, drama points), a reader, an outsider,
an NPC, an open scene with a situation aspect and a first post.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest
from django.test import Client

from accounts.models import User
from campaigns.models import Campaign, Membership, Post, Role, Scene, SceneAspect, Visibility
from rolls import services
from sheets.models import Aspect, Character, Skill, Weapon
from tests.factories import CampaignFactory, UserFactory

_seeds = itertools.count(1)


def client_seed() -> str:
    """A fresh, valid browser seed (32 hex digits, as client-seed.js makes)."""
    return f"{next(_seeds) + 10_000:032x}"


def client_for(user: User | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


@dataclass
class Play:
    campaign: Campaign
    scene: Scene
    gm: User
    ana: User
    bruno: User
    reader: User
    outsider: User
    ines: Character  # Ana's character
    tomas: Character  # Bruno's character
    npc: Character  # a GM-owned NPC
    ines_aspect: Aspect
    tomas_aspect: Aspect
    scene_aspect: SceneAspect
    post: Post


def _character(campaign, owner, name, **fields) -> Character:
    character = Character.objects.create(
        campaign=campaign,
        owner=owner,
        name=name,
        status=Character.Status.APPROVED,
        fortaleza=fields.pop("fortaleza", 5),
        reflejos=fields.pop("reflejos", 6),
        voluntad=fields.pop("voluntad", 5),
        intelecto=fields.pop("intelecto", 5),
        drama=5,
        drama_points=fields.pop("drama_points", 3),
        **fields,
    )
    Skill.objects.create(character=character, name="Combate", category="combate", value=4)
    Skill.objects.create(character=character, name="Sigilo", category="subterfugio", value=3)
    Weapon.objects.create(character=character, name="Cuchillo", damage_code="C", melee=True)
    return character


def make_play(visibility: str = Visibility.PUBLIC) -> Play:
    gm = UserFactory(display_name="La Directora")
    campaign = CampaignFactory(title="La mansión", gm=gm, visibility=visibility)
    services.log_open(campaign=campaign)
    ana = UserFactory(display_name="Ana")
    bruno = UserFactory(display_name="Bruno")
    reader = UserFactory(display_name="La Lectora")
    for member, role in ((ana, Role.PLAYER), (bruno, Role.PLAYER), (reader, Role.READER)):
        Membership.objects.create(campaign=campaign, user=member, role=role)
    scene = Scene.objects.create(campaign=campaign, title="El vestíbulo")
    scene_aspect = SceneAspect.objects.create(scene=scene, phrase="Oscuridad casi total")
    ines = _character(campaign, ana, "Inés Salcedo")
    tomas = _character(campaign, bruno, "Tomás Ferrer")
    npc = _character(campaign, gm, "El mayordomo", kind=Character.Kind.NPC, damage_code="M")
    ines_aspect = Aspect.objects.create(character=ines, kind=Aspect.Kind.HITO, phrase="Ágil como una gata")
    tomas_aspect = Aspect.objects.create(character=tomas, kind=Aspect.Kind.HITO, phrase="Fuerte como un roble")
    post = Post.objects.create(
        scene=scene, author=ana, character=ines, body="Entro en silencio.", body_html="<p>Entro en silencio.</p>"
    )
    outsider = UserFactory(display_name="Forastera")
    return Play(
        campaign,
        scene,
        gm,
        ana,
        bruno,
        reader,
        outsider,
        ines,
        tomas,
        npc,
        ines_aspect,
        tomas_aspect,
        scene_aspect,
        post,
    )


@pytest.fixture
def play(db) -> Play:
    return make_play(Visibility.PUBLIC)


@pytest.fixture
def private_play(db) -> Play:
    return make_play(Visibility.PRIVATE)
