"""Absences: the rules of their dates, who is away today in the campaign's
time zone, and the return noticed exactly once (campaigns.absences)."""

from __future__ import annotations

import threading
from datetime import UTC, date, datetime

import pytest
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import translation

from accounts.models import User
from campaigns import absences, extensions
from campaigns.models import Absence, Campaign, Membership, Notification, Role
from tests.factories import CampaignFactory, UserFactory, add_member

pytestmark = pytest.mark.django_db

Choice = User.EmailChoice

# 23:30 in Madrid on 1 December (UTC+1), 17:30 in Bogotá (UTC-5).
MADRID_LATE = datetime(2026, 12, 1, 22, 30, tzinfo=UTC)
# Half past midnight in Madrid on 2 December, 18:30 on the 1st in Bogotá.
MADRID_AFTER_MIDNIGHT = datetime(2026, 12, 1, 23, 30, tzinfo=UTC)
# Half past midnight in Bogotá on 2 December.
BOGOTA_AFTER_MIDNIGHT = datetime(2026, 12, 2, 5, 30, tzinfo=UTC)


def _campaign(time_zone="Europe/Madrid", **fields):
    return CampaignFactory(time_zone=time_zone, gm=UserFactory(display_name="La Directora"), **fields)


def _away(campaign, user, starts_on, ends_on, **fields):
    return Absence.objects.create(campaign=campaign, user=user, starts_on=starts_on, ends_on=ends_on, **fields)


# --- the campaign's day ---------------------------------------------------------------


def test_the_campaign_day_is_the_one_where_the_campaign_is_played():
    madrid, bogota = _campaign(), _campaign("America/Bogota")
    assert absences.campaign_today(madrid, MADRID_LATE) == date(2026, 12, 1)
    assert absences.campaign_today(madrid, MADRID_AFTER_MIDNIGHT) == date(2026, 12, 2)
    assert absences.campaign_today(bogota, MADRID_AFTER_MIDNIGHT) == date(2026, 12, 1)
    assert absences.campaign_today(bogota, BOGOTA_AFTER_MIDNIGHT) == date(2026, 12, 2)


def test_a_member_in_bogota_is_away_by_the_madrid_campaigns_days():
    campaign = _campaign()
    ana = add_member(campaign, display_name="Ana", time_zone="America/Bogota")
    _away(campaign, ana, date(2026, 12, 2), date(2026, 12, 5))
    # Still 1 December for Ana, already the 2nd where the campaign is played.
    assert absences.away_user_ids(campaign, MADRID_LATE) == set()
    assert absences.away_user_ids(campaign, MADRID_AFTER_MIDNIGHT) == {ana.pk}


def test_away_now_leaves_out_cancelled_returned_and_departed_members_and_includes_the_gm():
    campaign = _campaign()
    ana = add_member(campaign)
    bruno = add_member(campaign)
    carla = add_member(campaign)
    gone = add_member(campaign, status=Membership.Status.LEFT)
    day = date(2026, 12, 1)
    _away(campaign, ana, day, day)
    _away(campaign, bruno, day, day, cancelled_at=MADRID_LATE)
    _away(campaign, carla, day, day, returned_at=MADRID_LATE)
    _away(campaign, gone, day, day)
    _away(campaign, campaign.gm, day, date(2026, 12, 3), note="de viaje")
    away = absences.away_now(campaign, MADRID_LATE)
    assert set(away) == {ana.pk, campaign.gm_id}
    assert away[campaign.gm_id].note == "de viaje"


def test_effective_consent_is_the_campaigns_choice_else_the_profiles():
    campaign = _campaign()
    ana = add_member(campaign, takeover_consent="gm")
    membership = Membership.objects.get(campaign=campaign, user=ana)
    assert absences.effective_consent(membership) == "gm"
    membership.takeover_consent = "nobody"
    assert absences.effective_consent(membership) == "nobody"


# --- the dates --------------------------------------------------------------------------


