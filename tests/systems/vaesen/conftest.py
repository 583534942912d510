"""The Vaesen sheets' world: a campaign («El molino», system "vaesen") with its
GM, a player with the approved player character «Elsa» (Físico 3, Precisión 4,
Lógica 3, Empatía 2; Agilidad 2, Sigilo 3, Medicina 1; a knife, lockpicks +1),
a second player, a reader, an outsider, the GM's human NPC «El molinero»
(Resistencia 3) and the creature «El Näcken» (Miedo 2).

The fixtures are shared with the rolls' tests (tests/systems/vaesen/).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.test import Client

from accounts.models import User
from campaigns.models import Campaign, Role
from sheets.models import Character
from systems.vaesen.models import VaesenItem, VaesenSheet, VaesenWeapon
from tests.conftest import client_for
from tests.factories import CampaignFactory, UserFactory, add_member


def vaesen_character(
    campaign: Campaign,
    owner: User,
    name: str,
    *,
    kind: str = Character.Kind.PC,
    status: str = Character.Status.APPROVED,
    **sheet_fields,
) -> Character:
    """A character with its Vaesen sheet, made with the ORM (no history)."""
    character = Character.objects.create(campaign=campaign, owner=owner, name=name, kind=kind, status=status)
    fields = {"fisico": 3, "precision": 3, "logica": 3, "empatia": 3, **sheet_fields}
    character.vaesen = VaesenSheet.objects.create(character=character, **fields)
    return character


@pytest.fixture
def vaesen_gm(db) -> User:
    return UserFactory(username="directora")


@pytest.fixture
def vaesen_campaign(vaesen_gm) -> Campaign:
    return CampaignFactory(gm=vaesen_gm, title="El molino", slug="el-molino", system="vaesen")


@pytest.fixture
def vaesen_player(vaesen_campaign) -> User:
    return add_member(vaesen_campaign, Role.PLAYER, username="elsa_jugadora")


@pytest.fixture
def vaesen_other_player(vaesen_campaign) -> User:
    return add_member(vaesen_campaign, Role.PLAYER)


@pytest.fixture
def vaesen_reader(vaesen_campaign) -> User:
    return add_member(vaesen_campaign, Role.READER)


@pytest.fixture
def vaesen_outsider(db) -> User:
    return UserFactory()


@pytest.fixture
def vaesen_pc(vaesen_campaign, vaesen_player) -> Character:
    character = vaesen_character(
        vaesen_campaign,
        vaesen_player,
        "Elsa",
        fisico=3,
        precision=4,
        logica=3,
        empatia=2,
        skills={"Agilidad": 2, "Sigilo": 3, "Medicina": 1},
        archetype="Doctora",
        motivation="Saber qué le pasó a su hermano",
        resources=4,
    )
    VaesenWeapon.objects.create(sheet=character.vaesen, name="Cuchillo", skill="Combate cuerpo a cuerpo", damage=1)
    VaesenItem.objects.create(sheet=character.vaesen, name="Ganzúas", bonus=1, skill="Sigilo", availability=2)
    return character


@pytest.fixture
def vaesen_npc(vaesen_campaign, vaesen_gm) -> Character:
    """A human NPC: Resistencia points instead of conditions (V20)."""
    return vaesen_character(
        vaesen_campaign,
        vaesen_gm,
        "El molinero",
        kind=Character.Kind.NPC,
        npc_kind=VaesenSheet.NpcKind.HUMAN,
        fisico=4,
        resistance=3,
        skills={"Fuerza": 2},
    )


@pytest.fixture
def vaesen_creature(vaesen_campaign, vaesen_gm) -> Character:
    """A creature with its Fear value (V26)."""
    return vaesen_character(
        vaesen_campaign,
        vaesen_gm,
        "El Näcken",
        kind=Character.Kind.NPC,
        npc_kind=VaesenSheet.NpcKind.CREATURE,
        fisico=6,
        empatia=5,
        fear=2,
    )


@dataclass
class VaesenWorld:
    campaign: Campaign
    gm: User
    player: User
    other: User
    reader: User
    outsider: User
    pc: Character
    npc: Character
    creature: Character

    def client(self, who: str) -> Client:
        """A client logged in as ``who`` ("gm", "player", …; "anonymous": not logged in)."""
        return client_for(None if who == "anonymous" else getattr(self, who))


@pytest.fixture
def vaesen_world(
    vaesen_campaign,
    vaesen_gm,
    vaesen_player,
    vaesen_other_player,
    vaesen_reader,
    vaesen_outsider,
    vaesen_pc,
    vaesen_npc,
    vaesen_creature,
) -> VaesenWorld:
    return VaesenWorld(
        vaesen_campaign,
        vaesen_gm,
        vaesen_player,
        vaesen_other_player,
        vaesen_reader,
        vaesen_outsider,
        vaesen_pc,
        vaesen_npc,
        vaesen_creature,
    )
