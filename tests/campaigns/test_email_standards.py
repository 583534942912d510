"""The e-mails as a mail server and a mail client see them.

Each message is what the SMTP backend would send (``message().as_bytes()``),
parsed back with Python's ``email`` package (``policy.default``): the
headers are present and well formed, the subject is one line, the text is
UTF-8, every link is absolute under ``SITE_URL``, and the notification and
digest e-mails carry the one-click unsubscribe of RFC 8058, which works
without a log-in. The password-reset e-mail is transactional: no unsubscribe.
"""

import email.policy
import re
from datetime import timedelta
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import parseaddr

import pytest
from django.conf import settings
from django.core import mail
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from campaigns import notify
from campaigns.models import Notification
from tests.factories import CampaignFactory, UserFactory
from tests.factories import add_member as member
from tests.factories import make_post as post
from tests.factories import make_scene as scene

pytestmark = pytest.mark.django_db

SITE = "https://mesa.example"
Choice = User.EmailChoice
LINK = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+")


@pytest.fixture(autouse=True)
def _site_url(settings):
    settings.SITE_URL = SITE
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "otro.example"]


def _as_sent(message) -> tuple[EmailMessage, bytes]:
    """The bytes Django's SMTP backend would hand the server (it builds the
    message with the SMTP policy: CRLF, lines folded at 78), parsed back."""
    raw = message.message(policy=email.policy.SMTP).as_bytes()
    return BytesParser(policy=email.policy.default).parsebytes(raw), raw


def _assert_well_formed(parsed: EmailMessage, raw: bytes, *, to: str) -> str:
    """The headers every message needs, each once and without defects, and a
    UTF-8 text body whose links are all the site's; returns the text."""
    assert parsed.defects == []
    for name in ("From", "To", "Subject", "Date", "Message-ID", "Auto-Submitted"):
        assert len(parsed.get_all(name)) == 1, name
        assert parsed[name].defects == (), name
    [sender] = parsed["From"].addresses
    assert sender.addr_spec == parseaddr(settings.DEFAULT_FROM_EMAIL)[1]
    assert [address.addr_spec for address in parsed["To"].addresses] == [to]
    assert "\n" not in parsed["Subject"] and "\r" not in parsed["Subject"]
    sent_at = parsed["Date"].datetime
    assert sent_at.tzinfo is not None
    assert abs(timezone.now() - sent_at) < timedelta(minutes=1)
    # The site's domain, not the worker's host name (which is often "localhost").
    assert re.fullmatch(r"<[^<>@\s]+@mesa\.example>", parsed["Message-ID"])
    assert parsed["Auto-Submitted"] == "auto-generated"  # RFC 3834: no vacation replies, please.
    # RFC 5322 §2.1.1: CRLF line ends, no line longer than 998 characters.
    assert b"\n" not in raw.replace(b"\r\n", b"")
    assert max(len(line) for line in raw.split(b"\r\n")) <= 998
    assert parsed.get_content_type() == "text/plain"
    assert parsed.get_content_charset() == "utf-8"
    text = parsed.get_content().replace("\r\n", "\n")  # The wire's CRLF, read back as lines.
    links = LINK.findall(text)
    assert links, "the text has no link"
    for link in links:
        assert link.startswith(f"{SITE}/"), link
    return text