def _check(campaign, user, start, end, **kwargs):
    with pytest.raises(ValidationError) as caught:
        absences.check_dates(campaign=campaign, user=user, starts_on=start, ends_on=end, now=MADRID_LATE, **kwargs)
    return caught.value.messages


def test_dates_are_refused_in_spanish():
    campaign = _campaign()
    ana = add_member(campaign)
    assert _check(campaign, ana, date(2026, 12, 5), date(2026, 12, 3)) == ["La vuelta no puede ser antes de la salida."]
    assert _check(campaign, ana, date(2026, 11, 20), date(2026, 11, 30)) == ["La fecha de vuelta ya ha pasado."]
    assert _check(campaign, ana, date(2026, 12, 1), date(2027, 12, 1)) == ["Una ausencia dura como mucho un año."]
    # A year exactly: to the day before the same date a year later.
    absences.check_dates(
        campaign=campaign, user=ana, starts_on=date(2026, 12, 1), ends_on=date(2027, 11, 30), now=MADRID_LATE
    )


def test_an_absence_may_not_overlap_another_live_one_of_the_same_member_in_the_campaign():
    campaign = _campaign()
    ana = add_member(campaign)
    existing = _away(campaign, ana, date(2026, 12, 3), date(2026, 12, 10))
    assert _check(campaign, ana, date(2026, 12, 10), date(2026, 12, 12)) == [
        "Ya tienes una ausencia en esas fechas (del 03/12/2026 al 10/12/2026): cámbiala o anúlala."
    ]
    # Editing the same absence is no clash; the day after is free; a cancelled one does not count.
    absences.check_dates(
        campaign=campaign,
        user=ana,
        starts_on=date(2026, 12, 4),
        ends_on=date(2026, 12, 9),
        exclude=existing,
        now=MADRID_LATE,
    )
    absences.check_dates(
        campaign=campaign, user=ana, starts_on=date(2026, 12, 11), ends_on=date(2026, 12, 12), now=MADRID_LATE
    )
    Absence.objects.filter(pk=existing.pk).update(cancelled_at=MADRID_LATE)
    absences.check_dates(
        campaign=campaign, user=ana, starts_on=date(2026, 12, 5), ends_on=date(2026, 12, 6), now=MADRID_LATE
    )
    # Another campaign's absence is no clash either.
    other = _campaign()
    Membership.objects.create(campaign=other, user=ana, role=Role.PLAYER)
    absences.check_dates(
        campaign=other, user=ana, starts_on=date(2026, 12, 3), ends_on=date(2026, 12, 4), now=MADRID_LATE
    )


# --- announcing ------------------------------------------------------------------------


def test_announcing_an_absence_tells_the_gm_and_co_gms_but_not_the_member():
    campaign = _campaign(title="La mansión")
    cogm = add_member(campaign, Role.COGM)
    ana = add_member(campaign, display_name="Ana")
    bruno = add_member(campaign)
    absence = absences.absence_create(
        campaign=campaign,
        user=ana,
        starts_on=date(2026, 12, 3),
        ends_on=date(2026, 12, 12),
        note="de viaje",
        now=MADRID_LATE,
    )
    assert absence.hold_notifications is True
    told = Notification.objects.filter(kind=Notification.Kind.ABSENCE)
    assert sorted(told.values_list("user_id", flat=True)) == sorted([campaign.gm_id, cogm.pk])
    assert not Notification.objects.filter(user__in=[ana, bruno]).exists()
    assert (
        told.first().text == "Ana estará ausente de «La mansión» del 3 de diciembre al 12 de diciembre. Nota: de viaje"
    )
    assert told.first().url == f"/partidas/{campaign.slug}/ausentes/"


def test_announcing_refuses_bad_dates_and_writes_nothing():
    campaign = _campaign()
    ana = add_member(campaign)
    with pytest.raises(ValidationError):
        absences.absence_create(
            campaign=campaign, user=ana, starts_on=date(2026, 12, 3), ends_on=date(2026, 12, 2), now=MADRID_LATE
        )
    assert not Absence.objects.exists()
    assert not Notification.objects.exists()


# --- the return -------------------------------------------------------------------------


