"""Deadlines' rows and services (campaigns.deadlines): the form fields other
forms add, how a deadline reads, the scene's own kind, settling one that
passed and giving more time."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django import forms
from django.core.exceptions import ValidationError
from django.template import Context, Template
from django.test import RequestFactory
from django.utils import timezone

from campaigns import deadlines, extensions
from campaigns.models import Deadline, ModerationAction, ModerationLog, Notification, Post, Role
from tests.factories import add_member, write

pytestmark = pytest.mark.django_db

MADRID = ZoneInfo("Europe/Madrid")
BOGOTA = ZoneInfo("America/Bogota")


def _scene_deadline(table, due_at=None, **kwargs) -> Deadline:
    return deadlines.set_deadline(
        campaign=table.campaign,
        scene=table.scene,
        kind=deadlines.SCENE,
        target_id=table.scene.pk,
        due_at=due_at or timezone.now() + timedelta(days=2),
        actor=table.gm,
        **kwargs,
    )


def _render_line(deadline, user) -> str:
    request = RequestFactory().get("/")
    request.user = user
    template = Template("{% load deadlines %}{% deadline_line deadline %}")
    return template.render(Context({"deadline": deadline, "request": request}))


# --- the form fields other forms add -------------------------------------------------------


class _WithDeadline(forms.Form):
    def __init__(self, *args, campaign, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields.update(deadlines.deadline_form_fields(campaign))


def test_the_form_fields_take_the_campaigns_wall_time_and_the_reminder(table):
    form = _WithDeadline({"plazo": "2030-12-06T20:00", "recordar": str(2 * 3600)}, campaign=table.campaign)
    assert form.is_valid(), form.errors
    due_at, remind = deadlines.deadline_from(form.cleaned_data)
    assert due_at == datetime(2030, 12, 6, 20, 0, tzinfo=MADRID)
    assert remind == timedelta(hours=2)
    assert "Europe/Madrid" in str(form.fields["plazo"].help_text)
    assert form.fields["recordar"].initial == str(24 * 3600)


def test_the_form_fields_may_be_left_empty(table):
    form = _WithDeadline({"plazo": "", "recordar": ""}, campaign=table.campaign)
    assert form.is_valid(), form.errors
    assert deadlines.deadline_from(form.cleaned_data) == (None, timedelta(hours=24))


def test_the_form_fields_refuse_a_past_date_and_nonsense(table):
    form = _WithDeadline({"plazo": "2001-01-01T10:00", "recordar": "86400"}, campaign=table.campaign)
    assert not form.is_valid()
    assert form.errors["plazo"] == ["El plazo tiene que ser en el futuro."]
    form = _WithDeadline({"plazo": "mañana", "recordar": "7"}, campaign=table.campaign)
    assert not form.is_valid()
    assert form.errors["plazo"] == ["Escribe una fecha y una hora válidas."]
    assert "recordar" in form.errors


# --- how it reads ----------------------------------------------------------------------------


def test_the_line_shows_the_campaigns_time_the_viewers_own_and_the_time_left(table):
    table.player.time_zone = "America/Bogota"
    due = datetime(2026, 12, 4, 20, 0, tzinfo=MADRID)
    deadline = Deadline(campaign=table.campaign, scene=table.scene, kind="scene", target_id=1, due_at=due)
    now = datetime(2026, 12, 2, 10, 0, tzinfo=MADRID)
    parts = deadlines.line_parts(deadline, table.player, now)
    assert parts["when"] == "viernes 4 de diciembre, 20:00 (Europe/Madrid)"
    assert (parts["own_when"], parts["own_zone"]) == ("14:00", "America/Bogota")
    assert parts["left"] == "quedan 2 días"
    later = deadlines.line_parts(deadline, table.player, datetime(2026, 12, 4, 17, 30, tzinfo=MADRID))
    assert later["left"] == "quedan 2 horas"
    passed = deadlines.line_parts(deadline, table.player, datetime(2026, 12, 4, 21, 10, tzinfo=MADRID))
    assert passed["left"] == "venció hace 1 hora"
    assert passed["passed"] is True


@pytest.mark.parametrize(
    "offset",
    [
        timedelta(days=2, hours=3, seconds=7),
        timedelta(days=1),
        timedelta(hours=5, minutes=2),
        timedelta(seconds=59),
        timedelta(0),
        -timedelta(hours=3, minutes=54),
        -timedelta(minutes=59, seconds=30),
        -timedelta(hours=23, minutes=59, seconds=59),
        -timedelta(seconds=10),
        -timedelta(seconds=90),
        -timedelta(minutes=2),
    ],
)
def test_seconds_until_left_changes_is_when_the_time_left_first_reads_differently(offset):
    now = datetime(2026, 12, 2, 10, 0, tzinfo=MADRID)
    deadline = Deadline(kind="scene", target_id=1, due_at=now + offset)
    seconds = deadlines.seconds_until_left_changes(deadline, now)
    assert seconds > 0
    text = deadlines.time_left(deadline.due_at, now)
    # Unchanged until just before (the future side waits a second more, to be
    # sure to land after the change), changed then.
    assert deadlines.time_left(deadline.due_at, now + timedelta(seconds=seconds - 1.5)) == text
    assert deadlines.time_left(deadline.due_at, now + timedelta(seconds=max(0, seconds - 60))) == text
    assert deadlines.time_left(deadline.due_at, now + timedelta(seconds=seconds)) != text


def test_seconds_until_left_changes_is_none_without_a_deadline():
    assert deadlines.seconds_until_left_changes(None) is None


def test_the_line_names_the_day_when_the_viewers_day_is_another():
    due = datetime(2026, 12, 4, 1, 0, tzinfo=MADRID)
    assert deadlines.when_text(due, BOGOTA) == "jueves 3 de diciembre, 19:00 (America/Bogota)"


def test_the_tag_renders_both_zones_and_nothing_for_no_deadline(table):
    table.player.time_zone = "America/Bogota"
    deadline = _scene_deadline(table, due_at=timezone.now() + timedelta(days=3, minutes=5))
    html = _render_line(deadline, table.player)
    local = deadline.due_at.astimezone(MADRID)
    assert f"{local:%H:%M} (Europe/Madrid)" in html
    assert "en tu hora (America/Bogota)" in html
    assert "quedan 3 días" in html
    # Same zone as the campaign: only one time.
    assert "en tu hora" not in _render_line(deadline, table.other)
    assert _render_line(None, table.player).strip() == ""


# --- the scene's kind ------------------------------------------------------------------------


def test_the_scene_kind_is_registered_and_awaits_the_players_who_have_not_written_since(table):
    kind = extensions.deadline_kind(deadlines.SCENE)
    deadline = _scene_deadline(table)
    # Ana wrote before the deadline was set: she is awaited again, as is Bruno.
    assert [u.pk for u in kind.awaited(deadline)] == [table.player.pk, table.other.pk]
    write(table.scene, table.other, "Ya voy.")
    assert [u.pk for u in kind.awaited(deadline)] == [table.player.pk]
    assert kind.url(deadline) == table.scene.get_absolute_url()
    assert kind.options(deadline, table.gm) == [("continue", "Seguir sin esperar")]


def test_a_split_scene_awaits_only_its_chosen_players(table):
    table.scene.everyone = False
    table.scene.save()
    table.scene.participants.set([table.other, table.reader])
    deadline = _scene_deadline(table)
    assert [u.pk for u in extensions.deadline_kind("scene").awaited(deadline)] == [table.other.pk]


def test_a_post_written_for_an_absent_players_character_answers_for_them(table):
    deadline = _scene_deadline(table)
    write(table.scene, table.gm, "Ana abre la puerta.")
    Post.objects.filter(author=table.gm).update(on_behalf_of=table.player)
    assert [u.pk for u in extensions.deadline_kind("scene").awaited(deadline)] == [table.other.pk]


def test_a_closed_scene_awaits_nobody(table):
    deadline = _scene_deadline(table)
    table.scene.status = "locked"
    table.scene.save()
    assert extensions.deadline_kind("scene").awaited(deadline) == []


def test_a_new_deadline_after_a_settled_one_counts_posts_from_now(table):
    old = _scene_deadline(table)
    Deadline.objects.filter(pk=old.pk).update(
        created_at=timezone.now() - timedelta(days=9), settled_at=timezone.now() - timedelta(days=1)
    )
    write(table.scene, table.other, "Escribo entre los dos plazos.")
    new = _scene_deadline(table)
    assert new.pk == old.pk
    assert new.is_open
    assert [u.pk for u in extensions.deadline_kind("scene").awaited(new)] == [table.player.pk, table.other.pk]


def test_moving_an_open_deadline_keeps_when_it_was_set(table):
    first = _scene_deadline(table)
    write(table.scene, table.other, "Contesto.")
    moved = _scene_deadline(table, due_at=timezone.now() + timedelta(days=5))
    assert moved.created_at == first.created_at
    assert [u.pk for u in extensions.deadline_kind("scene").awaited(moved)] == [table.player.pk]


# --- settling ------------------------------------------------------------------------------


def _passed(table) -> Deadline:
    deadline = _scene_deadline(table)
    Deadline.objects.filter(pk=deadline.pk).update(due_at=timezone.now() - timedelta(hours=1))
    deadline.refresh_from_db()
    return deadline


def test_settling_records_logs_and_tells_the_awaited_members(table):
    deadline = _passed(table)
    Notification.objects.all().delete()
    settled = deadlines.deadline_settle(deadline=deadline, key="continue", actor=table.cogm)
    assert settled.settled_by == table.cogm
    assert settled.settlement == "La escena «El vestíbulo» sigue sin esperar más."
    log = ModerationLog.objects.get(action=ModerationAction.DEADLINE_SETTLED)
    assert (log.actor, log.scene, log.reason) == (table.cogm, table.scene, settled.settlement)
    told = Notification.objects.filter(kind=Notification.Kind.DEADLINE)
    assert sorted(told.values_list("user_id", flat=True)) == sorted([table.player.pk, table.other.pk])
    assert "sigue sin esperar más" in told.first().text


def test_a_settled_deadline_cannot_be_settled_again(table):
    deadline = _passed(table)
    deadlines.deadline_settle(deadline=deadline, key="continue", actor=table.gm)
    with pytest.raises(ValidationError) as refused:
        deadlines.deadline_settle(deadline=deadline, key="continue", actor=table.gm)
    assert refused.value.messages == ["Este plazo ya está resuelto o retirado."]
    assert ModerationLog.objects.filter(action=ModerationAction.DEADLINE_SETTLED).count() == 1


def test_a_deadline_not_yet_passed_or_an_unknown_option_is_refused_and_nothing_changes(table):
    deadline = _scene_deadline(table)
    with pytest.raises(ValidationError) as early:
        deadlines.deadline_settle(deadline=deadline, key="continue", actor=table.gm)
    assert early.value.messages == ["Este plazo aún no ha vencido."]
    deadline = _passed(table)
    with pytest.raises(ValidationError) as unknown:
        deadlines.deadline_settle(deadline=deadline, key="inventar", actor=table.gm)
    assert unknown.value.messages == ["Elige una de las opciones que se ofrecen."]
    deadline.refresh_from_db()
    assert deadline.is_open and not ModerationLog.objects.filter(action=ModerationAction.DEADLINE_SETTLED).exists()


def test_a_kind_that_refuses_its_option_changes_nothing(table, monkeypatch):
    def refuse(deadline, key, actor, client_seed=None):
        raise ValidationError("La petición ya se respondió.")

    kind = extensions.deadline_kind("scene")
    monkeypatch.setitem(extensions._deadline_kinds, "scene", type(kind)(**{**kind.__dict__, "settle": refuse}))
    deadline = _passed(table)
    with pytest.raises(ValidationError) as refused:
        deadlines.deadline_settle(deadline=deadline, key="continue", actor=table.gm)
    assert refused.value.messages == ["La petición ya se respondió."]
    deadline.refresh_from_db()
    assert deadline.is_open and deadline.settled_by is None


def test_withdrawing_a_passed_deadline_is_a_recorded_settlement(table):
    deadline = _passed(table)
    settled = deadlines.deadline_settle(deadline=deadline, key=deadlines.WITHDRAW, actor=table.gm)
    assert settled.settlement == "La dirección retiró el plazo de la escena «El vestíbulo»."
    assert ModerationLog.objects.get(action=ModerationAction.DEADLINE_SETTLED).reason == settled.settlement


def test_more_time_moves_it_logs_and_tells_each_member_in_their_zone(table):
    table.player.time_zone = "America/Bogota"
    table.player.save()
    deadline = _passed(table)
    Notification.objects.all().delete()
    new_due = datetime(2031, 1, 10, 20, 0, tzinfo=MADRID)
    moved = deadlines.deadline_extend(deadline=deadline, due_at=new_due, actor=table.gm)
    assert moved.due_at == new_due and moved.passed_at is None and moved.reminded_at is None and moved.is_open
    log = ModerationLog.objects.get(action=ModerationAction.DEADLINE_SETTLED)
    assert "viernes 10 de enero, 20:00 (Europe/Madrid)" in log.reason
    ana = Notification.objects.get(user=table.player)
    bruno = Notification.objects.get(user=table.other)
    assert "viernes 10 de enero, 14:00 (America/Bogota)" in ana.text
    assert "viernes 10 de enero, 20:00 (Europe/Madrid)" in bruno.text


def test_a_reader_or_cogm_is_never_awaited(table):
    add_member(table.campaign, Role.READER)
    deadline = _scene_deadline(table)
    awaited = {u.pk for u in extensions.deadline_kind("scene").awaited(deadline)}
    assert awaited == {table.player.pk, table.other.pk}


def test_the_line_reads_the_campaign_of_a_loaded_scene_without_a_query(table, django_assert_num_queries):
    _scene_deadline(table)
    deadline = Deadline.objects.select_related("scene__campaign").get()
    with django_assert_num_queries(0):
        html = _render_line(deadline, table.player)
    assert "(Europe/Madrid)" in html


# --- two first deadlines at once ---------------------------------------------------------------


def test_a_first_deadline_set_twice_at_once_moves_the_other_ones_row(table, monkeypatch):
    """The race on PostgreSQL: both read no row (nothing to lock), the
    other request inserts first; this one's insert fails on the constraint
    and it moves the row the other one made."""
    real = deadlines._existing
    first = timezone.now() + timedelta(days=1)

    def raced(kind, target_id):
        # The other request inserts between this one's read and its insert.
        Deadline.objects.create(
            campaign=table.campaign,
            scene=table.scene,
            kind=kind,
            target_id=target_id,
            due_at=first,
            created_by=table.gm,
        )
        monkeypatch.setattr(deadlines, "_existing", real)
        return None

    monkeypatch.setattr(deadlines, "_existing", raced)
    later = timezone.now() + timedelta(days=3)
    deadline = _scene_deadline(table, due_at=later)
    assert Deadline.objects.count() == 1
    assert Deadline.objects.get().due_at == later and deadline.due_at == later and deadline.is_open
