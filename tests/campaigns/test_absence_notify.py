"""Notifications held while a member is away, and the one "while you were
away" e-mail on return (campaigns.notify, campaigns.absences).

Decided: the return is claimed once (a conditional UPDATE), and its e-mail
is a task enqueued after that commit; a mail server failure leaves the held
notifications pending and the task tried again later (when the backend can
defer it), never a second welcome or a second notice to the direction.
"""

from __future__ import annotations

import logging
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.core import mail
from django.db import connection
from django.tasks import TaskResultStatus
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from accounts.models import User
from campaigns import absences, extensions, notify
from campaigns.models import Absence, Notification, Post, Role
from tests.conftest import run_worker
from tests.factories import CampaignFactory, UserFactory, add_member
from tests.factories import make_post as post
from tests.factories import make_scene as scene

pytestmark = pytest.mark.django_db

Choice = User.EmailChoice


@pytest.fixture(autouse=True)
def _site_url(settings):
    settings.SITE_URL = "https://hitos.example"


def _campaign(**fields):
    return CampaignFactory(gm=UserFactory(email_notifications=Choice.NEVER, display_name="La Directora"), **fields)


def _away(campaign, user, *, days_ago=1, days_left=3, **fields):
    today = absences.campaign_today(campaign)
    return Absence.objects.create(
        campaign=campaign,
        user=user,
        starts_on=today - timedelta(days=days_ago),
        ends_on=today + timedelta(days=days_left),
        **fields,
    )


def _notification(user, campaign, text="Algo pasó", **fields):
    return Notification.objects.create(
        user=user, campaign=campaign, kind=Notification.Kind.POST, text=text, url="/mensajes/1/", **fields
    )


def _end_yesterday(absence):
    """The absence's last day was yesterday (the clock will notice the return)."""
    today = absences.campaign_today(absence.campaign)
    Absence.objects.filter(pk=absence.pk).update(starts_on=today - timedelta(days=3), ends_on=today - timedelta(days=1))


# --- held while away --------------------------------------------------------------------


def test_an_away_member_is_notified_in_the_site_but_not_e_mailed(django_capture_on_commit_callbacks):
    campaign = _campaign(title="El faro")
    author = add_member(campaign, email_notifications=Choice.NEVER)
    ana = add_member(campaign, email_notifications=Choice.IMMEDIATE, email="ana@example.org")
    add_member(campaign, email_notifications=Choice.IMMEDIATE, email="bea@example.org")
    _away(campaign, ana)
    written = post(scene(campaign), author)
    with django_capture_on_commit_callbacks(execute=True):
        notify.post_created(written)
    assert Notification.objects.filter(post=written, user=ana).exists()
    assert [m.to for m in mail.outbox] == [["bea@example.org"]]


def test_an_absence_that_does_not_hold_or_has_not_started_lets_e_mail_through(django_capture_on_commit_callbacks):
    campaign = _campaign()
    author = add_member(campaign, email_notifications=Choice.NEVER)
    ana = add_member(campaign, email_notifications=Choice.IMMEDIATE, email="ana@example.org")
    bea = add_member(campaign, email_notifications=Choice.IMMEDIATE, email="bea@example.org")
    _away(campaign, ana, hold_notifications=False)
    _away(campaign, bea, days_ago=-2, days_left=5)
    with django_capture_on_commit_callbacks(execute=True):
        notify.post_created(post(scene(campaign), author))
    assert sorted(m.to[0] for m in mail.outbox) == ["ana@example.org", "bea@example.org"]


def test_an_absence_holds_only_its_own_campaign(django_capture_on_commit_callbacks):
    faro, marca = _campaign(), _campaign()
    ana = add_member(faro, email_notifications=Choice.IMMEDIATE, email="ana@example.org")
    add_member(marca, email_notifications=Choice.IMMEDIATE, email="ana2@example.org")
    marca.memberships.filter(user__email="ana2@example.org").update(user=ana)
    _away(faro, ana)
    with django_capture_on_commit_callbacks(execute=True):
        notify.notify_users([ana], campaign=faro, kind="moderation", url="/", text=lambda: "en el faro")
        notify.notify_users([ana], campaign=marca, kind="moderation", url="/", text=lambda: "en la marca")
    assert [m.body.split("\n")[2] for m in mail.outbox] == ["en la marca"]


