"""The permission matrix for every sheet URL (ARCHITECTURE.md): outsiders and
members who may not see a sheet get 404, members without the right 403,
anonymous visitors go to the login page for anything that needs an account."""

import pytest
from django.urls import reverse

from campaigns.models import Visibility
from systems.hitos.models import Aspect

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "outsider", "reader", "player", "other", "gm")

# name, method, status of the sheet, POST data, expected status per role (in ROLES order).
MATRIX = [
    ("sheet-list", "get", "approved", None, (200, 200, 200, 200, 200, 200)),
    ("sheet-create", "get", "approved", None, (302, 403, 403, 200, 200, 200)),
    ("npc-create", "get", "approved", None, (302, 403, 403, 403, 403, 200)),
    ("sheet-import", "get", "approved", None, (302, 403, 403, 200, 200, 200)),
    ("sheet-options", "get", "approved", None, (302, 403, 403, 403, 403, 200)),
    ("session-new", "post", "approved", {}, (302, 403, 403, 403, 403, 302)),
    ("scene-new", "post", "approved", {}, (302, 403, 403, 403, 403, 302)),
    ("sheet-detail", "get", "approved", None, (404, 404, 200, 200, 200, 200)),
    ("sheet-detail", "get", "draft", None, (404, 404, 404, 200, 404, 200)),
    ("sheet-edit", "get", "approved", None, (302, 404, 403, 403, 403, 200)),
    ("sheet-edit", "get", "draft", None, (302, 404, 404, 200, 404, 200)),
    ("sheet-notes", "post", "approved", {"private_notes": "x"}, (302, 404, 403, 302, 403, 302)),
    ("sheet-submit", "post", "draft", {}, (302, 404, 404, 302, 404, 403)),
    (
        "sheet-review",
        "post",
        "submitted",
        {"decision": "approve", "accept_budget": "on"},
        (302, 404, 404, 403, 404, 302),
    ),
    (
        "meter-update",
        "post",
        "approved",
        {"resistencia-action": "damage", "resistencia-amount": "1"},
        (302, 404, 403, 403, 403, 302),
    ),
    ("drama-update", "post", "approved", {"drama-change": "1"}, (302, 404, 403, 403, 403, 302)),
    (
        "aspect-create",
        "post",
        "approved",
        {"aspect-phrase": "Mojada", "aspect-duration": "scene"},
        (302, 404, 403, 403, 403, 302),
    ),
    ("aspect-update", "post", "approved", {"action": "exhaust", "until": "session"}, (302, 404, 403, 403, 403, 302)),
    ("sheet-history", "get", "approved", None, (302, 404, 403, 200, 403, 200)),
    ("sheet-print", "get", "approved", None, (302, 404, 403, 200, 403, 200)),
    ("sheet-export", "get", "approved", None, (302, 404, 403, 200, 403, 200)),
]

CAMPAIGN_URLS = {
    "sheet-list",
    "sheet-create",
    "npc-create",
    "sheet-import",
    "sheet-options",
    "session-new",
    "scene-new",
}


def _namespace(name: str) -> str:
    """HITOS's own sheet actions live in its namespace; the shared pages in ``sheets``."""
    return (
        "hitos"
        if name in {"meter-update", "drama-update", "aspect-create", "aspect-update", "session-new", "scene-new"}
        else "sheets"
    )


def _url(world, name):
    args = [world.campaign.slug]
    if name not in CAMPAIGN_URLS:
        args.append(world.sheet.pk)
    if name == "meter-update":
        args.append("resistencia")
    if name == "aspect-update":
        args.append(Aspect.objects.get(character=world.sheet).pk)
    return reverse(f"{_namespace(name)}:{name}", args=args)


@pytest.mark.parametrize(
    ("name", "method", "status", "data", "expected"), MATRIX, ids=[f"{m[0]}-{m[2]}" for m in MATRIX]
)
def test_permission_matrix(world, name, method, status, data, expected):
    Aspect.objects.create(character=world.sheet, kind="hito", phrase="Hito")
    url = _url(world, name)
    got = []
    for role in ROLES:
        # Each role starts from the same sheet status (a POST may have moved it on).
        world.sheet.status = status
        world.sheet.save(update_fields=["status"])
        client = world.client(role)
        response = client.get(url) if method == "get" else client.post(url, data)
        got.append(response.status_code)
        if response.status_code == 302 and role == "anonymous":
            assert response.url.startswith(reverse("accounts:login"))
    assert dict(zip(ROLES, got, strict=True)) == dict(zip(ROLES, expected, strict=True))


@pytest.mark.parametrize(
    ("name", "method", "status", "data", "expected"), MATRIX, ids=[f"{m[0]}-{m[2]}" for m in MATRIX]
)
def test_wrong_method_is_405(world, name, method, status, data, expected):
    world.sheet.status = status
    world.sheet.save()
    Aspect.objects.create(character=world.sheet, kind="hito", phrase="Hito")
    client = world.client("gm")
    url = _url(world, name)
    if method == "post":
        assert client.get(url).status_code == 405
    elif name in ("sheet-create", "npc-create", "sheet-import", "sheet-options", "sheet-edit"):
        assert client.put(url).status_code == 405
    else:
        assert client.post(url).status_code == 405


def test_player_with_self_marking_may_mark_own_sheet_only(world):
    world.campaign.rules_options = {"players_mark_own_meters": True}
    world.campaign.save(update_fields=["rules_options"])
    data = {"resistencia-action": "damage", "resistencia-amount": "1"}
    url = reverse("hitos:meter-update", args=[world.campaign.slug, world.sheet.pk, "resistencia"])
    assert world.client("player").post(url, data).status_code == 302
    assert world.client("other").post(url, data).status_code == 403
    assert world.client("reader").post(url, data).status_code == 403


def test_private_campaign_hides_every_sheet_url_from_outsiders(world):
    world.campaign.visibility = Visibility.PRIVATE
    world.campaign.save()
    for role in ("anonymous", "outsider"):
        client = world.client(role)
        assert client.get(reverse("sheets:sheet-list", args=[world.campaign.slug])).status_code == 404
        assert client.get(world.sheet.get_absolute_url()).status_code == 404


def test_public_option_shows_approved_sheets_to_anonymous_readers(world):
    world.client("gm").post(reverse("sheets:sheet-options", args=[world.campaign.slug]), {"visibility": "public"})
    response = world.client("anonymous").get(world.sheet.get_absolute_url())
    assert response.status_code == 200 and "Resistencia: Sano" in response.text
    assert "Puntuaciones derivadas" not in response.text


def test_unknown_meter_and_npc_sanity_meter_are_404(world):
    url = reverse("hitos:meter-update", args=[world.campaign.slug, world.sheet.pk, "cordura"])
    assert world.client("gm").post(url, {}).status_code == 404


def test_a_former_owner_who_left_sees_nothing(world):
    world.player.memberships.update(status="left")
    assert (
        world.client("player")
        .get(reverse("sheets:sheet-history", args=[world.campaign.slug, world.sheet.pk]))
        .status_code
        == 404
    )