def _welcomes(user):
    return list(Notification.objects.filter(user=user, kind=Notification.Kind.ABSENCE).values_list("text", flat=True))


def test_the_clock_notices_a_return_once_the_last_day_has_passed_where_the_campaign_is_played():
    madrid, bogota = _campaign(title="Madrid"), _campaign("America/Bogota", title="Bogotá")
    ana = add_member(madrid, display_name="Ana")
    bea = add_member(bogota, display_name="Bea")
    in_madrid = _away(madrid, ana, date(2026, 11, 28), date(2026, 12, 1))
    in_bogota = _away(bogota, bea, date(2026, 11, 28), date(2026, 12, 1))

    assert absences.notice_returns(MADRID_LATE) == 0
    assert absences.notice_returns(MADRID_AFTER_MIDNIGHT) == 1
    in_madrid.refresh_from_db()
    assert in_madrid.returned_at == MADRID_AFTER_MIDNIGHT
    assert _welcomes(ana) == ["Bienvenido de vuelta a «Madrid»: 0 avisos mientras estabas fuera."]
    assert list(
        Notification.objects.filter(user=madrid.gm, kind=Notification.Kind.ABSENCE).values_list("text", flat=True)
    ) == ["Ana ha vuelto a «Madrid»."]

    # Run again: nothing is noticed twice; Bogotá's day has not ended yet.
    assert absences.notice_returns(MADRID_AFTER_MIDNIGHT) == 0
    assert len(_welcomes(ana)) == 1
    assert absences.notice_returns(BOGOTA_AFTER_MIDNIGHT) == 1
    in_bogota.refresh_from_db()
    assert in_bogota.returned_at == BOGOTA_AFTER_MIDNIGHT
    assert absences.notice_returns(BOGOTA_AFTER_MIDNIGHT) == 0


def test_a_return_claimed_by_another_run_is_not_noticed_again():
    campaign = _campaign()
    ana = add_member(campaign)
    absence = _away(campaign, ana, date(2026, 11, 28), date(2026, 11, 30))
    # Another run claimed it between this one's read and its update.
    Absence.objects.filter(pk=absence.pk).update(returned_at=MADRID_LATE)
    assert absences.notice_return(absence, now=MADRID_LATE) is False
    assert not Notification.objects.exists()


def test_cancelled_absences_and_current_ones_are_not_noticed():
    campaign = _campaign()
    ana, bruno = add_member(campaign), add_member(campaign)
    _away(campaign, ana, date(2026, 11, 28), date(2026, 11, 30), cancelled_at=MADRID_LATE)
    _away(campaign, bruno, date(2026, 11, 28), date(2026, 12, 1))
    assert absences.notice_returns(MADRID_LATE) == 0
    assert not Notification.objects.exists()


def test_the_welcome_says_what_others_did_in_the_members_name(monkeypatch):
    campaign = _campaign(title="La mansión")
    ana = add_member(campaign)
    absence = _away(campaign, ana, date(2026, 11, 28), date(2026, 11, 30))
    monkeypatch.setattr(
        extensions,
        "_return_hooks",
        [lambda c, u: [f"La Directora llevó a Inés en «El sótano» ({u.pk == ana.pk and c.pk == campaign.pk})."]],
    )
    assert absences.notice_returns(MADRID_LATE) == 1
    assert _welcomes(ana) == [
        "Bienvenido de vuelta a «La mansión»: 0 avisos mientras estabas fuera. "
        "En tu nombre: La Directora llevó a Inés en «El sótano» (True)."
    ]
    absence.refresh_from_db()
    assert absence.returned_at is not None


def test_an_absence_without_holding_welcomes_without_counting():
    campaign = _campaign(title="La mansión")
    ana = add_member(campaign)
    _away(campaign, ana, date(2026, 11, 28), date(2026, 11, 30), hold_notifications=False)
    assert absences.notice_returns(MADRID_LATE) == 1
    assert _welcomes(ana) == ["Bienvenido de vuelta a «La mansión»."]