def test_an_e_mail_queued_before_the_absence_started_waits_for_the_return():
    campaign = _campaign()
    ana = add_member(campaign, email_notifications=Choice.IMMEDIATE, email="ana@example.org")
    queued = _notification(ana, campaign)
    _away(campaign, ana)
    assert notify.send_notification_emails.call([queued.pk]) == 0
    assert mail.outbox == []
    queued.refresh_from_db()
    assert queued.emailed_at is None


def test_the_daily_digest_skips_what_an_absence_holds():
    faro, marca = _campaign(title="El faro"), _campaign(title="La Marca")
    lucia = add_member(faro, email_notifications=Choice.DIGEST, display_name="Lucía")
    only_held = add_member(faro, email_notifications=Choice.DIGEST)
    _away(faro, lucia)
    _away(faro, only_held)
    _notification(lucia, faro, "En el faro")
    _notification(lucia, marca, "En la Marca")
    _notification(only_held, faro, "Solo en el faro")

    assert list(notify.digest_users()) == [lucia]
    assert notify.digest_send(user=only_held) is False
    assert notify.digest_send_all() == (1, 0)
    assert len(mail.outbox) == 1
    assert "En la Marca" in mail.outbox[0].body and "En el faro" not in mail.outbox[0].body
    assert Notification.objects.filter(emailed_at__isnull=True).count() == 2


def test_a_past_absence_whose_return_is_not_noticed_yet_still_holds():
    campaign = _campaign()
    lucia = add_member(campaign, email_notifications=Choice.DIGEST)
    absence = _away(campaign, lucia)
    _end_yesterday(absence)
    _notification(lucia, campaign)
    assert list(notify.digest_users()) == []


def test_the_fan_out_loads_the_absences_once_whatever_the_number_of_readers():
    counts = []
    for size in (2, 12):
        campaign = _campaign()
        players = [add_member(campaign, email_notifications=Choice.IMMEDIATE) for _ in range(size)]
        for player in players[1::2]:
            _away(campaign, player)
        written = post(scene(campaign), players[0])
        with CaptureQueriesContext(connection) as queries:
            notify.post_created(written)
        counts.append(len(queries))
        assert Notification.objects.filter(post=written).count() == size
    assert counts[0] == counts[1]


# --- the return ---------------------------------------------------------------------------


def test_on_return_one_e_mail_brings_what_was_held_and_what_others_did(monkeypatch, django_capture_on_commit_callbacks):
    campaign = _campaign(title="El faro")
    ana = add_member(campaign, email_notifications=Choice.IMMEDIATE, email="ana@example.org", display_name="Ana")
    absence = _away(campaign, ana)
    author = add_member(campaign, email_notifications=Choice.NEVER, display_name="Bruno")
    with django_capture_on_commit_callbacks(execute=True):
        notify.post_created(post(scene(campaign, title="La cala"), author))
        notify.post_created(post(scene(campaign, title="El muelle"), author))
    assert mail.outbox == []
    monkeypatch.setattr(extensions, "_return_hooks", [lambda c, u: ["La Directora llevó a Inés en «La cala»."]])
    _end_yesterday(absence)

    with django_capture_on_commit_callbacks(execute=True):
        assert absences.notice_returns() == 1
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["ana@example.org"]
    assert message.subject == "[Hitos] Mientras estabas fuera de «El faro»"
    body = message.body
    assert "Bienvenido de vuelta. Esto es lo que pasó en «El faro» mientras estabas fuera (3 avisos):" in body
    assert "- Bruno ha escrito en «La cala» (El faro)." in body
    assert "- Bruno ha escrito en «El muelle» (El faro)." in body
    assert "- Bienvenido de vuelta a «El faro»: 2 avisos mientras estabas fuera." in body
    assert "== Lo que se hizo en tu nombre ==\n\n- La Directora llevó a Inés en «La cala»." in body
    assert message.extra_headers["Auto-Submitted"] == "auto-generated"
    assert not Notification.objects.filter(user=ana, emailed_at__isnull=True).exists()

    # Exactly once: the clock again, and the task run twice, send nothing more.
    with django_capture_on_commit_callbacks(execute=True):
        assert absences.notice_returns() == 0
    welcome = Notification.objects.get(user=ana, kind=Notification.Kind.ABSENCE)
    assert notify.send_return_digest.call(absence.pk, welcome.pk, []) is False
    assert len(mail.outbox) == 1