def _one_click(parsed: EmailMessage, raw: bytes) -> str:
    """The unsubscribe address of RFC 8058's headers. It is sent as written,
    on one line: mail clients do not decode an address folded into RFC 2047
    encoded words (=?utf-8?q?…?=), and would show no unsubscribe button."""
    [address] = re.fullmatch(r"<([^<>\s]+)>", parsed["List-Unsubscribe"]).groups()
    assert f"\r\nList-Unsubscribe: <{address}>\r\n".encode() in raw
    assert parsed["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert b"\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n" in raw
    assert address.startswith(f"{SITE}/cuenta/avisos/baja/")
    return address


def _post_one_click(address: str):
    """What a mail client does: a POST with no cookie, no session and no CSRF token."""
    robot = Client(enforce_csrf_checks=True)
    return robot.post(
        address.removeprefix(SITE),
        "List-Unsubscribe=One-Click",
        content_type="application/x-www-form-urlencoded",
    )


def _post_notified(campaign, author, django_capture_on_commit_callbacks, **fields):
    written = post(scene(campaign, title="El faro"), author, **fields)
    with django_capture_on_commit_callbacks(execute=True):
        notify.post_created(written)
    return written


# --- the notification e-mail ---------------------------------------------------------------


def test_a_notification_e_mail_is_well_formed_and_its_one_click_unsubscribe_works(
    django_capture_on_commit_callbacks,
):
    campaign = CampaignFactory(title="La Marca", gm=UserFactory(email_notifications=Choice.NEVER))
    lucia = member(campaign, display_name="Lucía", email="lucia@example.org", email_notifications=Choice.IMMEDIATE)
    written = _post_notified(campaign, campaign.gm, django_capture_on_commit_callbacks)

    [message] = mail.outbox
    parsed, raw = _as_sent(message)
    text = _assert_well_formed(parsed, raw, to="lucia@example.org")
    assert parsed["Subject"] == f"[Hitos] {campaign.gm.public_name} ha escrito en «El faro» (La Marca)."
    assert text.startswith("Hola, Lucía:")
    assert f"Ábrelo aquí: {SITE}/mensajes/{written.pk}/" in text
    unsubscribe = _one_click(parsed, raw)
    assert f"Para dejar de recibir avisos por correo: {unsubscribe}" in text

    response = _post_one_click(unsubscribe)
    assert response.status_code == 200
    assert "ya no recibe avisos por correo" in response.text
    lucia.refresh_from_db()
    assert lucia.email_notifications == Choice.NEVER

    mail.outbox.clear()
    _post_notified(campaign, campaign.gm, django_capture_on_commit_callbacks)
    assert mail.outbox == []
    # The notification itself is still there, on the site.
    assert Notification.objects.filter(user=lucia).count() == 2


def test_each_e_mail_has_its_own_message_id(django_capture_on_commit_callbacks):
    campaign = CampaignFactory(gm=UserFactory(email_notifications=Choice.NEVER))
    for name in ("ana", "bea"):
        member(campaign, email=f"{name}@example.org", email_notifications=Choice.IMMEDIATE)
    _post_notified(campaign, campaign.gm, django_capture_on_commit_callbacks)
    _post_notified(campaign, campaign.gm, django_capture_on_commit_callbacks)
    ids = [_as_sent(message)[0]["Message-ID"] for message in mail.outbox]
    assert len(ids) == 4
    assert len(set(ids)) == 4


def test_names_with_accents_emoji_and_line_breaks_stay_one_header_line(django_capture_on_commit_callbacks):
    campaign = CampaignFactory(title="Ñandú 🐉", gm=UserFactory(email_notifications=Choice.NEVER))
    member(campaign, email="lucia@example.org", email_notifications=Choice.IMMEDIATE)
    intruder = member(campaign, display_name="Íñigo\r\nBcc: intruso@example.org")
    _post_notified(campaign, intruder, django_capture_on_commit_callbacks)

    [message] = mail.outbox
    assert message.recipients() == ["lucia@example.org"]
    parsed, raw = _as_sent(message)
    _assert_well_formed(parsed, raw, to="lucia@example.org")
    assert parsed["Bcc"] is None
    assert parsed["Subject"] == "[Hitos] Íñigo Bcc: intruso@example.org ha escrito en «El faro» (Ñandú 🐉)."


def test_an_english_speaker_gets_an_english_e_mail_with_the_same_headers(django_capture_on_commit_callbacks):
    campaign = CampaignFactory(gm=UserFactory(email_notifications=Choice.NEVER))
    member(campaign, email="ann@example.org", language="en", email_notifications=Choice.IMMEDIATE)
    _post_notified(campaign, campaign.gm, django_capture_on_commit_callbacks)
    parsed, raw = _as_sent(mail.outbox[0])
    text = _assert_well_formed(parsed, raw, to="ann@example.org")
    assert _one_click(parsed, raw) in text
    assert not text.startswith("Hola")


# --- the digest ----------------------------------------------------------------------------


def test_the_digest_is_well_formed_and_its_one_click_unsubscribe_stops_the_next_one():
    lucia = UserFactory(display_name="Lucía", email="lucia@example.org", email_notifications=Choice.DIGEST)
    campaign = CampaignFactory(title="La Marca")
    written = post(scene(campaign), campaign.gm)
    Notification.objects.create(
        user=lucia, campaign=campaign, kind=Notification.Kind.POST, text="Algo pasó", url=written.get_absolute_url()
    )
    assert notify.digest_send(user=lucia) is True

    [message] = mail.outbox
    parsed, raw = _as_sent(message)
    text = _assert_well_formed(parsed, raw, to="lucia@example.org")
    assert parsed["Subject"] == "[Hitos] Tu resumen: 1 aviso nuevo"
    assert f"- Algo pasó\n  {SITE}/mensajes/{written.pk}/" in text
    assert f"Todos tus avisos: {SITE}{reverse('campaigns:notifications')}" in text
    unsubscribe = _one_click(parsed, raw)
    assert unsubscribe in text

    assert _post_one_click(unsubscribe).status_code == 200
    lucia.refresh_from_db()
    assert lucia.email_notifications == Choice.NEVER
    Notification.objects.create(user=lucia, campaign=campaign, kind=Notification.Kind.POST, text="Otra", url="/")
    assert notify.digest_send_all() == (0, 0)
    assert len(mail.outbox) == 1


def test_the_unsubscribe_link_of_one_person_never_touches_another(django_capture_on_commit_callbacks):
    campaign = CampaignFactory(gm=UserFactory(email_notifications=Choice.NEVER))
    ana = member(campaign, email="ana@example.org", email_notifications=Choice.IMMEDIATE)
    bea = member(campaign, email="bea@example.org", email_notifications=Choice.IMMEDIATE)
    _post_notified(campaign, campaign.gm, django_capture_on_commit_callbacks)
    links = {message.to[0]: _one_click(*_as_sent(message)) for message in mail.outbox}
    assert links["ana@example.org"] != links["bea@example.org"]
    _post_one_click(links["ana@example.org"])
    ana.refresh_from_db()
    bea.refresh_from_db()
    assert (ana.email_notifications, bea.email_notifications) == (Choice.NEVER, Choice.IMMEDIATE)


# --- the password reset --------------------------------------------------------------------


def test_the_password_reset_e_mail_is_transactional_and_links_to_the_site_whatever_the_host(client):
    UserFactory(email="olvido@example.org", email_notifications=Choice.IMMEDIATE)
    response = client.post(
        reverse("accounts:password-reset"), {"email": "olvido@example.org"}, HTTP_HOST="otro.example"
    )
    assert response.status_code == 302

    [message] = mail.outbox
    parsed, raw = _as_sent(message)
    text = _assert_well_formed(parsed, raw, to="olvido@example.org")
    assert parsed["Subject"] == "Recupera tu contraseña de Hitos"
    # Transactional: nothing to unsubscribe from.
    assert parsed["List-Unsubscribe"] is None and parsed["List-Unsubscribe-Post"] is None
    [link] = LINK.findall(text)
    assert link.startswith(f"{SITE}/cuenta/recuperar/")
    assert "otro.example" not in text
    assert client.get(link.removeprefix(SITE)).status_code == 302  # The link works.
