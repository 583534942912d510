"""The campaign's pace at a glance (campaigns.pace): who sees it, what it
counts, weeks in the campaign's time zone, a constant number of queries, and
names escaped in the SVG and its table."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.test import RequestFactory

from campaigns import pace
from campaigns.models import Post, Role
from campaigns.permissions import campaign_access
from tests.conftest import client_for
from tests.factories import CampaignFactory, UserFactory, add_member, make_post, make_scene

pytestmark = pytest.mark.django_db

# Wednesday 2 December 2026, 12:00 UTC (13:00 in Madrid): this week began on Monday 30 November.
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def _post(scene, author, when, **fields):
    written = make_post(scene, author, **fields)
    type(written).objects.filter(pk=written.pk).update(created_at=when)
    return written


def _request(user):
    request = RequestFactory().get("/")
    request.user = user
    return request


def _part(campaign, user):
    return pace.campaign_part(_request(user), campaign, campaign_access(user, campaign))


@pytest.fixture
def party():
    gm = UserFactory(display_name="La Directora")
    campaign = CampaignFactory(gm=gm, title="El faro", time_zone="Europe/Madrid")
    ana = add_member(campaign, display_name="Ana")
    bruno = add_member(campaign, display_name="Bruno")
    reader = add_member(campaign, Role.READER, display_name="Lectora")
    return campaign, gm, ana, bruno, reader


def test_the_direction_always_sees_the_pace_and_members_only_when_the_campaign_says(party):
    campaign, gm, ana, _bruno, reader = party
    cogm = add_member(campaign, Role.COGM)
    assert "<svg" in _part(campaign, gm) and "<svg" in _part(campaign, cogm)
    assert _part(campaign, ana) == "" and _part(campaign, reader) == ""
    campaign.pace_public = True
    assert "<svg" in _part(campaign, ana) and "<svg" in _part(campaign, reader)
    outsider = UserFactory()
    assert _part(campaign, outsider) == ""


def test_the_campaign_page_shows_the_chart_to_the_gm_and_not_to_a_player(party):
    campaign, gm, ana, _bruno, _reader = party
    assert "Ritmo de la partida" in client_for(gm).get(campaign.get_absolute_url()).text
    assert "Ritmo de la partida" not in client_for(ana).get(campaign.get_absolute_url()).text
    assert "Ritmo de la partida" not in client_for(None).get(campaign.get_absolute_url()).text


def test_posts_are_counted_per_week_in_the_campaigns_time_zone(party):
    campaign, gm, ana, bruno, _reader = party
    scene = make_scene(campaign)
    # Monday 30 November at 00:30 in Madrid is still Sunday 29th in UTC: this week, not the last.
    _post(scene, ana, datetime(2026, 11, 29, 23, 30, tzinfo=UTC))
    _post(scene, ana, datetime(2026, 11, 29, 22, 30, tzinfo=UTC))  # 23:30 on Sunday in Madrid: last week
    _post(scene, ana, NOW - timedelta(hours=1))
    _post(scene, gm, datetime(2026, 10, 13, 10, 0, tzinfo=UTC))  # the first of the 8 weeks
    _post(scene, gm, datetime(2026, 10, 11, 10, 0, tzinfo=UTC))  # the week before: left out
    _post(scene, bruno, NOW - timedelta(days=1), hidden=True)  # hidden posts do not count
    numbers = pace.pace(campaign, everything=True, now=NOW)
    rows = {row.name: row for row in numbers["rows"]}
    assert [row.name for row in numbers["rows"]] == ["La Directora", "Ana", "Bruno", "Lectora"]
    assert numbers["weeks"][0].isoformat() == "2026-10-12" and numbers["weeks"][-1].isoformat() == "2026-11-30"
    assert rows["Ana"].weeks == [0, 0, 0, 0, 0, 0, 1, 2]
    assert rows["La Directora"].weeks == [1, 0, 0, 0, 0, 0, 0, 0]
    assert rows["Bruno"].weeks == [0] * 8
    assert rows["Ana"].days_since == 0
    assert rows["La Directora"].days_since == (NOW.date() - datetime(2026, 10, 13).date()).days
    assert rows["Bruno"].days_since is None
    assert numbers["top"] == 2


def test_members_count_only_what_every_member_reads_and_the_direction_counts_everything(party):
    campaign, gm, ana, bruno, _reader = party
    open_scene = make_scene(campaign)
    split = make_scene(campaign, everyone=False, participants=[ana])
    _post(open_scene, ana, NOW - timedelta(hours=2))
    _post(open_scene, ana, NOW - timedelta(hours=3), recipients=Post.Recipients.GM)
    _post(split, ana, NOW - timedelta(hours=4))
    everything = {row.name: row.weeks[-1] for row in pace.pace(campaign, everything=True, now=NOW)["rows"]}
    shared = {row.name: row.weeks[-1] for row in pace.pace(campaign, everything=False, now=NOW)["rows"]}
    assert everything["Ana"] == 3 and shared["Ana"] == 1


def test_departed_members_and_outsiders_are_not_in_the_chart(party):
    campaign, _gm, _ana, _bruno, _reader = party
    from campaigns.models import Membership

    gone = add_member(campaign, status=Membership.Status.LEFT, display_name="Se fue")
    _post(make_scene(campaign), gone, NOW)
    names = [row.name for row in pace.pace(campaign, everything=True, now=NOW)["rows"]]
    assert "Se fue" not in names


def test_the_chart_is_an_accessible_svg_with_a_table_of_the_same_numbers(party):
    campaign, gm, ana, _bruno, _reader = party
    _post(make_scene(campaign), ana, NOW - timedelta(hours=1))
    html = _part(campaign, gm)
    assert re.search(r'<svg role="img" aria-labelledby="ritmo-titulo ritmo-desc" viewBox="0 0 360 \d+"', html)
    assert '<title id="ritmo-titulo">Mensajes por semana de cada miembro</title>' in html
    assert '<desc id="ritmo-desc">' in html
    assert "style=" not in html and "<script" not in html
    assert '<div class="visually-hidden"><table>' in html
    assert '<th scope="row">Ana</th>' in html
    assert html.count("<rect ") == 4 * pace.WEEKS


def test_names_are_escaped_in_the_svg_and_the_table(party):
    campaign, gm, _ana, _bruno, _reader = party
    add_member(campaign, display_name="<script>alert(1)</script>")
    html = _part(campaign, gm)
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


@pytest.mark.parametrize("size", [2, 20])
def test_the_pace_runs_a_constant_number_of_queries(django_assert_max_num_queries, size):
    gm = UserFactory()
    campaign = CampaignFactory(gm=gm)
    scene = make_scene(campaign)
    for i in range(size):
        player = add_member(campaign)
        for j in range(size):
            _post(scene, player, NOW - timedelta(days=i + j * 3))
    with django_assert_max_num_queries(3):
        numbers = pace.pace(campaign, everything=True, now=NOW)
    assert len(numbers["rows"]) == size + 1
    with django_assert_max_num_queries(3):
        html = _part(campaign, gm)
    assert html.count("<tr>") == size + 2


def test_the_chart_is_kept_until_a_post_of_the_campaign_changes(party, django_assert_max_num_queries):
    campaign, gm, ana, _bruno, _reader = party
    scene = make_scene(campaign)
    first = _part(campaign, gm)
    with django_assert_max_num_queries(0):
        assert _part(campaign, gm) == first
    written = make_post(scene, ana)
    assert _part(campaign, gm) != first
    type(written).objects.get(pk=written.pk).delete()
    assert _part(campaign, gm) == first