def test_the_direction_is_told_of_the_return_by_its_own_preference(django_capture_on_commit_callbacks):
    campaign = CampaignFactory(title="El faro", gm=UserFactory(email_notifications=Choice.IMMEDIATE))
    cogm = add_member(campaign, Role.COGM, email_notifications=Choice.NEVER)
    ana = add_member(campaign, email_notifications=Choice.NEVER, display_name="Ana")
    absence = _away(campaign, ana)
    _end_yesterday(absence)
    with django_capture_on_commit_callbacks(execute=True):
        absences.notice_returns()
    assert [(m.to, m.subject) for m in mail.outbox] == [([campaign.gm.email], "[Hitos] Ana ha vuelto a «El faro».")]
    assert Notification.objects.filter(user=cogm, kind=Notification.Kind.ABSENCE).count() == 1


def test_a_member_who_wants_no_e_mail_gets_the_welcome_in_the_site_only(django_capture_on_commit_callbacks):
    campaign = _campaign()
    ana = add_member(campaign, email_notifications=Choice.NEVER)
    absence = _away(campaign, ana)
    _notification(ana, campaign)
    _end_yesterday(absence)
    with django_capture_on_commit_callbacks(execute=True):
        assert absences.notice_returns() == 1
    assert mail.outbox == []
    assert Notification.objects.filter(user=ana, kind=Notification.Kind.ABSENCE).count() == 1
    assert Notification.objects.filter(user=ana, emailed_at__isnull=True).count() == 2


def test_a_digest_member_gets_the_return_e_mail_and_no_digest_of_the_same_notifications(
    django_capture_on_commit_callbacks,
):
    campaign = _campaign(title="El faro")
    lucia = add_member(campaign, email_notifications=Choice.DIGEST)
    absence = _away(campaign, lucia)
    _notification(lucia, campaign, "Uno")
    with django_capture_on_commit_callbacks(execute=True):
        absences.absence_return(absence=Absence.objects.select_related("campaign", "user").get(pk=absence.pk))
    assert len(mail.outbox) == 1
    assert notify.digest_send_all() == (0, 0)


def test_read_notifications_are_not_e_mailed_on_return(django_capture_on_commit_callbacks):
    campaign = _campaign()
    ana = add_member(campaign, email_notifications=Choice.IMMEDIATE)
    absence = _away(campaign, ana)
    _notification(ana, campaign, "Leído ya", read_at=absence.created_at)
    _notification(ana, campaign, "Sin leer")
    _end_yesterday(absence)
    with django_capture_on_commit_callbacks(execute=True):
        absences.notice_returns()
    assert "Sin leer" in mail.outbox[0].body and "Leído ya" not in mail.outbox[0].body


