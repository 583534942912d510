"""Notifications speak the reader's language of the moment (issue 14): the
text is kept in every language of the site when it is written, so the
digest, the e-mails and the list follow the recipient's language even when
they change it after the notification was written. Older notifications,
kept in one language only, still read as they were written."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core import mail
from django.core.management import call_command
from django.urls import reverse
from django.utils import translation

from accounts.models import User
from campaigns import notify
from campaigns.models import Membership, Notification, Role
from tests.conftest import client_for
from tests.factories import CampaignFactory, UserFactory, add_member, make_post, make_scene

pytestmark = pytest.mark.django_db

Choice = User.EmailChoice


@pytest.fixture(autouse=True)
def _language_restored():
    """A request by an English reader leaves English active in the thread
    (the middleware activates the reader's language): later tests in this
    process expect the language they started with."""
    language = translation.get_language()
    yield
    translation.activate(language)


@pytest.fixture(autouse=True)
def _site_url(settings):
    settings.SITE_URL = "https://hitos.example/"


def _send_digest() -> None:
    call_command("send_digest", stdout=StringIO(), stderr=StringIO())


def _post_notification(recipient, *, language: str) -> Notification:
    """A post in «El faro» by Marta that ``recipient`` is told about, written
    while the recipient's language was ``language``."""
    recipient.language = language
    recipient.save(update_fields=["language"])
    campaign = CampaignFactory(title="El faro")
    author = add_member(campaign, display_name="Marta")
    add_member_user(campaign, recipient)
    post = make_post(make_scene(campaign, title="La costa"), author)
    (notification,) = [n for n in notify.notify_post_readers(post) if n.user == recipient]
    return notification


def add_member_user(campaign, user) -> None:
    Membership.objects.create(campaign=campaign, user=user, role=Role.PLAYER)


def test_a_notification_keeps_its_text_in_every_language_of_the_site():
    lucia = UserFactory(display_name="Lucía")
    notification = _post_notification(lucia, language="")
    assert notification.texts == {
        "es": "Marta ha escrito en «La costa» (El faro).",
        "en": "Marta posted in “La costa” (El faro).",
    }
    # The stored text is the recipient's language when it was written (Spanish by default).
    assert notification.text == "Marta ha escrito en «La costa» (El faro)."
    with translation.override("en"):
        assert notification.shown_text == "Marta posted in “La costa” (El faro)."
    with translation.override("es"):
        assert notification.shown_text == "Marta ha escrito en «La costa» (El faro)."


def test_the_digest_is_in_the_recipients_language_of_the_moment_not_of_when_it_was_written():
    lucia = UserFactory(display_name="Lucía", email_notifications=Choice.DIGEST)
    campaign = _post_notification(lucia, language="es").campaign
    notify.notify_users(
        [lucia],
        campaign=campaign,
        kind=Notification.Kind.APPLICATION,
        url=campaign.get_absolute_url(),
        text=lambda: translation.gettext("Te han aceptado en «%(campaign)s».") % {"campaign": campaign.title},
    )
    lucia.language = "en"
    lucia.save(update_fields=["language"])

    _send_digest()

    (message,) = [m for m in mail.outbox if m.to == [lucia.email]]
    assert message.subject == "[Hitos] Your digest: 2 new notifications"
    assert message.body.startswith("Hello, Lucía:")
    assert "- Marta posted in “La costa” (El faro).\n" in message.body
    assert "- You've been accepted into “El faro”.\n" in message.body
    # Nothing of the Spanish texts they were first written in.
    assert "ha escrito" not in message.body and "Te han aceptado" not in message.body


def test_an_english_reader_who_switches_to_spanish_gets_the_digest_in_spanish():
    lucia = UserFactory(display_name="Lucía", email_notifications=Choice.DIGEST)
    notification = _post_notification(lucia, language="en")
    assert notification.text == "Marta posted in “La costa” (El faro)."
    lucia.language = "es"
    lucia.save(update_fields=["language"])

    _send_digest()

    (message,) = [m for m in mail.outbox if m.to == [lucia.email]]
    assert message.subject == "[Hitos] Tu resumen: 1 aviso nuevo"
    assert "- Marta ha escrito en «La costa» (El faro).\n" in message.body
    assert "posted in" not in message.body


def test_an_immediate_e_mail_is_in_the_recipients_language_when_it_is_sent():
    lucia = UserFactory(display_name="Lucía", email_notifications=Choice.IMMEDIATE)
    notification = _post_notification(lucia, language="es")
    lucia.language = "en"
    lucia.save(update_fields=["language"])
    notify.send_notification_emails.call([notification.pk])
    (message,) = [m for m in mail.outbox if m.to == [lucia.email]]
    assert message.subject == "[Hitos] Marta posted in “La costa” (El faro)."
    assert message.body.startswith("Hello, Lucía:\n\nMarta posted in “La costa” (El faro).\n")


def test_older_notifications_kept_in_one_language_read_as_they_were_written():
    lucia = UserFactory(display_name="Lucía", email_notifications=Choice.DIGEST, language="en")
    campaign = CampaignFactory(title="El faro")
    Notification.objects.create(
        user=lucia, campaign=campaign, kind=Notification.Kind.POST, text="Un aviso de antes", url="/mensajes/1/"
    )
    _send_digest()
    (message,) = [m for m in mail.outbox if m.to == [lucia.email]]
    assert message.subject == "[Hitos] Your digest: 1 new notification"
    assert "- Un aviso de antes\n" in message.body


def test_the_list_shows_the_readers_language_of_the_moment_in_the_page_and_the_fragment(django_assert_max_num_queries):
    lucia = UserFactory(display_name="Lucía")
    _post_notification(lucia, language="es")
    lucia.language = "en"
    lucia.save(update_fields=["language"])
    client = client_for(lucia)
    url = reverse("campaigns:notifications")
    with django_assert_max_num_queries(8):
        page = client.get(url)
    html = page.content.decode()
    assert "<html" in html
    assert "Marta posted in “La costa” (El faro)." in html
    assert "ha escrito" not in html
    fragment = client.get(url, headers={"HX-Request": "true"}).content.decode()
    assert "<html" not in fragment
    assert "Marta posted in “La costa” (El faro)." in fragment


def test_the_list_escapes_the_kept_texts():
    lucia = UserFactory(language="en")
    campaign = CampaignFactory(title="<b>Faro</b>")
    notify.notify_users(
        [lucia],
        campaign=campaign,
        kind=Notification.Kind.APPLICATION,
        url=campaign.get_absolute_url(),
        text=lambda: translation.gettext("Te han aceptado en «%(campaign)s».") % {"campaign": campaign.title},
    )
    html = client_for(lucia).get(reverse("campaigns:notifications")).content.decode()
    assert "You&#x27;ve been accepted into “&lt;b&gt;Faro&lt;/b&gt;”." in html
    assert "<b>Faro</b>" not in html


def test_a_moderation_text_written_per_language_follows_the_reader_and_a_fixed_one_stays():
    lucia = UserFactory(language="en")
    campaign = CampaignFactory(title="El faro")
    (worded,) = notify.moderation(
        campaign, lucia, lambda: translation.gettext("Ahora diriges la partida «%(title)s».") % {"title": "El faro"}
    )
    assert worded.texts["es"] == "Ahora diriges la partida «El faro»."
    assert worded.text == worded.texts["en"] != worded.texts["es"]
    # A text the service already translated is kept in that one language only:
    # it is not passed off as every language's.
    (fixed,) = notify.moderation(campaign, lucia, "Texto ya traducido")
    assert (fixed.text, fixed.texts) == ("Texto ya traducido", {})
    with translation.override("es"):
        assert fixed.shown_text == "Texto ya traducido"


def test_a_language_the_site_does_not_list_is_written_apart(settings):
    lucia = UserFactory(language="fr")
    campaign = CampaignFactory(title="El faro")
    (notification,) = notify.notify_users(
        [lucia], campaign=campaign, kind=Notification.Kind.SHEET, url="/", text=lambda: "Un texto"
    )
    assert notification.text == "Un texto"
    assert set(notification.texts) == {code for code, _name in settings.LANGUAGES}
