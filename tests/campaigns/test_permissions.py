"""Every URL of campaigns/urls.py for every standing, on a public and a
private campaign (issue 4, item 11; ARCHITECTURE.md's matrix).

Anonymous visitors of a login-only page are sent to log in (302); outsiders
get 404 for private things; members without the right get 403. A 302 on a
POST is the Post/Redirect/Get after the action succeeded.
"""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest
from django.conf import settings
from django.db import transaction
from django.test import Client
from django.urls import URLResolver, reverse

from campaigns import archive, services
from campaigns import permissions as perms
from campaigns.feeds import gm_feed_path
from campaigns.models import Invitation, Membership, Role, Scene, Visibility
from campaigns.permissions import Standing, campaign_access
from tests.campaigns.conftest import Table, make_table

STANDINGS = ("anonymous", "outsider", "reader", "player", "other", "cogm", "gm")

# url name                     method  anon outsider reader player other cogm  gm
PUBLIC = """
campaign-create               GET     302  200      200    200    200   200   200
campaign-import               GET     302  200      200    200    200   200   200
campaign-import-review        GET     302  404      404    404    404   404   200
campaign-detail               GET     200  200      200    200    200   200   200
campaign-edit                 GET     302  403      403    403    403   200   200
campaign-options              GET     302  403      403    403    403   200   200
application-create            GET     302  200      403    403    403   403   403
application-decide            POST    302  403      403    403    403   302   302
invitation-create             POST    302  403      403    403    403   302   302
invitation-revoke             POST    302  403      403    403    403   302   302
membership-leave              POST    302  403      302    302    302   302   403
member-remove                 POST    302  403      403    403    403   302   302
member-role                   POST    302  403      403    403    403   302   302
campaign-hand-over            POST    302  403      403    403    403   403   302
dashboard                     GET     302  403      403    403    403   200   200
moderation-log                GET     302  403      200    200    200   200   200
report-resolve                POST    302  403      403    403    403   302   302
campaign-search               GET     200  200      200    200    200   200   200
campaign-export               GET     302  403      200    200    200   200   200
scene-create                  GET     302  403      403    403    403   200   200
scene-detail                  GET     200  200      200    200    200   200   200
scene-edit                    GET     302  403      403    403    403   200   200
scene-poll                    GET     200  200      200    200    200   200   200
scene-status                  GET     302  403      200    200    200   200   200
post-create                   POST    302  403      403    302    302   302   302
post-roll-chance              GET     302  403      403    200    200   200   200
scene-feed                    GET     200  200      200    200    200   200   200
campaign-feed                 GET     200  200      200    200    200   200   200
member-feed                   GET     200  200      200    200    200   200   200
gm-feed                       GET     200  200      200    200    200   200   200
gm-feed-rotate                POST    302  403      403    403    403   403   302
invitation-open               GET     200  200      302    302    302   302   302
invitation-open-expired       GET     410  410      302    302    302   302   302
invitation-open               POST    302  302      302    302    302   302   302
invitation-open-expired       POST    410  410      302    302    302   302   302
post-permalink                GET     302  302      302    302    302   302   302
post-edit                     GET     302  403      403    200    403   200   200
post-history                  GET     302  403      403    200    403   200   200
post-hide                     POST    302  403      403    403    403   302   302
post-report                   GET     302  403      200    403    200   403   403
# the wrong method: login first, then 405
application-decide            GET     302  405      405    405    405   405   405
invitation-create             GET     302  405      405    405    405   405   405
invitation-revoke             GET     302  405      405    405    405   405   405
membership-leave              GET     302  405      405    405    405   405   405
member-remove                 GET     302  405      405    405    405   405   405
member-role                   GET     302  405      405    405    405   405   405
campaign-hand-over            GET     302  405      405    405    405   405   405
report-resolve                GET     302  405      405    405    405   405   405
post-create                   GET     302  405      405    405    405   405   405
post-roll-chance              POST    302  405      405    405    405   405   405
post-hide                     GET     302  405      405    405    405   405   405
gm-feed-rotate                GET     302  405      405    405    405   405   405
campaign-detail               POST    405  405      405    405    405   405   405
scene-status                  POST    302  405      405    405    405   405   405
"""