def test_a_mail_server_failure_leaves_the_return_e_mail_to_be_tried_again(
    database_tasks, settings, caplog, django_capture_on_commit_callbacks
):
    settings.MAILERS = {"default": {"BACKEND": "tests.campaigns.notify_helpers.BrokenBackend"}}
    campaign = _campaign()
    ana = add_member(campaign, email_notifications=Choice.IMMEDIATE)
    absence = _away(campaign, ana)
    held = _notification(ana, campaign)
    _end_yesterday(absence)
    with django_capture_on_commit_callbacks(execute=True):
        assert absences.notice_returns() == 1
    with caplog.at_level(logging.ERROR, logger="campaigns.notify"):
        run_worker()
    assert f"Could not send the return digest of absence {absence.pk} (attempt 1)" in caplog.text
    retry = DBTaskResult.objects.get(status=TaskResultStatus.READY, task_path=notify.send_return_digest.module_path)
    welcome = Notification.objects.get(user=ana, kind=Notification.Kind.ABSENCE)
    assert retry.args_kwargs == {"args": [absence.pk, welcome.pk, [], 2], "kwargs": {}}
    held.refresh_from_db()
    assert held.emailed_at is None
    # The return itself was noticed once: the clock does not welcome them again.
    assert absences.notice_returns() == 0
    assert Notification.objects.filter(user=ana, kind=Notification.Kind.ABSENCE).count() == 1

    # The server is back: the retry sends it, once.
    settings.MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
    assert notify.send_return_digest.call(absence.pk, welcome.pk, [], 2) is True
    assert notify.send_return_digest.call(absence.pk, welcome.pk, [], 3) is False
    assert len(mail.outbox) == 1
    held.refresh_from_db()
    assert held.emailed_at is not None


def test_the_post_kind_of_a_held_notification_is_kept():
    campaign = _campaign()
    ana = add_member(campaign, email_notifications=Choice.IMMEDIATE)
    _away(campaign, ana)
    written = post(scene(campaign), campaign.gm, recipients=Post.Recipients.ALL)
    notify.post_created(written)
    assert Notification.objects.get(user=ana).kind == Notification.Kind.POST


def test_without_absences_the_digest_goes_out_as_before():
    campaign = _campaign(title="El faro")
    lucia = add_member(campaign, email_notifications=Choice.DIGEST)
    Absence.objects.create(
        campaign=campaign,
        user=lucia,
        starts_on=absences.campaign_today(campaign) + timedelta(days=2),
        ends_on=absences.campaign_today(campaign) + timedelta(days=4),
    )
    _notification(lucia, campaign, "Uno")
    assert list(notify.digest_users()) == [lucia]
    assert notify.digest_send_all() == (1, 0)
    assert "Uno" in mail.outbox[0].body


# --- what the return e-mail brings --------------------------------------------------------


def test_a_gm_only_member_gets_on_return_only_what_their_choice_would_have_e_mailed(django_capture_on_commit_callbacks):
    campaign = _campaign(title="El faro")
    ana = add_member(campaign, email_notifications=Choice.GM_ONLY, email="ana@example.org")
    bruno = add_member(campaign, email_notifications=Choice.NEVER, display_name="Bruno")
    absence = _away(campaign, ana)
    cala = scene(campaign, title="La cala")
    with django_capture_on_commit_callbacks(execute=True):
        notify.post_created(post(cala, bruno))
        notify.post_created(post(cala, campaign.gm))
        notify.moderation(campaign, ana, lambda: "Tu ficha está aprobada.")
    assert mail.outbox == []
    _end_yesterday(absence)

    with django_capture_on_commit_callbacks(execute=True):
        assert absences.notice_returns() == 1
    body = mail.outbox[0].body
    # The direction's post, what concerns Ana herself, and the welcome; not Bruno's post.
    assert "mientras estabas fuera (3 avisos):" in body
    assert "- La Directora ha escrito en «La cala» (El faro)." in body
    assert "- Tu ficha está aprobada." in body
    assert "- Bienvenido de vuelta a «El faro»: 2 avisos mientras estabas fuera." in body
    assert "Bruno" not in body
    # Bruno's post stays in the site's list, never e-mailed, as for any gm_only member.
    assert Notification.objects.get(user=ana, kind=Notification.Kind.POST, from_gm=False).emailed_at is None


