from datetime import timedelta
from io import StringIO

import pytest
from django.core import mail
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import User
from campaigns import absences, deadlines, notify
from campaigns.models import Absence, Membership, Notification, Role
from tests.factories import CampaignFactory, UserFactory
from tests.factories import add_member as member
from tests.factories import make_post as post
from tests.factories import make_scene as scene

pytestmark = pytest.mark.django_db

Choice = User.EmailChoice


@pytest.fixture(autouse=True)
def _site_url(settings):
    settings.SITE_URL = "https://hitos.example/"


def _send_digest() -> str:
    out = StringIO()
    call_command("send_digest", stdout=out, stderr=StringIO())
    return out.getvalue()


def _notification(user, campaign, text, **fields):
    return Notification.objects.create(
        user=user, campaign=campaign, kind=Notification.Kind.POST, text=text, url="/mensajes/1/", **fields
    )


def test_a_digest_user_gets_one_e_mail_grouped_by_campaign_and_everything_is_marked_sent():
    lucia = UserFactory(email_notifications=Choice.DIGEST, display_name="Lucía")
    faro = CampaignFactory(title="El faro")
    marca = CampaignFactory(title="La Marca")
    _notification(lucia, marca, "Uno en la Marca")
    _notification(lucia, faro, "Uno en el faro")
    _notification(lucia, marca, "Otro en la Marca")

    assert _send_digest() == "Sent 1 digest e-mail(s).\n"

    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == [lucia.email]
    assert message.subject == "[Hitos] Tu resumen: 3 avisos nuevos"
    body = message.body
    assert body.startswith("Hola, Lucía:")
    assert "Tienes 3 avisos nuevos en Hitos desde el último resumen." in body
    # Campaigns in alphabetical order, each with its own notifications, oldest first.
    assert body.index("== El faro ==") < body.index("- Uno en el faro") < body.index("== La Marca ==")
    assert body.index("== La Marca ==") < body.index("- Uno en la Marca") < body.index("- Otro en la Marca")
    assert body.count("https://hitos.example/mensajes/1/") == 3
    assert "https://hitos.example/cuenta/avisos/" in body
    assert not Notification.objects.filter(emailed_at__isnull=True).exists()


def test_the_digest_is_idempotent_and_a_later_run_sends_only_what_is_new():
    lucia = UserFactory(email_notifications=Choice.DIGEST)
    campaign = CampaignFactory()
    _notification(lucia, campaign, "Primero")
    assert _send_digest() == "Sent 1 digest e-mail(s).\n"
    assert _send_digest() == "Sent 0 digest e-mail(s).\n"
    assert len(mail.outbox) == 1

    _notification(lucia, campaign, "Segundo")
    assert _send_digest() == "Sent 1 digest e-mail(s).\n"
    assert len(mail.outbox) == 2
    assert mail.outbox[1].subject == "[Hitos] Tu resumen: 1 aviso nuevo"
    assert "- Segundo" in mail.outbox[1].body and "Primero" not in mail.outbox[1].body


def test_only_digest_users_get_a_digest():
    campaign = CampaignFactory()
    for choice in Choice.values:
        _notification(UserFactory(email_notifications=choice, email=f"{choice}@example.org"), campaign, "Algo")
    assert _send_digest() == "Sent 1 digest e-mail(s).\n"
    assert [m.to for m in mail.outbox] == [["digest@example.org"]]
    assert Notification.objects.filter(emailed_at__isnull=True).count() == 3


def test_read_and_already_e_mailed_notifications_are_left_out():
    lucia = UserFactory(email_notifications=Choice.DIGEST)
    campaign = CampaignFactory()
    _notification(lucia, campaign, "Ya leído", read_at=timezone.now())
    _notification(lucia, campaign, "Ya enviado", emailed_at=timezone.now())
    assert _send_digest() == "Sent 0 digest e-mail(s).\n"
    _notification(lucia, campaign, "Pendiente")
    _send_digest()
    assert len(mail.outbox) == 1
    assert "Pendiente" in mail.outbox[0].body
    assert "Ya leído" not in mail.outbox[0].body and "Ya enviado" not in mail.outbox[0].body


def test_users_without_an_address_or_inactive_get_no_digest():
    campaign = CampaignFactory()
    _notification(UserFactory(email_notifications=Choice.DIGEST, email=""), campaign, "Algo")
    _notification(UserFactory(email_notifications=Choice.DIGEST, is_active=False), campaign, "Algo")
    assert _send_digest() == "Sent 0 digest e-mail(s).\n"
    assert mail.outbox == []


def test_notifications_without_a_campaign_are_listed_apart():
    lucia = UserFactory(email_notifications=Choice.DIGEST)
    Notification.objects.create(user=lucia, kind=Notification.Kind.MODERATION, text="Sin partida", url="/")
    _send_digest()
    assert "== Otros avisos ==\n\n- Sin partida" in mail.outbox[0].body


def test_a_failed_send_leaves_the_notifications_pending_and_the_others_go_out(settings, monkeypatch):
    campaign = CampaignFactory()
    broken = UserFactory(email_notifications=Choice.DIGEST)
    fine = UserFactory(email_notifications=Choice.DIGEST)
    _notification(broken, campaign, "A")
    _notification(fine, campaign, "B")
    real_email = notify.digest_email

    def email_or_fail(user, notifications, awaited):
        if user == broken:
            raise ConnectionRefusedError("mail server down")
        return real_email(user, notifications, awaited)

    monkeypatch.setattr(notify, "digest_email", email_or_fail)
    err = StringIO()
    out = StringIO()
    call_command("send_digest", stdout=out, stderr=err)
    assert out.getvalue() == "Sent 1 digest e-mail(s).\n"
    assert "1 digest e-mail(s) failed" in err.getvalue()
    assert Notification.objects.get(user=broken).emailed_at is None
    assert Notification.objects.get(user=fine).emailed_at is not None