def test_ya_he_vuelto_ends_a_current_absence_today_and_notices_the_return_at_once():
    campaign = _campaign(title="La mansión")
    ana = add_member(campaign, display_name="Ana")
    absence = _away(campaign, ana, date(2026, 11, 28), date(2026, 12, 10))
    assert absences.absence_return(absence=absence, now=MADRID_LATE) is True
    absence.refresh_from_db()
    assert absence.ends_on == date(2026, 12, 1)
    assert absence.returned_at == MADRID_LATE
    assert absences.away_user_ids(campaign, MADRID_LATE) == set()
    assert len(_welcomes(ana)) == 1
    # The clock finds nothing left to notice the next day.
    assert absences.notice_returns(MADRID_AFTER_MIDNIGHT) == 0


def test_cancelling_a_started_absence_counts_as_a_return_and_a_future_one_does_not():
    campaign = _campaign()
    ana = add_member(campaign)
    started = _away(campaign, ana, date(2026, 11, 28), date(2026, 12, 10))
    future = _away(campaign, ana, date(2026, 12, 20), date(2026, 12, 22))
    assert absences.absence_cancel(absence=started, now=MADRID_LATE) is True
    assert absences.absence_cancel(absence=future, now=MADRID_LATE) is False
    started.refresh_from_db()
    future.refresh_from_db()
    assert started.cancelled_at == future.cancelled_at == MADRID_LATE
    assert started.returned_at == MADRID_LATE and future.returned_at is None
    assert len(_welcomes(ana)) == 1


def test_the_direction_view_sorts_away_back_soon_back_lately_and_upcoming():
    campaign = _campaign()
    ana, bruno, carla, dani, eva = (
        add_member(campaign, display_name=n) for n in ("Ana", "Bruno", "Carla", "Dani", "Eva")
    )
    _away(campaign, ana, date(2026, 11, 28), date(2026, 12, 3))  # away, back within 7 days
    _away(campaign, bruno, date(2026, 11, 28), date(2026, 12, 20))  # away, back later
    _away(campaign, carla, date(2026, 11, 20), date(2026, 11, 27))  # back 4 days ago
    _away(campaign, dani, date(2026, 11, 1), date(2026, 11, 20))  # back too long ago
    _away(campaign, eva, date(2026, 12, 5), date(2026, 12, 6))  # upcoming
    view = absences.direction_view(campaign, MADRID_LATE)
    names = {key: [a.user.public_name for a in rows] for key, rows in view.items()}
    assert names == {"away": ["Ana", "Bruno"], "returning": ["Ana"], "back": ["Carla"], "upcoming": ["Eva"]}


def test_own_absences_are_the_current_and_future_ones():
    campaign = _campaign()
    ana = add_member(campaign)
    current = _away(campaign, ana, date(2026, 11, 28), date(2026, 12, 3))
    future = _away(campaign, ana, date(2026, 12, 5), date(2026, 12, 6))
    _away(campaign, ana, date(2026, 11, 1), date(2026, 11, 3))
    _away(campaign, ana, date(2026, 12, 8), date(2026, 12, 9), cancelled_at=MADRID_LATE)
    assert absences.own_absences(campaign, ana, MADRID_LATE) == [current, future]


def test_the_welcome_with_what_was_done_in_their_name_is_kept_in_the_members_language_only(monkeypatch):
    campaign = _campaign(title="La mansión")
    ana = add_member(campaign, language="en")
    _away(campaign, ana, date(2026, 11, 28), date(2026, 11, 30))
    asked_in = []

    def hook(campaign, user):
        asked_in.append(translation.get_language())
        return ["The GM played Inés in “The cellar”."]

    monkeypatch.setattr(extensions, "_return_hooks", [hook])
    assert absences.notice_returns(MADRID_LATE) == 1
    # The hook runs once, in Ana's language, and its lines exist only in it:
    # the welcome is not also written in Spanish around English lines.
    assert asked_in == ["en"]
    welcome = Notification.objects.get(user=ana, kind=Notification.Kind.ABSENCE)
    assert welcome.texts == {}
    assert welcome.text == (
        "Welcome back to “La mansión”: 0 notifications while you were away. "
        "On your behalf: The GM played Inés in “The cellar”."
    )
    with translation.override("es"):
        assert welcome.shown_text == welcome.text


