"""Whose turn it is (campaigns.waiting): the forum's own items, the layers
above's through their providers, private items, who is away, the digest's
list, and the direction's nudge with its limit."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from campaigns import absences, deadlines, extensions, services, waiting
from campaigns.extensions import Awaited
from campaigns.models import (
    Absence,
    Membership,
    ModerationAction,
    ModerationLog,
    Notification,
    Nudge,
    Post,
    Role,
    Scene,
)
from campaigns.permissions import campaign_access
from tests.factories import CampaignFactory, add_member, make_scene, write

pytestmark = pytest.mark.django_db


def _who(items) -> list[tuple[int, str]]:
    return [(item.user_id, item.kind) for item in items]


def _scene_deadline(table, hours=30):
    return deadlines.set_deadline(
        campaign=table.campaign,
        scene=table.scene,
        kind=deadlines.SCENE,
        target_id=table.scene.pk,
        due_at=timezone.now() + timedelta(hours=hours),
        actor=table.gm,
    )


def test_the_players_who_have_not_written_since_the_directions_last_post_are_awaited(table):
    assert waiting.waiting_in([table.campaign]) == []  # the direction has not written yet
    write(table.scene, table.gm, "La puerta cruje.")
    items = waiting.waiting_in([table.campaign])
    assert _who(items) == [(table.player.pk, "post"), (table.other.pk, "post")]
    assert items[0].text == "Escribir en «El vestíbulo»"
    assert items[0].url == table.scene.get_absolute_url()
    assert items[0].deadline is None
    write(table.scene, table.player, "Entro.")
    assert _who(waiting.waiting_in([table.campaign])) == [(table.other.pk, "post")]


def test_a_cogms_post_counts_and_a_whisper_does_not(table):
    write(table.scene, table.player, "Entro.")
    write(table.scene, table.other, "Yo también.")
    write(table.scene, table.gm, "Solo para Ana.", recipients=Post.Recipients.CHOSEN, chosen=[table.player])
    assert waiting.waiting_in([table.campaign]) == []
    write(table.scene, table.cogm, "El suelo tiembla.")
    assert _who(waiting.waiting_in([table.campaign])) == [(table.player.pk, "post"), (table.other.pk, "post")]


def test_closed_and_off_game_scenes_and_campaigns_that_do_not_ask_wait_for_nobody(table):
    offgame = Scene.objects.get(campaign=table.campaign, is_offgame=True)
    write(offgame, table.gm, "¿Quedamos el jueves?")
    locked = make_scene(table.campaign, title="Cerrada")
    write(locked, table.gm, "Fin.")
    services.scene_update(
        scene=locked,
        actor=table.gm,
        title="Cerrada",
        description="",
        everyone=True,
        participants=[],
        status=Scene.Status.LOCKED,
        position=0,
    )
    assert waiting.waiting_in([table.campaign]) == []
    write(table.scene, table.gm, "La puerta cruje.")
    table.campaign.wait_for_posts = False
    table.campaign.save()
    assert waiting.waiting_in([table.campaign]) == []


def test_a_scene_deadline_awaits_and_is_attached_even_without_wait_for_posts(table):
    table.campaign.wait_for_posts = False
    table.campaign.save()
    deadline = _scene_deadline(table)
    items = waiting.waiting_in([table.campaign])
    assert _who(items) == [(table.player.pk, "post"), (table.other.pk, "post")]
    assert [item.deadline.pk for item in items] == [deadline.pk, deadline.pk]
    assert items[0].deadline.campaign is table.campaign
    write(table.scene, table.player, "Llego a tiempo.")
    assert _who(waiting.waiting_in([table.campaign])) == [(table.other.pk, "post")]


def test_a_split_scene_waits_only_for_its_chosen_players(table):
    split = make_scene(table.campaign, title="Aparte", everyone=False, participants=[table.other])
    write(split, table.gm, "Solo tú lo ves.")
    assert _who(waiting.waiting_in([table.campaign], scene_ids=[split.pk])) == [(table.other.pk, "post")]


def test_providers_add_theirs_and_private_items_only_reach_the_awaited_and_the_direction(table, monkeypatch):
    def provider(campaigns, scene_ids, user_id):
        return [
            Awaited(
                user_id=table.player.pk, scene_id=table.scene.pk, kind="request", text="Tirada", url="/t", private=True
            ),
            Awaited(user_id=table.other.pk, scene_id=table.scene.pk, kind="turn", text="Turno", url="/c"),
        ]

    monkeypatch.setattr(extensions, "_waiting", [provider])
    as_gm = campaign_access(table.cogm, table.campaign)
    as_ana = campaign_access(table.player, table.campaign)
    as_bruno = campaign_access(table.other, table.campaign)
    assert len(waiting.waiting_in([table.campaign], viewer_access=as_gm)) == 2
    assert len(waiting.waiting_in([table.campaign], viewer_access=as_ana)) == 2
    assert _who(waiting.waiting_in([table.campaign], viewer_access=as_bruno)) == [(table.other.pk, "turn")]
    assert _who(waiting.waiting_in([table.campaign], user_id=table.player.pk)) == [(table.player.pk, "request")]


def test_items_with_a_deadline_come_first_soonest_first(table, monkeypatch):
    deadline = _scene_deadline(table, hours=48)
    late = make_scene(table.campaign, title="Otra")
    soon = deadlines.set_deadline(
        campaign=table.campaign,
        scene=late,
        kind=deadlines.SCENE,
        target_id=late.pk,
        due_at=timezone.now() + timedelta(hours=5),
        actor=table.gm,
    )
    write(table.scene, table.player, "Respondo.")
    items = waiting.waiting_in([table.campaign], user_id=table.player.pk)
    assert [item.deadline.pk for item in items] == [soon.pk]
    items = waiting.waiting_in([table.campaign], user_id=table.other.pk)
    assert [item.deadline.pk for item in items] == [soon.pk, deadline.pk]


def _campaign_with_waiting(user, n: int):
    campaign = CampaignFactory(title=f"Partida {n}")
    Membership.objects.create(campaign=campaign, user=user, role=Role.PLAYER)
    other = add_member(campaign)
    for title in ("Uno", "Dos"):
        scene = make_scene(campaign, title=title)
        write(scene, campaign.gm, "Os toca.")
        write(scene, other, "Voy.")
    split = make_scene(campaign, title="Aparte", everyone=False, participants=[user])
    write(split, campaign.gm, "Solo tú.")
    deadlines.set_deadline(
        campaign=campaign,
        scene=split,
        kind=deadlines.SCENE,
        target_id=split.pk,
        due_at=timezone.now() + timedelta(days=n + 1),
        actor=campaign.gm,
    )
    Absence.objects.create(
        campaign=campaign,
        user=user,
        starts_on=absences.campaign_today(campaign),
        ends_on=absences.campaign_today(campaign) + timedelta(days=2),
    )
    return campaign


def test_the_number_of_queries_does_not_grow_with_campaigns_scenes_or_items(db, django_assert_num_queries):
    from tests.factories import UserFactory

    ana = UserFactory()
    one = [_campaign_with_waiting(ana, 1)]
    # Every provider the layers above registered takes part: the same count for 1 and 8 campaigns.
    with CaptureQueriesContext(connection) as few:
        found = waiting.rows(waiting.waiting_in(one, user_id=ana.pk), one)
    assert len(found) == 3 and all(row.away is not None for row in found)
    eight = one + [_campaign_with_waiting(ana, n) for n in range(2, 9)]
    with django_assert_num_queries(len(few.captured_queries)):
        found = waiting.rows(waiting.waiting_in(eight, user_id=ana.pk), eight)
    assert len(found) == 24


def test_the_forums_own_part_takes_eight_queries(db, django_assert_num_queries, monkeypatch):
    from tests.factories import UserFactory

    monkeypatch.setattr(extensions, "_waiting", [])
    ana = UserFactory()
    eight = [_campaign_with_waiting(ana, n) for n in range(1, 9)]
    # Deadlines, scenes, players, chosen members, last posts; users, scenes, absences.
    with django_assert_num_queries(8):
        found = waiting.rows(waiting.waiting_in(eight, user_id=ana.pk), eight)
    assert len(found) == 24


def test_rows_group_a_members_items_and_say_who_is_away(table, monkeypatch):
    write(table.scene, table.gm, "Os toca.")

    def provider(campaigns, scene_ids, user_id):
        return [Awaited(user_id=table.player.pk, scene_id=table.scene.pk, kind="request", text="Tirada", url="/t")]

    monkeypatch.setattr(extensions, "_waiting", [provider])
    absence = Absence.objects.create(
        campaign=table.campaign,
        user=table.player,
        starts_on=absences.campaign_today(table.campaign) - timedelta(days=1),
        ends_on=absences.campaign_today(table.campaign),
        note="De viaje",
    )
    found = waiting.rows(waiting.waiting_in([table.campaign]), [table.campaign])
    assert [(row.user.pk, [i.kind for i in row.items]) for row in found] == [
        (table.player.pk, ["post", "request"]),
        (table.other.pk, ["post"]),
    ]
    assert found[0].away == absence and found[1].away is None


def test_a_member_back_from_an_absence_is_no_longer_shown_away(table):
    write(table.scene, table.gm, "Os toca.")
    today = absences.campaign_today(table.campaign)
    absence = Absence.objects.create(
        campaign=table.campaign,
        user=table.player,
        starts_on=today - timedelta(days=1),
        ends_on=today + timedelta(days=3),
    )
    found = waiting.rows(waiting.waiting_in([table.campaign]), [table.campaign])
    assert [row.away for row in found] == [absence, None]
    # «Ya he vuelto»: the absence now ends today, and its return is noticed.
    absences.absence_return(absence=absence)
    assert waiting.away_in([table.campaign], [table.player.pk]) == {}
    found = waiting.rows(waiting.waiting_in([table.campaign]), [table.campaign])
    assert [row.away for row in found] == [None, None]


def test_the_digest_leaves_out_the_campaigns_an_absence_holds(table):
    write(table.scene, table.gm, "Os toca.")
    assert [title for title, _text, _link in waiting.digest_items(table.player)] == ["La mansión"]
    assert waiting.digest_items(table.player, held_campaign_ids={table.campaign.pk}) == []


def test_the_digest_lists_what_waits_with_the_deadline_in_the_users_zone(table, settings):
    settings.SITE_URL = "https://hitos.example"
    table.player.time_zone = "America/Bogota"
    table.player.save()
    deadline = _scene_deadline(table)
    items = waiting.digest_items(table.player)
    when = deadlines.when_text(deadline.due_at, deadlines.ZoneInfo("America/Bogota"))
    assert items == [
        (
            "La mansión",
            f"Escribir en «El vestíbulo» — plazo: {when}, queda 1 día",
            f"https://hitos.example{table.scene.get_absolute_url()}",
        )
    ]
    assert waiting.digest_items(table.reader) == []


def test_a_finished_campaign_waits_for_nobody_at_home(table):
    write(table.scene, table.gm, "Os toca.")
    table.campaign.status = "finished"
    table.campaign.save()
    assert waiting.digest_items(table.player) == []


# --- nudges ------------------------------------------------------------------------------


def test_a_nudge_notifies_records_and_logs(table):
    write(table.scene, table.gm, "Os toca.")
    nudge = waiting.nudge_send(scene=table.scene, user=table.other, actor=table.cogm)
    assert (nudge.user, nudge.sent_by, nudge.scene) == (table.other, table.cogm, table.scene)
    told = Notification.objects.get(kind=Notification.Kind.NUDGE)
    assert (told.user, told.url) == (table.other, table.scene.get_absolute_url())
    assert told.text == "La dirección te espera en «El vestíbulo» (La mansión)."
    log = ModerationLog.objects.get(action=ModerationAction.NUDGE)
    assert (log.actor, log.target_user, log.scene) == (table.cogm, table.other, table.scene)


def test_one_nudge_per_scene_and_member_every_12_hours(table):
    write(table.scene, table.gm, "Os toca.")
    waiting.nudge_send(scene=table.scene, user=table.other, actor=table.gm)
    with pytest.raises(ValidationError) as refused:
        waiting.nudge_send(scene=table.scene, user=table.other, actor=table.gm)
    assert refused.value.messages[0].startswith(
        "Ya le diste un toque a Bruno en esta escena. Podrás darle otro a partir del "
    )
    assert Nudge.objects.count() == 1
    # Another member in the same scene may be nudged; after 12 hours, Bruno again.
    waiting.nudge_send(scene=table.scene, user=table.player, actor=table.gm)
    Nudge.objects.update(created_at=timezone.now() - timedelta(hours=12, minutes=1))
    waiting.nudge_send(scene=table.scene, user=table.other, actor=table.gm)
    assert Nudge.objects.count() == 3


def test_a_member_the_scene_does_not_wait_for_cannot_be_nudged(table):
    with pytest.raises(ValidationError) as refused:
        waiting.nudge_send(scene=table.scene, user=table.reader, actor=table.gm)
    assert refused.value.messages == ["Esta escena no espera nada de La Lectora."]
    assert not Nudge.objects.exists() and not Notification.objects.filter(kind="nudge").exists()