def test_notices_from_before_the_first_day_of_the_absence_where_it_is_played_are_not_in_the_return_e_mail(
    django_capture_on_commit_callbacks,
):
    campaign = _campaign(title="El faro", time_zone="America/Bogota")
    lucia = add_member(campaign, email_notifications=Choice.DIGEST, email="lucia@example.org")
    absence = _away(campaign, lucia, days_ago=3, days_left=-1)
    first_day = datetime.combine(absence.starts_on, time.min, tzinfo=ZoneInfo("America/Bogota"))
    # A minute before midnight in Bogotá, already the first day in UTC: not held.
    eve = _notification(lucia, campaign, "La víspera")
    Notification.objects.filter(pk=eve.pk).update(created_at=first_day - timedelta(minutes=1))
    first = _notification(lucia, campaign, "El primer día")
    Notification.objects.filter(pk=first.pk).update(created_at=first_day)

    with django_capture_on_commit_callbacks(execute=True):
        assert absences.notice_returns() == 1
    body = mail.outbox[0].body
    assert "- El primer día" in body and "La víspera" not in body
    assert "- Bienvenido de vuelta a «El faro»: 1 aviso mientras estabas fuera." in body
    # The older one was never held: the next digest brings it.
    assert notify.digest_send_all() == (1, 0)
    assert "- La víspera" in mail.outbox[1].body and "El primer día" not in mail.outbox[1].body


def test_what_comes_after_the_return_is_left_for_the_digest_even_if_the_return_e_mail_is_late(
    django_capture_on_commit_callbacks,
):
    campaign = _campaign(title="El faro")
    lucia = add_member(campaign, email_notifications=Choice.DIGEST)
    absence = _away(campaign, lucia)
    _notification(lucia, campaign, "Mientras fuera")
    _end_yesterday(absence)
    with django_capture_on_commit_callbacks() as callbacks:
        assert absences.notice_returns() == 1
    absence.refresh_from_db()
    later = _notification(lucia, campaign, "Ya de vuelta")
    Notification.objects.filter(pk=later.pk).update(created_at=absence.returned_at + timedelta(seconds=1))
    for callback in callbacks:
        callback()
    assert len(mail.outbox) == 1
    assert "- Mientras fuera" in mail.outbox[0].body and "Ya de vuelta" not in mail.outbox[0].body
    later.refresh_from_db()
    assert later.emailed_at is None


def test_the_return_e_mail_goes_out_even_when_the_welcome_was_read_in_the_site_first(
    django_capture_on_commit_callbacks,
):
    campaign = _campaign(title="El faro")
    ana = add_member(campaign, email_notifications=Choice.IMMEDIATE)
    absence = _away(campaign, ana)
    _notification(ana, campaign, "Mientras fuera")
    _end_yesterday(absence)
    with django_capture_on_commit_callbacks() as callbacks:
        assert absences.notice_returns() == 1
    Notification.objects.filter(user=ana, kind=Notification.Kind.ABSENCE).update(read_at=timezone.now())
    for callback in callbacks:
        callback()
    assert len(mail.outbox) == 1
    assert "- Mientras fuera" in mail.outbox[0].body
    assert not Notification.objects.filter(user=ana, emailed_at__isnull=True).exists()


def test_a_member_who_wants_no_e_mail_is_welcomed_without_a_count_of_what_nothing_held():
    campaign = _campaign(title="El faro")
    ana = add_member(campaign, email_notifications=Choice.NEVER)
    absence = _away(campaign, ana)
    _notification(ana, campaign)
    _end_yesterday(absence)
    assert absences.notice_returns() == 1
    welcome = Notification.objects.get(user=ana, kind=Notification.Kind.ABSENCE)
    assert welcome.text == "Bienvenido de vuelta a «El faro»."
    assert notify.held_notifications(Absence.objects.select_related("user", "campaign").get(pk=absence.pk)).count() == 0


# --- holding turned off while away -------------------------------------------------------


def _update(absence, **changes):
    values = {
        "starts_on": absence.starts_on,
        "ends_on": absence.ends_on,
        "note": absence.note,
        "hold_notifications": absence.hold_notifications,
    }
    return absences.absence_update(absence=absence, **{**values, **changes})