def test_a_welcome_with_nothing_done_in_their_name_is_written_in_every_language(monkeypatch):
    campaign = _campaign(title="La mansión")
    ana = add_member(campaign, language="en")
    _away(campaign, ana, date(2026, 11, 28), date(2026, 11, 30))
    monkeypatch.setattr(extensions, "_return_hooks", [lambda c, u: []])
    assert absences.notice_returns(MADRID_LATE) == 1
    welcome = Notification.objects.get(user=ana, kind=Notification.Kind.ABSENCE)
    assert welcome.texts == {
        "es": "Bienvenido de vuelta a «La mansión»: 0 avisos mientras estabas fuera.",
        "en": "Welcome back to “La mansión”: 0 notifications while you were away.",
    }
    assert welcome.text == welcome.texts["en"]


# --- changing an absence that has started ------------------------------------------------


def test_a_started_absence_keeps_its_first_day_but_its_end_and_note_may_change():
    campaign = _campaign()
    ana = add_member(campaign)
    started = _away(campaign, ana, date(2026, 11, 28), date(2026, 12, 10))
    for start in (date(2026, 12, 3), date(2026, 11, 25)):
        with pytest.raises(ValidationError) as refused:
            absences.absence_update(
                absence=started,
                starts_on=start,
                ends_on=date(2026, 12, 10),
                note="",
                hold_notifications=True,
                now=MADRID_LATE,
            )
        assert refused.value.messages == [
            "Esta ausencia ya empezó: no puedes cambiar el día de salida (el 28/11/2026)."
        ]
        started.refresh_from_db()
        assert started.starts_on == date(2026, 11, 28)
    absences.absence_update(
        absence=started,
        starts_on=date(2026, 11, 28),
        ends_on=date(2026, 12, 4),
        note="antes",
        hold_notifications=True,
        now=MADRID_LATE,
    )
    started.refresh_from_db()
    assert (started.starts_on, started.ends_on, started.note) == (date(2026, 11, 28), date(2026, 12, 4), "antes")


def test_an_absence_not_started_yet_may_move_its_first_day_by_the_campaigns_day():
    campaign = _campaign("America/Bogota")
    ana = add_member(campaign)
    # It starts on 2 December: already begun in Madrid, not yet in Bogotá.
    future = _away(campaign, ana, date(2026, 12, 2), date(2026, 12, 5))
    absences.absence_update(
        absence=future,
        starts_on=date(2026, 12, 3),
        ends_on=date(2026, 12, 5),
        note="",
        hold_notifications=True,
        now=MADRID_AFTER_MIDNIGHT,
    )
    future.refresh_from_db()
    assert future.starts_on == date(2026, 12, 3)


def test_an_absence_cancelled_meanwhile_is_not_changed():
    campaign = _campaign()
    ana = add_member(campaign)
    absence = _away(campaign, ana, date(2026, 12, 5), date(2026, 12, 8))
    Absence.objects.filter(pk=absence.pk).update(cancelled_at=MADRID_LATE)
    with pytest.raises(ValidationError) as refused:
        absences.absence_update(
            absence=absence,
            starts_on=date(2026, 12, 5),
            ends_on=date(2026, 12, 9),
            note="",
            hold_notifications=True,
            now=MADRID_LATE,
        )
    assert refused.value.messages == ["Esta ausencia ya ha terminado o se ha anulado."]
    absence.refresh_from_db()
    assert absence.ends_on == date(2026, 12, 8)


# --- who the clock welcomes back -----------------------------------------------------------