# url name                     method  anon outsider reader player other cogm  gm
PRIVATE = """
campaign-create               GET     302  200      200    200    200   200   200
campaign-import               GET     302  200      200    200    200   200   200
campaign-import-review        GET     302  404      404    404    404   404   200
campaign-detail               GET     404  404      200    200    200   200   200
campaign-edit                 GET     302  404      403    403    403   200   200
campaign-options              GET     302  404      403    403    403   200   200
application-create            GET     302  404      403    403    403   403   403
application-decide            POST    302  404      403    403    403   302   302
invitation-create             POST    302  404      403    403    403   302   302
invitation-revoke             POST    302  404      403    403    403   302   302
membership-leave              POST    302  404      302    302    302   302   403
member-remove                 POST    302  404      403    403    403   302   302
member-role                   POST    302  404      403    403    403   302   302
campaign-hand-over            POST    302  404      403    403    403   403   302
dashboard                     GET     302  404      403    403    403   200   200
moderation-log                GET     302  404      200    200    200   200   200
report-resolve                POST    302  404      403    403    403   302   302
campaign-search               GET     404  404      200    200    200   200   200
campaign-export               GET     302  404      200    200    200   200   200
scene-create                  GET     302  404      403    403    403   200   200
scene-detail                  GET     404  404      200    200    200   200   200
scene-edit                    GET     302  404      403    403    403   200   200
scene-poll                    GET     404  404      200    200    200   200   200
scene-status                  GET     302  404      200    200    200   200   200
post-create                   POST    302  404      403    302    302   302   302
post-roll-chance              GET     302  404      403    200    200   200   200
scene-feed                    GET     404  404      404    404    404   404   404
campaign-feed                 GET     404  404      404    404    404   404   404
member-feed                   GET     200  200      200    200    200   200   200
gm-feed                       GET     200  200      200    200    200   200   200
gm-feed-rotate                POST    302  404      403    403    403   403   302
invitation-open               GET     200  200      302    302    302   302   302
invitation-open-expired       GET     410  410      302    302    302   302   302
invitation-open               POST    302  302      302    302    302   302   302
invitation-open-expired       POST    410  410      302    302    302   302   302
post-permalink                GET     404  404      302    302    302   302   302
post-edit                     GET     302  404      403    200    403   200   200
post-history                  GET     302  404      403    200    403   200   200
post-hide                     POST    302  404      403    403    403   302   302
post-report                   GET     302  404      200    403    200   403   403
# the wrong method: login first, then 405
application-decide            GET     302  405      405    405    405   405   405
invitation-create             GET     302  405      405    405    405   405   405
invitation-revoke             GET     302  405      405    405    405   405   405
membership-leave              GET     302  405      405    405    405   405   405
member-remove                 GET     302  405      405    405    405   405   405
member-role                   GET     302  405      405    405    405   405   405
campaign-hand-over            GET     302  405      405    405    405   405   405
report-resolve                GET     302  405      405    405    405   405   405
post-create                   GET     302  405      405    405    405   405   405
post-roll-chance              POST    302  405      405    405    405   405   405
post-hide                     GET     302  405      405    405    405   405   405
gm-feed-rotate                GET     302  405      405    405    405   405   405
campaign-detail               POST    405  405      405    405    405   405   405
scene-status                  POST    302  405      405    405    405   405   405
"""


def _parse(table: str) -> dict[tuple[str, str], dict[str, int]]:
    rows = {}
    for line in table.strip().splitlines():
        if line.startswith("#"):
            continue
        name, method, *codes = line.split()
        rows[name, method] = dict(zip(STANDINGS, map(int, codes), strict=True))
    return rows


MATRIX = {Visibility.PUBLIC: _parse(PUBLIC), Visibility.PRIVATE: _parse(PRIVATE)}


