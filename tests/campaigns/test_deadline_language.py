"""Deadlines in the reader's language and the campaign's zone (second review
of issue 17): the notices of a deadline that passed, was settled or was
withdrawn name its kind in each language of the site, and the settle page
gives the time it was settled in the campaign's zone, named."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.urls import reverse
from django.utils import timezone

from campaigns import deadlines
from campaigns.models import Deadline, Notification

pytestmark = pytest.mark.django_db


def _scene_deadline(table) -> Deadline:
    return deadlines.set_deadline(
        campaign=table.campaign,
        scene=table.scene,
        kind=deadlines.SCENE,
        target_id=table.scene.pk,
        # At half past, so no clock time on a page can be mistaken for a settled time on the hour.
        due_at=(timezone.now() + timedelta(days=2)).replace(minute=30, second=0, microsecond=0),
        actor=table.gm,
    )


def _english(*users) -> None:
    for user in users:
        user.language = "en"
        user.save(update_fields=["language"])


def _told(user) -> Notification:
    return Notification.objects.filter(user=user, kind=Notification.Kind.DEADLINE).latest("pk")


def test_the_directions_notice_of_a_passed_deadline_names_its_kind_in_english(table):
    _english(table.gm)
    deadline = _scene_deadline(table)
    Notification.objects.all().delete()
    assert deadlines.sweep(now=deadline.due_at + timedelta(minutes=1)) >= 1
    notice = _told(table.gm)
    assert notice.texts["en"] == (
        "The deadline for the scene “El vestíbulo” (La mansión) has passed. Decide what to do."
    )
    assert notice.texts["es"] == "Ha vencido el plazo de la escena «El vestíbulo» (La mansión). Decide qué hacer."


def test_withdrawing_a_passed_deadline_tells_each_member_in_their_language(table):
    _english(table.player)
    deadline = _scene_deadline(table)
    Notification.objects.all().delete()
    deadlines.deadline_settle(
        deadline=deadline, key=deadlines.WITHDRAW, actor=table.gm, now=deadline.due_at + timedelta(hours=1)
    )
    notice = _told(table.player)
    assert notice.texts["en"] == (
        "The GM settled the deadline for the scene “El vestíbulo”: "
        "The GM withdrew the deadline for the scene “El vestíbulo”."
    )
    assert "la escena" not in notice.texts["en"]
    # The record stays in the direction's language.
    deadline.refresh_from_db()
    assert deadline.settlement == "La dirección retiró el plazo de la escena «El vestíbulo»."


def test_settling_a_passed_deadline_names_its_kind_in_english(table):
    _english(table.player)
    deadline = _scene_deadline(table)
    Notification.objects.all().delete()
    deadlines.deadline_settle(
        deadline=deadline, key="continue", actor=table.gm, now=deadline.due_at + timedelta(hours=1)
    )
    assert _told(table.player).texts["en"].startswith("The GM settled the deadline for the scene “El vestíbulo”: ")


def test_withdrawing_a_deadline_before_it_passes_tells_each_member_in_their_language(table):
    _english(table.player)
    deadline = _scene_deadline(table)
    Notification.objects.all().delete()
    deadlines.deadline_withdraw(deadline=deadline, actor=table.gm)
    notice = _told(table.player)
    assert notice.texts["en"] == "The GM withdrew the deadline for the scene “El vestíbulo” (La mansión)."
    assert notice.texts["es"] == "La dirección retiró el plazo de la escena «El vestíbulo» (La mansión)."


@pytest.mark.parametrize("hx", [False, True])
def test_the_settle_page_says_when_it_was_settled_in_the_campaigns_zone(table, hx):
    table.campaign.time_zone = "America/Bogota"
    table.campaign.save(update_fields=["time_zone"])
    deadline = _scene_deadline(table)
    settled_at = datetime(2030, 1, 5, 15, 0, tzinfo=UTC)  # 10:00 in Bogotá, 16:00 in Madrid
    Deadline.objects.filter(pk=deadline.pk).update(
        settled_at=settled_at, settled_by=table.gm, settlement="Sigue sin esperar más."
    )
    url = reverse("campaigns:deadline-settle", args=[table.campaign.slug, deadline.pk])
    response = table.client("gm").get(url, **({"HTTP_HX_REQUEST": "true"} if hx else {}))
    html = response.content.decode()
    when = deadlines.when_text(settled_at, ZoneInfo("America/Bogota"))
    assert when.endswith("10:00 (America/Bogota)")
    assert f"Resuelto el {when}:" in html
    assert "16:00" not in html
    assert ("<html" in html) is not hx
