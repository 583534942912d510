"""Every test factory in one place: model factories, the small builders that go
through the services (a member, a post, a roll in the log) and fresh browser
seeds. The worlds made of them are in tests/conftest.py."""

from __future__ import annotations

import itertools

import factory

from accounts.models import User
from campaigns import services as campaign_services
from campaigns.markup import render_markdown
from campaigns.models import Campaign, Membership, Post, Role, Scene, Visibility
from campaigns.permissions import campaign_access
from rolls import services as roll_services
from rolls.models import RollEntry
from sheets.models import Character
from systems.hitos.models import Aspect, HitosSheet, Skill, Weapon

# --- Model factories ------------------------------------------------------------------------


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"jugador{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.org")
    display_name = factory.Sequence(lambda n: f"Jugador {n}")
    language = "es"
    password = factory.django.Password("clave-de-prueba-123")


class CampaignFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Campaign

    title = factory.Sequence(lambda n: f"Partida {n}")
    slug = factory.Sequence(lambda n: f"partida-{n}")
    system = "hitos"
    visibility = Visibility.PUBLIC
    gm = factory.SubFactory(UserFactory)


class CharacterFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Character

    campaign = factory.SubFactory(CampaignFactory)
    owner = factory.SubFactory(UserFactory)
    name = factory.Sequence(lambda n: f"Personaje {n}")
    status = Character.Status.APPROVED

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        """The character's core row, then its HITOS sheet: the sheet's fields
        given (``fortaleza=4``, ``drama_points=2``, …) over ``HITOS_DEFAULTS``."""
        sheet_fields = {name: kwargs.pop(name) for name in HITOS_FIELDS if name in kwargs}
        character = super()._create(model_class, *args, **kwargs)
        HitosSheet.objects.create(character=character, **{**HITOS_DEFAULTS, **sheet_fields})
        return character


# The HITOS sheet's own fields (``HitosSheet``, beside the character's core row).
HITOS_FIELDS = tuple(f.name for f in HitosSheet._meta.concrete_fields if f.name != "character")
# CharacterFactory's sheet: Aguante 5 (3 + 4 ÷ 2), Resistencia 15; Entereza
# 4 + 5 ÷ 2 = 6, Estabilidad 18; 5 drama points.
HITOS_DEFAULTS = {"fortaleza": 3, "reflejos": 6, "voluntad": 4, "intelecto": 5, "drama": 5, "drama_points": 5}


class SkillFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Skill

    character = factory.SubFactory(CharacterFactory)
    name = "Pelea"
    category = "combate"
    value = 4


class AspectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Aspect

    character = factory.SubFactory(CharacterFactory)
    kind = Aspect.Kind.HITO
    phrase = factory.Sequence(lambda n: f"Hito {n}")


class WeaponFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Weapon

    character = factory.SubFactory(CharacterFactory)
    name = "Cuchillo"
    damage_code = "C"
    melee = True


# --- Builders -------------------------------------------------------------------------------


def play_character(campaign: Campaign, owner: User, name: str, **fields) -> Character:
    """An approved character as the table's world has them: Fortaleza 5,
    Reflejos 6, Voluntad 5, Intelecto 5, Drama 5 with 3 points, Combate 4,
    Sigilo 3 and a knife (``fields`` change any of the sheet's fields)."""
    fields = {"fortaleza": 5, "reflejos": 6, "voluntad": 5, "intelecto": 5, "drama": 5, "drama_points": 3, **fields}
    character = CharacterFactory(campaign=campaign, owner=owner, name=name, **fields)
    SkillFactory(character=character, name="Combate", category="combate", value=4)
    SkillFactory(character=character, name="Sigilo", category="subterfugio", value=3)
    WeaponFactory(character=character)
    return character


def add_member(
    campaign: Campaign, role: str = Role.PLAYER, *, status: str = Membership.Status.ACTIVE, **user_fields
) -> User:
    """A new user with this role (and membership status) in the campaign."""
    user = UserFactory(**user_fields)
    Membership.objects.create(campaign=campaign, user=user, role=role, status=status)
    return user


def make_scene(campaign: Campaign, *, title: str = "La posada", everyone: bool = True, participants=()) -> Scene:
    """A scene made with the ORM (no ``scene_created`` signal)."""
    scene = Scene.objects.create(campaign=campaign, title=title, everyone=everyone)
    scene.participants.set(participants)
    return scene


def make_post(
    scene: Scene,
    author: User,
    *,
    body: str = "Entro en la posada.",
    recipients=Post.Recipients.ALL,
    chosen=(),
    **fields,
) -> Post:
    """A post made with the ORM (no notifications): out of character unless told."""
    fields.setdefault("voice", Post.Voice.OOC)
    created = Post.objects.create(
        scene=scene, author=author, body=body, body_html=render_markdown(body), recipients=recipients, **fields
    )
    created.chosen_recipients.set(chosen)
    return created


def write(scene: Scene, author: User, body: str = "Entro en la posada.", **fields) -> Post:
    """A post written through the service, as the author."""
    fields.setdefault("voice", Post.Voice.OOC)
    access = campaign_access(author, scene.campaign)
    return campaign_services.post_create(access=access, scene=scene, body=body, **fields)


# --- Rolls ----------------------------------------------------------------------------------

_seeds = itertools.count(1)


def client_seed() -> str:
    """A fresh, valid browser seed (32 hex digits, as client-seed.js makes)."""
    return f"{next(_seeds):032x}"


def plain_read(dice: list[int]) -> dict:
    """The reading of a roll that belongs to no game system."""
    return {"system": "test", "sum": sum(dice)}


def roll(world, *, user: User | None = None, spec: str = "3d10", purpose: str = "Tirada", **kwargs) -> RollEntry:
    """A roll appended to the world's log (by its player, in its scene unless told)."""
    kwargs.setdefault("client_seed", client_seed())
    kwargs.setdefault("scene", world.scene)
    return roll_services.roll_append(
        campaign=world.campaign, user=user or world.player, spec=spec, purpose=purpose, read=plain_read, **kwargs
    )
