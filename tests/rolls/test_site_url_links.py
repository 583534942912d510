"""The roll pages' addresses meant for elsewhere (the permalink's BBCode and
Markdown snippets with the badge, the log export's ``next`` page) are built
from ``SITE_URL`` (issue 14), never from the host the request came in on: a
snippet pasted in another forum, or an auditor's script following ``next``,
must keep working whatever name or proxy the page was reached through."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse
from pytest_django.asserts import assertContains, assertNotContains

from rolls import views
from tests.conftest import client_for
from tests.factories import roll

pytestmark = pytest.mark.django_db

SITE = "https://mesa.example"


@pytest.fixture(autouse=True)
def _site_url(settings):
    settings.SITE_URL = SITE
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "otro.example"]


def _snippets(site: str, permalink: str) -> tuple[str, str]:
    link, badge = f"{site}/r/{permalink}/", f"{site}/r/{permalink}.svg"
    return (
        f'id="bbcode" rows="2" readonly>[url={link}][img]{badge}[/img][/url]</textarea>',
        f'id="markdown" rows="2" readonly>[![Tirada verificada]({badge})]({link})</textarea>',
    )


@pytest.mark.parametrize("standing", ["anonymous", "player"])
def test_the_permalinks_snippets_point_at_site_url_whatever_the_host(table, standing):
    entry = roll(table)
    user = None if standing == "anonymous" else table.player
    response = client_for(user).get(f"/r/{entry.permalink}/", HTTP_HOST="otro.example")
    for snippet in _snippets(SITE, entry.permalink):
        assertContains(response, snippet)
    assertNotContains(response, "otro.example")
    assertNotContains(response, "testserver")


def test_a_new_site_url_is_shown_at_once_though_the_page_is_cached(table, settings):
    entry = roll(table)
    client = client_for(None)
    first = client.get(f"/r/{entry.permalink}/")
    assertContains(first, _snippets(SITE, entry.permalink)[0])
    # The page is kept in the cache under a key that holds the address it shares.
    settings.SITE_URL = "https://hitos.example"
    moved = client.get(f"/r/{entry.permalink}/")
    for snippet in _snippets("https://hitos.example", entry.permalink):
        assertContains(moved, snippet)
    assertNotContains(moved, SITE)


def test_the_log_exports_next_page_is_under_site_url(table, monkeypatch):
    monkeypatch.setattr(views, "EXPORT_PAGE_SIZE", 1)
    roll(table)
    roll(table)
    url = reverse("rolls:log-export", args=[table.campaign.slug])
    page = json.loads(client_for(None).get(url, HTTP_HOST="otro.example", secure=True).content)
    assert page["next"] == f"{SITE}{url}?desde=1"
    second = json.loads(client_for(None).get(f"{url}?desde=1", HTTP_HOST="otro.example").content)
    assert second["next"] == f"{SITE}{url}?desde=2"