def test_holding_turned_off_while_away_e_mails_at_once_what_was_held(django_capture_on_commit_callbacks):
    campaign = _campaign(title="El faro")
    ana = add_member(campaign, email_notifications=Choice.IMMEDIATE, email="ana@example.org", display_name="Ana")
    absence = _away(campaign, ana)
    author = add_member(campaign, email_notifications=Choice.NEVER, display_name="Bruno")
    with django_capture_on_commit_callbacks(execute=True):
        notify.post_created(post(scene(campaign, title="La cala"), author))
        notify.post_created(post(scene(campaign, title="El muelle"), author))
    assert mail.outbox == []

    absence = Absence.objects.select_related("campaign", "user").get(pk=absence.pk)
    with django_capture_on_commit_callbacks(execute=True):
        _update(absence, hold_notifications=False)
    assert len(mail.outbox) == 1
    body = mail.outbox[0].body
    assert mail.outbox[0].to == ["ana@example.org"]
    # Still away: the message says what was kept, not "welcome back".
    assert mail.outbox[0].subject == "[Hitos] Los avisos guardados de «El faro»"
    assert "Has dejado de guardar los avisos de «El faro». Esto es lo que se guardó (3 avisos):" in body
    assert "Bienvenido de vuelta" not in body
    assert "- Bruno ha escrito en «La cala» (El faro)." in body
    assert "- Bruno ha escrito en «El muelle» (El faro)." in body
    assert "- Ya no guardas los avisos de «El faro»: te enviamos por correo los 2 que se guardaron." in body
    assert not Notification.objects.filter(user=ana, emailed_at__isnull=True).exists()

    # From now on her notices are e-mailed at once, and the return sends no second copy.
    with django_capture_on_commit_callbacks(execute=True):
        notify.post_created(post(scene(campaign, title="La torre"), author))
    assert len(mail.outbox) == 2 and "La torre" in mail.outbox[1].body
    _end_yesterday(absence)
    with django_capture_on_commit_callbacks(execute=True):
        assert absences.notice_returns() == 1
    assert len(mail.outbox) == 3
    assert mail.outbox[2].body.count("Bruno ha escrito") == 0
    assert "Bienvenido de vuelta a «El faro»." in mail.outbox[2].body


def test_holding_turned_off_with_nothing_held_or_before_the_start_sends_nothing(django_capture_on_commit_callbacks):
    campaign = _campaign(title="El faro")
    ana = add_member(campaign, email_notifications=Choice.IMMEDIATE, email="ana@example.org")
    author = add_member(campaign, email_notifications=Choice.NEVER)
    started = Absence.objects.select_related("campaign", "user").get(pk=_away(campaign, ana).pk)
    with django_capture_on_commit_callbacks(execute=True):
        _update(started, hold_notifications=False)
    future = Absence.objects.select_related("campaign", "user").get(
        pk=_away(campaign, ana, days_ago=-10, days_left=12).pk
    )
    with django_capture_on_commit_callbacks(execute=True):
        notify.post_created(post(scene(campaign), author))
    assert len(mail.outbox) == 1  # Not held: the first absence holds nothing any more.
    with django_capture_on_commit_callbacks(execute=True):
        _update(future, hold_notifications=False)
    assert len(mail.outbox) == 1
    assert not Notification.objects.filter(user=ana, kind=Notification.Kind.ABSENCE).exists()


def test_a_digest_member_who_stops_holding_gets_what_was_held_once(django_capture_on_commit_callbacks):
    campaign = _campaign(title="El faro")
    ana = add_member(campaign, email_notifications=Choice.DIGEST, email="ana@example.org")
    author = add_member(campaign, email_notifications=Choice.NEVER, display_name="Bruno")
    absence = _away(campaign, ana)
    with django_capture_on_commit_callbacks(execute=True):
        notify.post_created(post(scene(campaign, title="La cala"), author))
    absence = Absence.objects.select_related("campaign", "user").get(pk=absence.pk)
    with django_capture_on_commit_callbacks(execute=True):
        _update(absence, hold_notifications=False)
    assert len(mail.outbox) == 1 and "La cala" in mail.outbox[0].body
    assert notify.digest_send(user=ana) is False