def _request(t: Table, name: str) -> tuple[str, dict]:
    """The address of ``name`` for the table, and the data a POST sends."""
    slug = t.campaign.slug
    other = t.membership(t.other)
    expired = None
    if name == "invitation-open-expired":
        expired = Invitation.objects.create(campaign=t.campaign, created_by=t.gm, expires_at=t.invitation.created_at)
    upload = None
    if name == "campaign-import-review":
        # The GM's own export, uploaded: only its uploader may see what it holds.
        exported = services.campaign_export(access=campaign_access(t.gm, t.campaign))
        upload = archive.upload_keep(t.gm, json.dumps(exported).encode(), exported)
    addresses = {
        "campaign-create": (reverse("campaigns:campaign-create"), {}),
        "campaign-import": (reverse("campaigns:campaign-import"), {}),
        "campaign-import-review": (
            reverse("campaigns:campaign-import-review", args=[upload.pk]) if upload else "",
            {},
        ),
        "campaign-detail": (reverse("campaigns:campaign-detail", args=[slug]), {}),
        "campaign-edit": (reverse("campaigns:campaign-edit", args=[slug]), {}),
        "campaign-options": (reverse("hitos:campaign-options", args=[slug]), {}),
        "application-create": (reverse("campaigns:application-create", args=[slug]), {}),
        "application-decide": (
            reverse("campaigns:application-decide", args=[slug, t.application.pk]),
            {"decision": "accept", "answer": "Bienvenida."},
        ),
        "invitation-create": (
            reverse("campaigns:invitation-create", args=[slug]),
            {"role": Role.PLAYER, "days": 7, "max_uses": 2},
        ),
        "invitation-revoke": (reverse("campaigns:invitation-revoke", args=[slug, t.invitation.pk]), {}),
        "membership-leave": (reverse("campaigns:membership-leave", args=[slug]), {}),
        "member-remove": (
            reverse("campaigns:member-remove", args=[slug, other.pk]),
            {"reason": "No vuelve desde hace meses."},
        ),
        "member-role": (reverse("campaigns:member-role", args=[slug, other.pk]), {"role": Role.READER}),
        "campaign-hand-over": (reverse("campaigns:campaign-hand-over", args=[slug]), {"membership": other.pk}),
        "dashboard": (reverse("campaigns:dashboard", args=[slug]), {}),
        "moderation-log": (reverse("campaigns:moderation-log", args=[slug]), {}),
        "report-resolve": (reverse("campaigns:report-resolve", args=[slug, t.report.pk]), {}),
        "campaign-search": (reverse("campaigns:campaign-search", args=[slug]) + "?q=puerta", {}),
        "campaign-export": (reverse("campaigns:campaign-export", args=[slug]), {}),
        "scene-create": (reverse("campaigns:scene-create", args=[slug]), {}),
        "scene-detail": (reverse("table:scene-detail", args=[slug, t.scene.pk]), {}),
        "scene-edit": (reverse("campaigns:scene-edit", args=[slug, t.scene.pk]), {}),
        "scene-status": (reverse("campaigns:scene-status", args=[slug, t.scene.pk]), {}),
        "scene-poll": (reverse("table:scene-poll", args=[slug, t.scene.pk]) + f"?despues={t.post.pk}", {}),
        "post-create": (
            reverse("table:post-create", args=[slug, t.scene.pk]),
            {"voice": "ooc", "body": "Bajo con la linterna.", "recipients": "all"},
        ),
        "post-roll-chance": (reverse("table:post-roll-chance", args=[slug, t.scene.pk]), {}),
        "scene-feed": (reverse("campaigns:scene-feed", args=[slug, t.scene.pk]), {}),
        "campaign-feed": (reverse("campaigns:campaign-feed", args=[slug]), {}),
        "member-feed": (reverse("campaigns:member-feed", args=[t.membership(t.player).feed_token]), {}),
        # The feed's address is its only credential, whoever holds it.
        "gm-feed": (gm_feed_path(t.campaign), {}),
        "gm-feed-rotate": (reverse("campaigns:gm-feed-rotate", args=[slug]), {}),
        "invitation-open": (reverse("campaigns:invitation-open", args=[t.invitation.token]), {}),
        "invitation-open-expired": (reverse("campaigns:invitation-open", args=[expired.token]) if expired else "", {}),
        "post-permalink": (reverse("campaigns:post-permalink", args=[t.post.pk]), {}),
        "post-edit": (reverse("campaigns:post-edit", args=[t.post.pk]), {}),
        "post-history": (reverse("campaigns:post-history", args=[t.post.pk]), {}),
        "post-hide": (reverse("campaigns:post-hide", args=[t.post.pk]), {"reason": "Spoiler."}),
        "post-report": (reverse("campaigns:post-report", args=[t.post.pk]), {}),
    }
    return addresses[name]