@pytest.mark.parametrize("status", [Membership.Status.LEFT, Membership.Status.REMOVED])
def test_the_clock_does_not_notice_returns_of_people_who_left_the_campaign(status):
    campaign = _campaign(title="Madrid")
    ana = add_member(campaign, display_name="Ana")
    bea = add_member(campaign, display_name="Bea")
    _away(campaign, ana, date(2026, 11, 28), date(2026, 11, 30))
    gone = _away(campaign, bea, date(2026, 11, 28), date(2026, 11, 30))
    gm_away = _away(campaign, campaign.gm, date(2026, 11, 28), date(2026, 11, 30))
    Membership.objects.filter(campaign=campaign, user=bea).update(status=status)

    assert absences.notice_returns(MADRID_LATE) == 2
    gone.refresh_from_db()
    gm_away.refresh_from_db()
    assert gone.returned_at is None and gm_away.returned_at == MADRID_LATE
    assert _welcomes(bea) == []
    assert not Notification.objects.filter(text__contains="Bea").exists()


# --- one member's absences checked one request at a time -----------------------------------


def _locked_models(monkeypatch):
    """The models whose rows are locked (``select_for_update``) from now on."""
    from django.db.models import QuerySet

    locked = []
    original = QuerySet.select_for_update

    def recording(self, *args, **kwargs):
        locked.append(self.model)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(QuerySet, "select_for_update", recording)
    return locked


def test_announcing_and_changing_lock_the_members_row_before_checking_the_dates(monkeypatch):
    campaign = _campaign()
    ana = add_member(campaign)
    locked = _locked_models(monkeypatch)
    absence = absences.absence_create(
        campaign=campaign, user=ana, starts_on=date(2026, 12, 5), ends_on=date(2026, 12, 8), now=MADRID_LATE
    )
    assert locked == [Membership]
    locked.clear()
    absence.campaign, absence.user = campaign, ana
    absences.absence_update(
        absence=absence,
        starts_on=date(2026, 12, 5),
        ends_on=date(2026, 12, 9),
        note="",
        hold_notifications=True,
        now=MADRID_LATE,
    )
    assert locked[:2] == [Membership, Absence]
    # The GM has no membership: the campaign's row stands for them.
    locked.clear()
    absences.absence_create(
        campaign=campaign, user=campaign.gm, starts_on=date(2026, 12, 5), ends_on=date(2026, 12, 8), now=MADRID_LATE
    )
    assert locked == [Campaign]


def test_someone_who_left_may_not_announce_an_absence():
    campaign = _campaign()
    ana = add_member(campaign, status=Membership.Status.LEFT)
    with pytest.raises(ValidationError) as refused:
        absences.absence_create(
            campaign=campaign, user=ana, starts_on=date(2026, 12, 5), ends_on=date(2026, 12, 8), now=MADRID_LATE
        )
    assert refused.value.messages == ["Ya no eres miembro de esta partida."]
    assert not Absence.objects.exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="SQLite writes one transaction at a time: two requests can never check the overlap at once.",
)
def test_two_overlapping_absences_announced_at_the_same_moment_are_not_both_saved():
    campaign = _campaign()
    ana = add_member(campaign)
    days = {"starts_on": date(2026, 12, 5), "ends_on": date(2026, 12, 8), "now": MADRID_LATE}
    first_saved, first_may_commit = threading.Event(), threading.Event()
    outcome = {}

    def first():
        try:
            with transaction.atomic():
                absences.absence_create(campaign=campaign, user=ana, **days)
                first_saved.set()
                # Held open: the second request runs its check meanwhile.
                first_may_commit.wait(5)
        finally:
            connection.close()

    def second():
        try:
            first_saved.wait(5)
            absences.absence_create(campaign=campaign, user=ana, **days)
            outcome["second"] = "saved"
        except ValidationError as exc:
            outcome["second"] = exc.messages
        finally:
            connection.close()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    # Without the lock the second one checks, finds nothing committed and saves.
    threads[1].join(1.5)
    first_may_commit.set()
    for thread in threads:
        thread.join(10)
    assert outcome["second"] == [
        "Ya tienes una ausencia en esas fechas (del 05/12/2026 al 08/12/2026): cámbiala o anúlala."
    ]
    assert Absence.objects.filter(user=ana).count() == 1
