"""Private rolls stay private: every surface × every persona × every kind of
private roll (issue 11, items 2–4).

Each private roll carries a unique marker in its purpose. For each persona
the marker must never appear on a surface it may not read, and must appear
where its content is shown to a reader allowed to see it. Openings in JSON
documents are base64: they are decoded before looking, so a served opening
counts as shown.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse

from accounts.models import User
from campaigns import notify
from campaigns.models import Campaign, Membership, Post, Role, Scene, Visibility
from campaigns.permissions import campaign_access
from rolls.models import RollEntry
from sheets.models import Character
from systems.hitos.models import HitosSheet
from systems.hitos.secret import services as secret
from systems.hitos.system import check_plan
from table import services as table_services
from tests.conftest import client_for
from tests.factories import CampaignFactory, UserFactory, client_seed

pytestmark = pytest.mark.django_db

PERSONAS = ("anonymous", "outsider", "removed", "removed_recipient", "player", "recipient", "author", "gm")
KINDS = ("whisper", "gm_post", "split_scene", "secret", "revealed")
# Who may read each kind of roll (the recipient of a whisper, the participants
# of a split-party scene, the post's author, the GM; everyone once revealed).
# A member removed after being chosen for the whisper and the split-party
# scene reads neither any more (issue 29, item 2c).
READERS = {
    "whisper": {"recipient", "author", "gm"},
    "gm_post": {"author", "gm"},
    "split_scene": {"recipient", "author", "gm"},
    "secret": {"gm"},
    "revealed": set(PERSONAS),
}


@dataclass
class World:
    campaign: Campaign
    scene: Scene
    split: Scene
    users: dict[str, User | None]
    rolls: dict[str, RollEntry] = field(default_factory=dict)
    companions: dict[str, RollEntry] = field(default_factory=dict)

    def marker(self, kind: str) -> str:
        return f"MARCA-{kind}-4f7c"


def _post(world: World, author: User, scene: Scene, *, kind: str, recipients: str, chosen=()) -> RollEntry:
    access = campaign_access(author, world.campaign)
    character = Character.objects.get(campaign=world.campaign, owner=author)
    plan = check_plan(
        character,
        characteristic="reflejos",
        difficulty=15,
        purpose=world.marker(kind),
        client_seed=client_seed(),
    )
    post = table_services.post_with_rolls_create(
        access=access,
        scene=scene,
        voice=Post.Voice.CHARACTER,
        body=f"Texto del mensaje {kind}.",
        character=character,
        recipients=recipients,
        chosen=chosen,
        rolls=[plan],
    )
    return post.table_rolls.get().first


def _public_companion(world: World, author: User, scene: Scene, name: str) -> RollEntry:
    """A public roll by the same user in the same scene: its page lists the
    user's other rolls there within ±30 minutes."""
    from rolls import services as roll_services

    return roll_services.free_roll(
        campaign=world.campaign,
        user=author,
        text="1d6",
        purpose=f"Compañera {name}",
        scene=scene,
        client_seed=client_seed(),
    )


@pytest.fixture
def world(db) -> World:
    gm = UserFactory(display_name="La Directora", username="directora")
    campaign = CampaignFactory(title="La mansión", gm=gm, visibility=Visibility.PUBLIC)
    users: dict[str, User | None] = {"anonymous": None, "gm": gm, "outsider": UserFactory(display_name="Forastera")}
    players = (("author", "Ana"), ("recipient", "Bruno"), ("player", "Carla"), ("removed", "Dora"))
    for persona, name in (*players, ("removed_recipient", "Elena")):
        user = UserFactory(display_name=name)
        users[persona] = user
        Membership.objects.create(campaign=campaign, user=user, role=Role.PLAYER)
        character = Character.objects.create(
            campaign=campaign, owner=user, name=f"Ficha de {name}", status=Character.Status.APPROVED
        )
        HitosSheet.objects.create(character=character, reflejos=5)
    scene = Scene.objects.create(campaign=campaign, title="El vestíbulo")
    split = Scene.objects.create(campaign=campaign, title="El pasadizo escondido", everyone=False)
    split.participants.set([users["author"], users["recipient"], users["removed_recipient"]])
    world = World(campaign, scene, split, users)
    author = users["author"]
    world.rolls["whisper"] = _post(
        world,
        author,
        scene,
        kind="whisper",
        recipients=Post.Recipients.CHOSEN,
        chosen=[users["recipient"], users["removed_recipient"]],
    )
    world.rolls["gm_post"] = _post(world, author, scene, kind="gm_post", recipients=Post.Recipients.GM)
    world.rolls["split_scene"] = _post(world, author, split, kind="split_scene", recipients=Post.Recipients.ALL)
    for kind in ("secret", "revealed"):
        world.rolls[kind] = secret.secret_check_roll(
            scene=scene,
            user=gm,
            purpose=world.marker(kind),
            character=Character.objects.get(owner=users["player"]),
            characteristic="reflejos",
            difficulty=12,
            client_seed=client_seed(),
        )
    secret.secret_roll_reveal(entry=world.rolls["revealed"], user=gm, access=campaign_access(gm, campaign))
    world.companions["author"] = _public_companion(world, author, scene, "de Ana")
    world.companions["gm"] = _public_companion(world, gm, scene, "de la dirección")
    # Dora played and left, and so did Elena, chosen for the whisper and the
    # split-party scene: a removed member is an outsider now.
    Membership.objects.filter(user__in=[users["removed"], users["removed_recipient"]]).update(
        status=Membership.Status.REMOVED
    )
    return world