@pytest.fixture(scope="module")
def tables(django_db_setup, django_db_blocker):
    """One table per visibility for the whole module, rolled back at its end.

    Each case runs inside its own savepoint (the ``db`` fixture), and each
    request inside another, so what a POST changes never leaks into the next.
    """
    with django_db_blocker.unblock(), transaction.atomic():
        built = {visibility: make_table(visibility) for visibility in MATRIX}
        sessions = {}
        for visibility, t in built.items():
            for standing in STANDINGS:
                user = t.user(standing)
                if user is not None:
                    client = Client()
                    client.force_login(user)
                    sessions[visibility, standing] = client.cookies[settings.SESSION_COOKIE_NAME].value
        yield built, sessions
        transaction.set_rollback(True)


def _client(sessions, visibility, standing) -> Client:
    client = Client()
    if standing != "anonymous":
        client.cookies[settings.SESSION_COOKIE_NAME] = sessions[visibility, standing]
    return client


def _names(patterns) -> set[str]:
    """The URL names of ``patterns``, those of the modules they include too."""
    names = set()
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            names |= _names(pattern.url_patterns)
        elif pattern.name:
            names.add(pattern.name)
    return names


def test_the_matrix_has_a_row_for_every_url_of_the_app():
    from campaigns.urls import urlpatterns
    from campaigns.urls_absences import urlpatterns as absence_urlpatterns
    from campaigns.urls_deadlines import urlpatterns as deadline_urlpatterns
    from campaigns.urls_waiting import urlpatterns as waiting_urlpatterns
    from table.urls import urlpatterns as table_urlpatterns

    # The user's own notifications belong to no campaign (tests/campaigns/test_views_notifications.py).
    # The unsubscribe page is tested in tests/campaigns/test_unsubscribe.py.
    own = {"notifications", "notification-open", "notifications-read-all", "email-unsubscribe"}
    # The scene page and its posting are the table's (the other table URLs have their own matrices).
    scene_page = {p.name for p in table_urlpatterns if getattr(p, "name", None)}
    # Taking an absent player's character over has its own matrix (tests/table/test_takeover_views.py).
    scene_page -= {name for p in table_urlpatterns if isinstance(p, URLResolver) for name in _names(p.url_patterns)}
    # The rules options of a campaign are its game's (systems/hitos/options).
    # Absences, deadlines and nudges have their own matrices (tests/campaigns/test_absence_views.py,
    # test_deadline_views.py, test_waiting_views.py).
    pace = _names(absence_urlpatterns) | _names(deadline_urlpatterns) | _names(waiting_urlpatterns)
    names = _names(urlpatterns) - own - pace | scene_page | {"campaign-options"}
    for rows in MATRIX.values():
        assert {name for name, _ in rows} - {"invitation-open-expired"} == names


@pytest.mark.parametrize(
    ("visibility", "name", "method"),
    [pytest.param(v, n, m, id=f"{v}-{n}-{m}") for v, rows in MATRIX.items() for n, m in rows],
)
def test_every_url_answers_each_standing_with_the_expected_status(tables, db, visibility, name, method):
    built, sessions = tables
    t = built[visibility]
    expected = MATRIX[visibility][name, method]
    actual = {}
    for standing in STANDINGS:
        with transaction.atomic():
            url, data = _request(t, name)
            client = _client(sessions, visibility, standing)
            response = client.post(url, data) if method == "POST" else client.get(url)
            actual[standing] = response.status_code
            if standing == "anonymous" and response.status_code == 302 and name != "post-permalink":
                assert response.url == f"{reverse('accounts:login')}?next={quote(url.split('?')[0])}"
            transaction.set_rollback(True)
    assert actual == expected


# --- the predicates ---------------------------------------------------------


@pytest.fixture
def standings(table):
    return {s: campaign_access(table.user(s) or _anonymous(), table.campaign) for s in STANDINGS}


def _anonymous():
    from django.contrib.auth.models import AnonymousUser

    return AnonymousUser()


def test_campaign_access_names_each_standing(table, standings):
    assert {s: a.standing for s, a in standings.items()} == {
        "anonymous": Standing.ANONYMOUS,
        "outsider": Standing.OUTSIDER,
        "reader": Standing.READER,
        "player": Standing.PLAYER,
        "other": Standing.PLAYER,
        "cogm": Standing.COGM,
        "gm": Standing.GM,
    }


