"""Fixtures for every test, and the one world the table's tests play in.

``World`` (``make_world``) is a HITOS campaign with its roll log open: the GM,
two players (Ana with Inés, Bruno with Tomás: approved characters with skills,
a knife, a hito and drama points), a reader, an outsider, the GM's NPC, an
open scene with a situation aspect and a first post by Ana; on request also a
second post whispered to the GM, or no NPC. ``world.client("gm")`` and
``client_for(user)`` give logged-in test clients.

``play`` and ``private_play`` are that world in a public and a private
campaign; the roll log's ``table`` (tests/rolls/conftest.py) is the same
world with the whisper. Two worlds stay their own, built from the same
factories (tests/factories.py) and ``client_for``: the forum's permission
world (tests/campaigns: built through the forum's services, with a co-GM, an
applicant and no characters) and the sheets' (tests/systems/hitos/sheet: one bare sheet
whose scores the meter tests count on).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Self

import pytest
from django.conf import settings
from django.db import connection, connections, transaction
from django.test import Client

from accounts.models import User
from campaigns.models import Campaign, Membership, Post, Role, Scene, Visibility
from rolls import rollog
from rolls import services as roll_services
from sheets.models import Character
from systems.hitos.models import Aspect, SceneAspect
from tests.factories import AspectFactory, CampaignFactory, UserFactory, play_character


@pytest.fixture(autouse=True)
def _fast_password_hasher(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _plain_static_storage(settings):
    # Tests render templates without running collectstatic first.
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


@pytest.fixture(autouse=True)
def _site_language():
    """Each test starts in the site's language: a request by an English
    reader leaves English active in the thread (the locale middleware
    activates it and nothing deactivates it), which no later test expects."""
    from django.utils import translation

    translation.activate(settings.LANGUAGE_CODE)
    yield
    translation.activate(settings.LANGUAGE_CODE)


@pytest.fixture(autouse=True)
def _empty_cache():
    """Each test starts with an empty cache: the database is rolled back
    between tests and row ids come back, so what one test cached under a
    scene's id (its version, its page of posts) must not reach the next."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def database_tasks():
    """The site's task backend (tasks kept in the database until a worker
    runs them) in place of the suite's immediate one; ``run_worker()`` runs
    what is ready, as ``manage.py db_worker --batch`` does."""
    from django.tasks import task_backends
    from django_tasks_db import DatabaseBackend

    saved = task_backends["default"]
    task_backends["default"] = DatabaseBackend(
        alias="default", params={"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}
    )
    yield task_backends["default"]
    task_backends["default"] = saved


def run_worker() -> None:
    """Run every task that is ready, then return (the site's worker in batch mode)."""
    from unittest import mock

    from django.core.management import call_command

    # The worker closes connections it finds unusable, as requests do; inside
    # a test's transaction that would be this test's own connection.
    with mock.patch("django_tasks_db.management.commands.db_worker.close_old_connections"):
        call_command("db_worker", "--batch", "--no-reload", "--no-startup-delay", "--interval", "0", verbosity=0)


# The PostgreSQL triggers that refuse TRUNCATE (the roll log's, rolls 0003).
TRUNCATE_TRIGGERS = """
SELECT tgrelid::regclass::text, quote_ident(tgname) FROM pg_trigger
WHERE NOT tgisinternal AND tgtype & 32 <> 0 AND tgenabled <> 'D'
"""


@pytest.fixture(autouse=True, scope="session")
def _flush_past_the_truncate_triggers():
    """Let the flush after a ``transaction=True`` test empty the roll log.

    pytest-django empties the database after such a test with one TRUNCATE of
    every table, which the log's triggers refuse. Here the flush does what
    docs/deploy.md reserves for the tables' owner (the role the tests connect
    as): in the flush's own transaction it disables the TRUNCATE triggers,
    truncates, and enables them again. No other session ever sees them
    disabled, the UPDATE and DELETE triggers stay on, and the triggers
    themselves keep no way around them that the site's role could use.
    """
    if connection.vendor != "postgresql":
        yield
        return
    operations = type(connection.ops)
    flush = operations.execute_sql_flush

    def execute_sql_flush(self, sql_list):
        with transaction.atomic(using=self.connection.alias), self.connection.cursor() as cursor:
            cursor.execute(TRUNCATE_TRIGGERS)
            triggers = cursor.fetchall()
            for table, trigger in triggers:
                cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER {trigger}")
            flush(self, sql_list)
            for table, trigger in triggers:
                cursor.execute(f"ALTER TABLE {table} ENABLE TRIGGER {trigger}")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(operations, "execute_sql_flush", execute_sql_flush)
        yield


@pytest.fixture
def user(db):
    return UserFactory()


@pytest.fixture
def user_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def campaign(db):
    return CampaignFactory()


# --- The world ------------------------------------------------------------------------------


def client_for(user: User | None) -> Client:
    """A test client logged in as ``user`` (anonymous for None)."""
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


@dataclass
class World:
    """The table's world (see the module's docstring); ``World.build()`` makes one."""

    campaign: Campaign
    scene: Scene
    gm: User
    ana: User
    bruno: User
    reader: User
    outsider: User
    ines: Character  # Ana's character
    tomas: Character  # Bruno's character
    npc: Character | None  # a GM-owned NPC (made unless asked not to)
    ines_aspect: Aspect
    tomas_aspect: Aspect
    scene_aspect: SceneAspect
    post: Post  # Ana's, as Inés, to everyone
    whisper: Post | None = None  # Ana's, to the GM alone (made when asked)

    # The names other tests give the same people: the player, the other player
    # and the player's character.
    @property
    def player(self) -> User:
        return self.ana

    @property
    def other(self) -> User:
        return self.bruno

    @property
    def character(self) -> Character:
        return self.ines

    def user(self, role: str) -> User | None:
        """The user of a role ("gm", "ana", "player", "reader", …); None for "anonymous"."""
        return None if role == "anonymous" else getattr(self, role)

    def client(self, role: str) -> Client:
        """A test client logged in as the role's user ("anonymous": not logged in)."""
        return client_for(self.user(role))

    @classmethod
    def build(cls, visibility: str = Visibility.PUBLIC, *, whisper: bool = False, npc: bool = True) -> Self:
        gm = UserFactory(display_name="La Directora")
        campaign = CampaignFactory(title="La mansión", gm=gm, visibility=visibility)
        roll_services.log_open(campaign=campaign)
        ana = UserFactory(display_name="Ana")
        bruno = UserFactory(display_name="Bruno")
        reader = UserFactory(display_name="La Lectora")
        for member, role in ((ana, Role.PLAYER), (bruno, Role.PLAYER), (reader, Role.READER)):
            Membership.objects.create(campaign=campaign, user=member, role=role)
        scene = Scene.objects.create(campaign=campaign, title="El vestíbulo")
        scene_aspect = SceneAspect.objects.create(scene=scene, phrase="Oscuridad casi total")
        ines = play_character(campaign, ana, "Inés Salcedo")
        tomas = play_character(campaign, bruno, "Tomás Ferrer")
        butler = play_character(campaign, gm, "El mayordomo", kind=Character.Kind.NPC, damage_code="M") if npc else None
        ines_aspect = AspectFactory(character=ines, kind=Aspect.Kind.HITO, phrase="Ágil como una gata")
        tomas_aspect = AspectFactory(character=tomas, kind=Aspect.Kind.HITO, phrase="Fuerte como un roble")
        post = Post.objects.create(
            scene=scene,
            author=ana,
            character=ines,
            body="Abro la puerta del sótano.",
            body_html="<p>Abro la puerta del sótano.</p>",
        )
        whispered = None
        if whisper:
            whispered = Post.objects.create(
                scene=scene,
                author=ana,
                body="Le susurro a la directora: robo la llave.",
                body_html="<p>Le susurro a la directora: robo la llave.</p>",
                recipients=Post.Recipients.GM,
            )
        outsider = UserFactory(display_name="Forastera")
        return cls(
            campaign=campaign,
            scene=scene,
            gm=gm,
            ana=ana,
            bruno=bruno,
            reader=reader,
            outsider=outsider,
            ines=ines,
            tomas=tomas,
            npc=butler,
            ines_aspect=ines_aspect,
            tomas_aspect=tomas_aspect,
            scene_aspect=scene_aspect,
            post=post,
            whisper=whispered,
        )


make_world = World.build


@pytest.fixture
def play(db) -> World:
    return make_world(Visibility.PUBLIC)


@pytest.fixture
def private_play(db) -> World:
    return make_world(Visibility.PRIVATE)


# --- Chosen dice ----------------------------------------------------------------------------


@contextmanager
def chosen_dice(*dice_sets: list[int]) -> Iterator[list[list[int]]]:
    """While open, the next 3d10 the roll log draws are ``dice_sets`` in order
    (and whatever is added to the queue it yields); then random again."""
    queue = [list(dice) for dice in dice_sets]
    drawn: dict[tuple[bytes, str], list[int]] = {}
    real = rollog.dice_for_spec

    def draw(seed, message, spec):
        # The log asks twice for one roll's dice (to read them, to sign them).
        key = (seed, message)
        if key not in drawn:
            drawn[key] = list(queue.pop(0)) if spec == "3d10" and queue else real(seed, message, spec)
        return list(drawn[key])

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rollog, "dice_for_spec", draw)
        yield queue


@pytest.fixture
def dice() -> Iterator[list[list[int]]]:
    """Queue the 3d10 of the next rolls (``dice.extend([[1, 2, 3], …])``);
    when the queue is empty the log draws as usual."""
    with chosen_dice() as queue:
        yield queue


@pytest.fixture
def fixed_dice(dice) -> list[list[int]]:
    """``dice`` under the name the horror and opposed-roll tests use."""
    return dice


def in_threads(count: int, work) -> tuple[list[object], list[BaseException]]:
    """Run ``work(n)`` for n in range(count) in as many threads, released at
    once (PostgreSQL race tests): what they returned and what they raised."""
    barrier = threading.Barrier(count)
    results: list[object] = []
    errors: list[BaseException] = []

    def run(n: int) -> None:
        try:
            barrier.wait(timeout=30)
            results.append(work(n))
        except BaseException as exc:  # noqa: BLE001 - counted by the test
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    return results, errors