def _client(world: World, persona: str) -> Client:  # for the single-surface tests below
    return client_for(world.users[persona])


def _openings(document) -> str:
    """Every base64 opening inside a JSON document, decoded, joined."""
    found: list[str] = []

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "opening_b64" and isinstance(value, str):
                    found.append(base64.b64decode(value).decode("utf-8"))
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(document)
    return "\n".join(found)


def _text(response) -> str:
    """What a response shows, openings included; "" for a refusal."""
    if response.status_code != 200:
        assert response.status_code in (302, 403, 404), response.status_code
        return ""
    text = response.content.decode("utf-8")
    if response["Content-Type"].startswith("application/json"):
        text += "\n" + _openings(json.loads(text))
    return text


def _nearby_companion(world: World, kind: str) -> RollEntry:
    return world.companions["gm" if kind in ("secret", "revealed") else "author"]


# Surfaces where a reader is shown the roll's content, and those where the
# content never goes (posts' text, feeds, notifications, search). The campaign
# archive carries each roll its reader may read, with its bundle.
SHOWN = (
    "permalink",
    "bundle",
    "badge",
    "nearby",
    "roll_log",
    "roll_log_scene",
    "log_export",
    "scene_page",
    "campaign_export",
)
NEVER = ("snippets", "scene_feed", "member_feed", "notifications", "digest", "search")


def _applicable(persona: str, kind: str, surface: str) -> bool:
    """No feed, notifications or digest without an account or a membership
    (the GM owns the campaign without one; a removed member keeps the feed
    address, which now answers 404); no public neighbour in a split-party
    scene (its rolls are all sealed)."""
    if surface == "nearby" and kind == "split_scene":
        return False
    if surface == "member_feed" and persona in ("anonymous", "outsider", "gm"):
        return False
    # The campaign archive is for members (the roll permalink is for anyone).
    if surface == "campaign_export" and persona in ("anonymous", "outsider", "removed", "removed_recipient"):
        return False
    return not (surface in ("notifications", "digest") and persona == "anonymous")