def test_a_member_who_left_is_an_outsider_again(table):
    membership = table.membership(table.player)
    membership.status = Membership.Status.LEFT
    membership.save()
    assert campaign_access(table.player, table.campaign).standing == Standing.OUTSIDER


@pytest.mark.parametrize(
    ("predicate", "allowed"),
    [
        (perms.can_manage, {"cogm", "gm"}),
        (perms.can_hand_over, {"gm"}),
        (perms.can_leave, {"reader", "player", "other", "cogm"}),
        (perms.can_write_as_npc, {"cogm", "gm"}),
        (perms.can_hide_post, {"cogm", "gm"}),
        (perms.can_export, {"reader", "player", "other", "cogm", "gm"}),
        (perms.can_apply, {"outsider"}),
        (perms.can_join_by_invitation, {"outsider"}),
    ],
)
def test_campaign_wide_predicates_allow_exactly_these_standings(standings, predicate, allowed):
    assert {s for s, access in standings.items() if predicate(access)} == allowed


def test_only_authors_and_the_gms_may_edit_or_see_a_posts_history(table, standings):
    post = table.post
    assert {s for s, a in standings.items() if perms.can_edit_post(a, post)} == {"player", "cogm", "gm"}
    assert {s for s, a in standings.items() if perms.can_see_revisions(a, post)} == {"player", "cogm", "gm"}


def test_members_but_not_the_author_or_gms_may_report_a_post(table, standings):
    assert {s for s, a in standings.items() if perms.can_report_post(a, table.post)} == {"reader", "other"}


@pytest.mark.parametrize(
    ("status", "allowed"),
    [
        (Scene.Status.OPEN, {"player", "other", "cogm", "gm"}),
        (Scene.Status.LOCKED, {"cogm", "gm"}),
        (Scene.Status.ARCHIVED, set()),
    ],
)
def test_who_may_post_depends_on_the_scene_status(table, standings, status, allowed):
    table.scene.status = status
    assert {s for s, a in standings.items() if perms.can_post_in_scene(a, table.scene)} == allowed


def test_players_cannot_edit_posts_of_an_archived_scene_but_the_gm_can(table, standings):
    table.scene.status = Scene.Status.ARCHIVED
    table.post.scene = table.scene
    assert {s for s, a in standings.items() if perms.can_edit_post(a, table.post)} == {"cogm", "gm"}


def test_a_split_party_scene_is_seen_by_the_gms_and_its_chosen_members_only(table, standings):
    table.scene.everyone = False
    chosen = {table.player.pk}
    assert {s for s, a in standings.items() if perms.can_view_scene(a, table.scene, chosen)} == {
        "player",
        "cogm",
        "gm",
    }


def test_a_gm_cannot_reach_another_campaigns_objects_through_their_own_campaign(db):
    mine, theirs = make_table(Visibility.PUBLIC), make_table(Visibility.PRIVATE)
    client = Client()
    client.force_login(mine.gm)
    slug = mine.campaign.slug
    requests = [
        reverse("campaigns:application-decide", args=[slug, theirs.application.pk]),
        reverse("campaigns:invitation-revoke", args=[slug, theirs.invitation.pk]),
        reverse("campaigns:member-remove", args=[slug, theirs.membership(theirs.player).pk]),
        reverse("campaigns:member-role", args=[slug, theirs.membership(theirs.player).pk]),
        reverse("campaigns:report-resolve", args=[slug, theirs.report.pk]),
        reverse("campaigns:post-hide", args=[theirs.post.pk]),
    ]
    data = {"decision": "accept", "reason": "x", "role": "reader"}
    assert [client.post(url, data).status_code for url in requests] == [404] * len(requests)
    assert (
        client.post(
            reverse("campaigns:campaign-hand-over", args=[slug]), {"membership": theirs.membership(theirs.player).pk}
        ).status_code
        == 404
    )
    assert client.get(reverse("table:scene-detail", args=[slug, theirs.scene.pk])).status_code == 404
    theirs.application.refresh_from_db()
    theirs.invitation.refresh_from_db()
    assert (theirs.application.status, theirs.invitation.revoked) == ("pending", False)