def test_post_notifications_of_digest_users_reach_the_digest(django_capture_on_commit_callbacks):
    campaign = CampaignFactory(gm=UserFactory(email_notifications=Choice.NEVER))
    lucia = member(campaign, email_notifications=Choice.DIGEST)
    written = post(scene(campaign, title="El faro"), campaign.gm)
    with django_capture_on_commit_callbacks(execute=True):
        notify.post_created(written)
    assert mail.outbox == []
    _send_digest()
    assert [m.to for m in mail.outbox] == [[lucia.email]]
    assert f"https://hitos.example/mensajes/{written.pk}/" in mail.outbox[0].body


# --- «Te esperan» ---------------------------------------------------------------------------


def _awaited(title="El faro", lucia=None):
    """A campaign whose scene waits for Lucía (a digest user) to write."""
    campaign = CampaignFactory(title=title, gm=UserFactory(email_notifications=Choice.NEVER))
    if lucia is None:
        lucia = member(campaign, email_notifications=Choice.DIGEST, display_name="Lucía")
    else:
        Membership.objects.create(campaign=campaign, user=lucia, role=Role.PLAYER)
    cala = scene(campaign, title="La cala")
    post(cala, campaign.gm, body="Os toca.")
    return campaign, lucia, cala


def test_a_digest_user_awaited_somewhere_gets_a_digest_with_only_what_waits_for_them():
    _faro, lucia, cala = _awaited()
    assert list(notify.digest_users()) == [lucia]
    assert _send_digest() == "Sent 1 digest e-mail(s).\n"
    message = mail.outbox[0]
    assert message.to == [lucia.email]
    assert message.subject == "[Hitos] Tu resumen: te esperan"
    body = message.body
    assert "No tienes avisos nuevos desde el último resumen, pero hay escenas de Hitos que te esperan." in body
    assert "aviso nuevo" not in body
    assert (
        f"== Te esperan ==\n\n- El faro: Escribir en «La cala»\n  https://hitos.example{cala.get_absolute_url()}"
        in (body)
    )
    # Sent on every run while she is awaited; once she writes, nothing waits and nothing goes.
    assert _send_digest() == "Sent 1 digest e-mail(s).\n"
    post(cala, lucia, body="Voy.")
    assert list(notify.digest_users()) == []
    assert _send_digest() == "Sent 0 digest e-mail(s).\n"
    assert len(mail.outbox) == 2


def test_a_digest_with_notifications_also_says_what_waits():
    faro, lucia, cala = _awaited()
    _notification(lucia, faro, "Uno en el faro")
    _send_digest()
    body = mail.outbox[0].body
    assert mail.outbox[0].subject == "[Hitos] Tu resumen: 1 aviso nuevo"
    assert body.index("- Uno en el faro") < body.index("== Te esperan ==") < body.index("- El faro: Escribir en")


def test_only_digest_users_are_sent_what_waits_for_them():
    faro, lucia, cala = _awaited()
    for choice in (Choice.IMMEDIATE, Choice.GM_ONLY, Choice.NEVER):
        member(faro, email_notifications=choice)
    member(faro, email_notifications=Choice.DIGEST, email="")
    assert list(notify.digest_users()) == [lucia]


def test_what_waits_in_a_campaign_an_absence_holds_is_not_sent_while_away():
    faro, lucia, _cala = _awaited()
    today = absences.campaign_today(faro)
    Absence.objects.create(campaign=faro, user=lucia, starts_on=today, ends_on=today + timedelta(days=2))
    assert list(notify.digest_users()) == []
    assert notify.digest_send(user=lucia) is False
    # Awaited in another campaign too: that one is sent, the held one is not.
    _awaited("La Marca", lucia=lucia)
    assert list(notify.digest_users()) == [lucia]
    assert _send_digest() == "Sent 1 digest e-mail(s).\n"
    body = mail.outbox[0].body
    assert "- La Marca: Escribir en «La cala»" in body and "El faro" not in body


def test_who_gets_a_digest_is_found_in_a_constant_number_of_queries(django_assert_num_queries):
    _awaited("Uno")
    with CaptureQueriesContext(connection) as one:
        assert len(list(notify.digest_users())) == 1
    lucia = _awaited("Dos")[1]
    _awaited("Tres", lucia=lucia)
    campaign = _awaited("Cuatro")[0]
    away = member(campaign, email_notifications=Choice.DIGEST)
    today = absences.campaign_today(campaign)
    Absence.objects.create(campaign=campaign, user=away, starts_on=today, ends_on=today)
    _notification(UserFactory(email_notifications=Choice.DIGEST), campaign, "Algo")
    with django_assert_num_queries(len(one.captured_queries)):
        assert len(list(notify.digest_users())) == 4


def test_what_waits_is_written_in_the_users_language_with_the_deadline_too():
    faro, lucia, cala = _awaited()
    lucia.language = "en"
    lucia.save(update_fields=["language"])
    deadlines.set_deadline(
        campaign=faro,
        scene=cala,
        kind=deadlines.SCENE,
        target_id=cala.pk,
        due_at=timezone.now() + timedelta(days=2, minutes=5),
        actor=faro.gm,
    )
    assert notify.digest_send(user=lucia) is True
    body = mail.outbox[0].body
    assert "- El faro: Write in “La cala”" in body
    assert "Escribir en" not in body and "plazo:" not in body and "quedan" not in body