class Reader:
    """One persona's view of the site; each address is asked once."""

    def __init__(self, world: World, persona: str):
        self.world = world
        self.persona = persona
        self.user = world.users[persona]
        self.client = client_for(self.user)
        self.pages: dict[str, str] = {}

    def get(self, url: str) -> str:
        if url not in self.pages:
            self.pages[url] = _text(self.client.get(url))
        return self.pages[url]

    def surface(self, kind: str, surface: str) -> str:
        world = self.world
        entry = world.rolls[kind]
        match surface:
            case "snippets":
                page = self.get(entry.get_absolute_url())
                return "".join(part.split("</textarea>")[0] for part in page.split("<textarea")[1:])
            case "nearby":
                page = self.get(_nearby_companion(world, kind).get_absolute_url())
                start = page.find('id="cercanas"')
                return page[start : page.find("</section>", start)] if start >= 0 else ""
            case "digest":
                if "digest" not in self.pages:
                    mail.outbox.clear()
                    notify.digest_send(user=self.user)
                    self.pages["digest"] = "\n".join(f"{m.subject}\n{m.body}" for m in mail.outbox)
                return self.pages["digest"]
        return self.get(self.url(kind, surface))

    def url(self, kind: str, surface: str) -> str:
        """The address of a surface that is one page."""
        world = self.world
        entry = world.rolls[kind]
        slug = world.campaign.slug
        scene = world.split if kind == "split_scene" else world.scene
        match surface:
            case "permalink":
                return entry.get_absolute_url()
            case "bundle" | "badge":
                return reverse(f"rolls:roll-{'json' if surface == 'bundle' else 'badge'}", args=[entry.permalink])
            case "roll_log":
                return reverse("rolls:roll-log", args=[slug])
            case "roll_log_scene":
                return reverse("rolls:roll-log", args=[slug]) + f"?escena={scene.pk}"
            case "log_export":
                return reverse("rolls:log-export", args=[slug])
            case "scene_page":
                return scene.get_absolute_url()
            case "scene_feed":
                return reverse("campaigns:scene-feed", args=[slug, scene.pk])
            case "member_feed":
                membership = Membership.objects.get(campaign=world.campaign, user=self.user)
                return reverse("campaigns:member-feed", args=[membership.feed_token])
            case "notifications":
                return reverse("campaigns:notifications")
            case "search":
                # Searching for the roll's post (the query itself is echoed back).
                return reverse("campaigns:campaign-search", args=[slug]) + f"?q=mensaje+{kind}"
            case "campaign_export":
                return reverse("campaigns:campaign-export", args=[slug])
        raise AssertionError(surface)


@pytest.mark.parametrize("persona", PERSONAS)
def test_private_roll_content_reaches_only_its_readers(world, persona):
    """One persona, every kind of private roll, every surface."""
    reader_view = Reader(world, persona)
    leaks, missing = [], []
    for kind in KINDS:
        marker = world.marker(kind)
        reader = persona in READERS[kind]
        for surface in (*SHOWN, *NEVER):
            if not _applicable(persona, kind, surface):
                continue
            text = reader_view.surface(kind, surface)
            if marker in text and not (reader and surface in SHOWN):
                leaks.append((kind, surface))
            if reader and surface in SHOWN and marker not in text:
                missing.append((kind, surface))
    assert leaks == [], f"{persona} sees what they must not: {leaks}"
    assert missing == [], f"{persona} does not see what they may: {missing}"


def test_the_matrix_size():
    # 8 personas × 5 kinds × 15 surfaces, less the cells that do not apply.
    cells = [
        (persona, kind, surface)
        for persona in PERSONAS
        for kind in KINDS
        for surface in (*SHOWN, *NEVER)
        if _applicable(persona, kind, surface)
    ]
    assert (len(PERSONAS) * len(KINDS) * len(SHOWN + NEVER), len(cells)) == (600, 547)


def test_private_rolls_are_sealed_and_public_ones_are_not(world):
    assert {kind: world.rolls[kind].audience for kind in KINDS} == {
        "whisper": "recipients",
        "gm_post": "recipients",
        "split_scene": "scene",
        "secret": "gm",
        "revealed": "gm",
    }
    assert world.companions["author"].audience == ""
    for kind in KINDS:
        assert world.rolls[kind].outer["kind"] == "sealed"
        assert world.marker(kind) not in bytes(world.rolls[kind].entry_bytes).decode()


def test_a_non_reader_sees_the_chain_position_and_its_check(world):
    entry = world.rolls["whisper"]
    page = _client(world, "player").get(entry.get_absolute_url()).content.decode()
    assert "Tirada privada" in page
    assert f"#{entry.seq} · época 1, ranura {entry.outer['epoch_index']}" in page
    assert "✓ firma, ranura y semilla correctas" in page
    assert world.scene.title not in page.split("<main", 1)[1]
    bundle = _client(world, "player").get(reverse("rolls:roll-json", args=[entry.permalink])).json()
    assert bundle["opening_b64"] is None and bundle["parent"] is None and bundle["children"] == []


def test_the_split_scene_title_never_reaches_outsiders_of_the_scene(world):
    entry = world.rolls["split_scene"]
    for persona in ("anonymous", "outsider", "removed", "player"):
        page = _client(world, persona).get(entry.get_absolute_url()).content.decode()
        assert "El pasadizo escondido" not in page, persona


def test_sealed_pages_are_not_kept_by_shared_caches(world):
    entry = world.rolls["whisper"]
    for name in ("rolls:roll-permalink", "rolls:roll-json", "rolls:roll-badge"):
        response = _client(world, "anonymous").get(reverse(name, args=[entry.permalink]))
        assert response["Cache-Control"] == "private, no-cache", name
