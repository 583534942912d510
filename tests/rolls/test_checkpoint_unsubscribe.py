"""The one-click unsubscribe of the checkpoint e-mails (RFC 8058), like the
notifications' (tests/campaigns/test_unsubscribe*): every checkpoint e-mail
carries ``List-Unsubscribe`` and ``List-Unsubscribe-Post`` and a link in its
text, signed for the member and the campaign; the token is the only
credential; a GET changes nothing; the POST stops that campaign's e-mails
only."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.core import signing
from django.urls import reverse
from pytest_django.asserts import assertContains, assertNotContains, assertRedirects

from campaigns import notify
from rolls import checkpoints
from tests.conftest import client_for
from tests.factories import roll
from tests.rolls.conftest import make_table

pytestmark = pytest.mark.django_db

MIDNIGHT = datetime(2031, 3, 15, 0, 5, tzinfo=UTC)


@pytest.fixture
def world(clock):
    world = make_table()
    roll(world)
    clock.now = MIDNIGHT
    checkpoints.subscribe(user=world.player, campaign=world.campaign)
    return world


def _url(world, campaign=None) -> str:
    return reverse(
        "rolls:checkpoint-unsubscribe", args=[checkpoints.unsubscribe_token(world.player, campaign or world.campaign)]
    )


def test_the_checkpoint_e_mail_carries_the_one_click_unsubscribe(world, mailoutbox):
    assert checkpoints.daily_checkpoints.call() == 1
    (message,) = mailoutbox
    link = checkpoints.unsubscribe_link(world.player, world.campaign)
    assert message.extra_headers["List-Unsubscribe"] == f"<{link}>"
    assert message.extra_headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert message.body.rstrip().endswith(f"Para dejar de recibirlos: {link}")


def test_a_get_only_shows_the_button(world):
    response = client_for(None).get(_url(world))
    assertContains(response, "deje de recibir por correo los puntos de control de «La mansión»")
    assertContains(response, "Dejar de recibirlos")
    assert response["X-Robots-Tag"] == "noindex"
    assert checkpoints.subscribed(world.player, world.campaign)


def test_the_pages_post_stops_them_and_redirects_and_htmx_gets_the_panel(world):
    other = make_table()
    checkpoints.subscribe(user=world.player, campaign=other.campaign)
    url = _url(world)
    assertRedirects(client_for(None).post(url), url, fetch_redirect_response=False)
    assert not checkpoints.subscribed(world.player, world.campaign)
    # Another campaign's stay.
    assert checkpoints.subscribed(world.player, other.campaign)
    response = client_for(None).get(url)
    assertContains(response, "Hecho: la cuenta de Ana no recibe los puntos de control de «La mansión» por correo.")
    checkpoints.subscribe(user=world.player, campaign=world.campaign)
    panel = client_for(None).post(url, HTTP_HX_REQUEST="true")
    assert panel.status_code == 200
    assertContains(panel, 'id="unsubscribe-panel"')
    assertNotContains(panel, "<html")
    assert not checkpoints.subscribed(world.player, world.campaign)


def test_a_mail_clients_one_click_post_is_answered_at_once(world):
    response = client_for(None).post(_url(world), {"List-Unsubscribe": "One-Click"})
    assert response.status_code == 200
    assert not checkpoints.subscribed(world.player, world.campaign)


def test_a_forged_token_is_refused_and_a_gone_member_or_campaign_is_not_found(world):
    token = checkpoints.unsubscribe_token(world.player, world.campaign)
    forged = reverse("rolls:checkpoint-unsubscribe", args=[token[:-2] + "xx"])
    response = client_for(None).post(forged)
    assert response.status_code == 400
    assertContains(response, "Este enlace para darte de baja no es válido", status_code=400)
    # A notification unsubscribe token is not one of these.
    notification_token = notify.unsubscribe_token(world.player)
    assert client_for(None).get(reverse("rolls:checkpoint-unsubscribe", args=[notification_token])).status_code == 400
    assert checkpoints.subscribed(world.player, world.campaign)
    # Well signed, but for an account or a campaign that is not there (any more).
    signer = signing.Signer(salt=checkpoints.UNSUBSCRIBE_SALT)
    for ids in ({"user": 10**9, "campaign": world.campaign.pk}, {"user": world.player.pk, "campaign": 10**9}):
        gone = reverse("rolls:checkpoint-unsubscribe", args=[signer.sign_object(ids)])
        assert client_for(None).post(gone).status_code == 404
    assert checkpoints.subscribed(world.player, world.campaign)


def test_only_get_head_and_post_are_answered(world):
    assert client_for(None).put(_url(world)).status_code == 405


def test_the_page_takes_a_constant_number_of_queries(world, django_assert_max_num_queries):
    with django_assert_max_num_queries(4):
        client_for(None).get(_url(world))
