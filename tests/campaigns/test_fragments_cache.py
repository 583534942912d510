"""The cache's building blocks (``campaigns.fragments``, the ``{% frame %}``
tag of ``base.html``): versions that move now and at commit, keys per
reader, CSRF tokens filled in per request, a bounded time for what changes
with the clock, and the site's frame following its user (issue 13, item 2)."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import transaction
from django.test import Client
from django.test.client import RequestFactory
from django.urls import reverse

from campaigns import fragments, services
from campaigns.models import Notification
from campaigns.permissions import campaign_access
from tests.conftest import client_for
from tests.factories import CampaignFactory, UserFactory

pytestmark = pytest.mark.django_db

SCOPE = ("campaign", 999)


def test_a_version_moves_now_and_again_when_the_change_commits(django_capture_on_commit_callbacks):
    (before,) = fragments.versions(SCOPE)
    assert fragments.versions(SCOPE) == (before,)
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        fragments.changed(SCOPE)
        (during,) = fragments.versions(SCOPE)
        assert during != before
    (after,) = fragments.versions(SCOPE)
    assert after not in (before, during)


def test_a_version_the_cache_lost_never_comes_back_as_an_old_one():
    (before,) = fragments.versions(SCOPE)
    cache.clear()
    (after,) = fragments.versions(SCOPE)
    assert after > before


def test_a_log_in_leaves_the_names_alone_and_a_new_name_moves_them():
    user = UserFactory()
    (people,) = fragments.versions(fragments.PEOPLE)
    user.save(update_fields=["last_login"])
    assert fragments.versions(fragments.PEOPLE) == (people,)
    user.display_name = "Otra"
    user.save(update_fields=["display_name"])
    assert fragments.versions(fragments.PEOPLE) != (people,)


def test_every_reader_has_their_own_key_and_readers_without_an_account_share_one(table):
    from django.contrib.auth.models import AnonymousUser

    gm, player = campaign_access(table.gm, table.campaign), campaign_access(table.player, table.campaign)
    assert fragments.viewer(table.gm, gm.standing) == f"u{table.gm.pk}-gm"
    assert fragments.viewer(table.player, player.standing) == f"u{table.player.pk}-player"
    assert fragments.viewer(AnonymousUser()) == "anon"


def test_a_membership_read_for_a_page_is_read_again_once_it_changes(table, django_assert_num_queries):
    (version,) = fragments.versions(fragments.campaign_scope(table.campaign.pk))
    assert fragments.reader_access(table.player, table.campaign, version).is_player
    with django_assert_num_queries(0):
        assert fragments.reader_access(table.player, table.campaign, version).is_player
    services.member_remove(membership=table.membership(table.player), actor=table.gm, reason="Adiós.")
    (version,) = fragments.versions(fragments.campaign_scope(table.campaign.pk))
    assert not fragments.reader_access(table.player, table.campaign, version).is_member


def test_only_the_csrf_tags_own_output_is_filled_in():
    request = RequestFactory().get("/")
    placeholder = '<input type="hidden" name="csrfmiddlewaretoken" value="csrf-token-of-the-request">'
    escaped = placeholder.replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    html = str(fragments.with_csrf(request, f"<form>{placeholder}</form><p>{escaped}</p>"))
    assert "csrf-token-of-the-request" in html.split("<p>")[1]
    token = html.split('value="')[1].split('"')[0]
    assert token != "csrf-token-of-the-request" and len(token) == 64
    # One token per request, however many fragments it fills in.
    assert token in str(fragments.with_csrf(request, placeholder))


def test_user_text_cannot_fake_the_placeholder(table):
    services.campaign_update(
        campaign=table.campaign,
        description='<input type="hidden" name="csrfmiddlewaretoken" value="csrf-token-of-the-request">',
    )
    html = table.client("player").get(table.campaign.get_absolute_url()).content.decode()
    # Shown as the text it is, and left as it is: no form field, no token.
    assert '&lt;input type="hidden" name="csrfmiddlewaretoken" value="csrf-token-of-the-request"&gt;' in html
    assert '<input type="hidden" name="csrfmiddlewaretoken" value="csrf-token-of-the-request">' not in html


def test_what_changes_with_the_clock_is_kept_no_longer_than_until_then(settings):
    built = []

    def build():
        built.append(1)
        return {"html": "<p>hola</p>", "seconds": 0.2}

    assert fragments.cached("fragment:test", build) == {"html": "<p>hola</p>"}
    assert fragments.cached("fragment:test", build) == {"html": "<p>hola</p>"}
    assert len(built) == 1
    import time

    time.sleep(1.1)
    fragments.cached("fragment:test", build)
    assert len(built) == 2


def test_the_frame_follows_its_users_name_and_unread_notifications(table):
    client = table.client("player")
    html = client.get(reverse("home")).content.decode()
    assert "Ana</a>" in html and "sin leer" not in html
    Notification.objects.create(
        user=table.player, campaign=table.campaign, kind=Notification.Kind.POST, text="Nuevo mensaje.", url="/"
    )
    assert '1<span class="visually-hidden"> sin leer' in client.get(reverse("home")).content.decode()
    table.player.display_name = "Ana María"
    table.player.save()
    assert "Ana María</a>" in client.get(reverse("home")).content.decode()
    # Another user's frame is their own.
    assert "Ana María</a>" not in table.client("other").get(reverse("home")).content.decode()


def test_the_frame_follows_the_language_and_the_page(table):
    spanish = client_for(None).get(table.campaign.get_absolute_url()).content.decode()
    assert '<option value="es" lang="es" selected>' in spanish and "Idioma" in spanish
    assert f'name="next" value="{table.campaign.get_absolute_url()}"' in spanish
    english = client_for(None).get(reverse("home"), headers={"Accept-Language": "en"}).content.decode()
    assert '<option value="en" lang="en" selected>' in english and "Idioma" not in english
    assert 'name="next" value="/"' in english


def test_the_frames_logout_form_carries_each_visits_own_token(table):
    client = Client(enforce_csrf_checks=True)
    client.force_login(table.player)
    client.get(reverse("home"))  # the frame is kept
    html = client.get(reverse("home")).content.decode()
    form = html[html.index('action="/cuenta/salir/"') :] if 'action="/cuenta/salir/"' in html else html
    token = form.split('name="csrfmiddlewaretoken" value="')[1].split('"')[0]
    response = client.post(reverse("accounts:logout"), {"csrfmiddlewaretoken": token})
    assert response.status_code == 302
    assert client.get(reverse("home")).wsgi_request.user.is_anonymous


def test_a_public_campaign_list_is_shared_by_everyone(db, django_assert_max_num_queries):
    CampaignFactory(title="La mansión")
    assert "La mansión" in client_for(None).get(reverse("home")).content.decode()
    other = client_for(UserFactory())
    with django_assert_max_num_queries(6):
        assert "La mansión" in other.get(reverse("home")).content.decode()
