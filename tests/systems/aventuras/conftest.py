"""The Hora de Aventuras world (seed S004's example): a campaign («La tierra
de Ooo», system "aventuras") with its GM, a player with the approved hero
«Palomita» (la mazorca lobo: Cachas 3 and Majo 4 highlighted, Cerebrito and
Espabilado not, so they roll 2 dice; 5 hero points, 4 XP; a flaw; the feat
«Aullido» that needs a hero point; the tool «Varita» +1 to Cerebrito), a
second player with the hero «Tarta Dulce» (Espabilado 4 highlighted), a
reader, an outsider, the GM's NPC «Profesor Cacahuete» (no hero points) and
an open scene «La puerta del acertijo».

The fixtures are shared by every test of tests/systems/aventuras/.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.test import Client

from accounts.models import User
from campaigns.models import Campaign, Role, Scene
from sheets.models import Character
from systems.aventuras.models import AventurasFeat, AventurasSheet, AventurasTool
from tests.conftest import client_for
from tests.factories import CampaignFactory, UserFactory, add_member, make_scene


def aventuras_character(
    campaign: Campaign,
    owner: User,
    name: str,
    *,
    kind: str = Character.Kind.PC,
    status: str = Character.Status.APPROVED,
    **sheet_fields,
) -> Character:
    """A character with its Hora de Aventuras sheet, made with the ORM (no
    history). A player character starts with 5 hero points (A21), an NPC
    with none (A20)."""
    character = Character.objects.create(campaign=campaign, owner=owner, name=name, kind=kind, status=status)
    fields = {"hero_points": 5 if kind == Character.Kind.PC else None, **sheet_fields}
    character.aventuras = AventurasSheet.objects.create(character=character, **fields)
    return character


@pytest.fixture
def aventuras_gm(db) -> User:
    return UserFactory(username="director_ooo")


@pytest.fixture
def aventuras_campaign(aventuras_gm) -> Campaign:
    return CampaignFactory(gm=aventuras_gm, title="La tierra de Ooo", slug="tierra-de-ooo", system="aventuras")


@pytest.fixture
def aventuras_player(aventuras_campaign) -> User:
    return add_member(aventuras_campaign, Role.PLAYER, username="jugadora_palomita")


@pytest.fixture
def aventuras_other_player(aventuras_campaign) -> User:
    return add_member(aventuras_campaign, Role.PLAYER, username="jugador_tarta")


@pytest.fixture
def aventuras_reader(aventuras_campaign) -> User:
    return add_member(aventuras_campaign, Role.READER)


@pytest.fixture
def aventuras_outsider(db) -> User:
    return UserFactory()


@pytest.fixture
def aventuras_pc(aventuras_campaign, aventuras_player) -> Character:
    character = aventuras_character(
        aventuras_campaign,
        aventuras_player,
        "Palomita",
        concept="Mazorca lobo",
        cachas=3,
        majo=4,
        highlighted=["cachas", "majo"],
        experience=4,
        flaw="Le pueden los acertijos",
        flaw_earns="Gana un punto si se para a resolver un acertijo que retrasa al grupo",
    )
    AventurasFeat.objects.create(
        sheet=character.aventuras, name="Aullido", description="Asusta a los malos", needs_hero_point=True
    )
    AventurasTool.objects.create(sheet=character.aventuras, name="Varita", attribute="cerebrito", bonus=1, uses="magia")
    return character


@pytest.fixture
def aventuras_other_pc(aventuras_campaign, aventuras_other_player) -> Character:
    return aventuras_character(
        aventuras_campaign,
        aventuras_other_player,
        "Tarta Dulce",
        concept="Princesa repostera",
        espabilado=4,
        highlighted=["espabilado"],
    )


@pytest.fixture
def aventuras_npc(aventuras_campaign, aventuras_gm) -> Character:
    """The GM's character: no hero points (A20)."""
    return aventuras_character(
        aventuras_campaign,
        aventuras_gm,
        "Profesor Cacahuete",
        kind=Character.Kind.NPC,
        espabilado=3,
        cachas=2,
        highlighted=["espabilado"],
    )


@pytest.fixture
def aventuras_scene(aventuras_campaign) -> Scene:
    return make_scene(aventuras_campaign, title="La puerta del acertijo")


@dataclass
class AventurasWorld:
    campaign: Campaign
    gm: User
    player: User
    other: User
    reader: User
    outsider: User
    pc: Character
    other_pc: Character
    npc: Character
    scene: Scene

    def client(self, who: str) -> Client:
        """A client logged in as ``who`` ("gm", "player", …; "anonymous": not logged in)."""
        return client_for(None if who == "anonymous" else getattr(self, who))


@pytest.fixture
def aventuras_world(
    aventuras_campaign,
    aventuras_gm,
    aventuras_player,
    aventuras_other_player,
    aventuras_reader,
    aventuras_outsider,
    aventuras_pc,
    aventuras_other_pc,
    aventuras_npc,
    aventuras_scene,
) -> AventurasWorld:
    return AventurasWorld(
        aventuras_campaign,
        aventuras_gm,
        aventuras_player,
        aventuras_other_player,
        aventuras_reader,
        aventuras_outsider,
        aventuras_pc,
        aventuras_other_pc,
        aventuras_npc,
        aventuras_scene,
    )
