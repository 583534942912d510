"""campaigns.services: the writes, their checks and side effects, and the
journeys of issue 4 from one end to the other."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse

from campaigns import services
from campaigns.models import (
    Application,
    Invitation,
    Membership,
    ModerationAction,
    ModerationLog,
    Notification,
    Post,
    PostRevision,
    Role,
    Scene,
    SceneRead,
)
from campaigns.permissions import campaign_access
from tests.conftest import client_for
from tests.factories import CharacterFactory, UserFactory, write

pytestmark = pytest.mark.django_db


def _access(t, user):
    return campaign_access(user, t.campaign)


# --- post_create and post_edit ----------------------------------------------------------


def test_post_create_refuses_a_locked_scene_for_a_player(table):
    table.scene.status = Scene.Status.LOCKED
    with pytest.raises(PermissionDenied):
        services.post_create(access=_access(table, table.player), scene=table.scene, voice="ooc", body="Hola")


def test_post_create_refuses_an_npc_voice_to_a_player(table):
    with pytest.raises(PermissionDenied):
        services.post_create(
            access=_access(table, table.player), scene=table.scene, voice="npc", npc_name="X", body="Hola"
        )


@pytest.mark.parametrize("case", ["someone_elses", "not_approved", "npc_sheet", "none"])
def test_post_create_refuses_a_character_that_is_not_the_authors_approved_one(table, case):
    character = {
        "someone_elses": lambda: CharacterFactory(campaign=table.campaign, owner=table.other),
        "not_approved": lambda: CharacterFactory(campaign=table.campaign, owner=table.player, status="draft"),
        "npc_sheet": lambda: CharacterFactory(campaign=table.campaign, owner=table.player, kind="npc"),
        "none": lambda: None,
    }[case]()
    with pytest.raises(PermissionDenied):
        services.post_create(
            access=_access(table, table.player), scene=table.scene, voice="character", character=character, body="Hola"
        )


def test_post_create_marks_the_scene_read_for_its_author_and_notifies_the_others(table):
    post = write(table.scene, table.other, "Hola a todos.")
    assert SceneRead.objects.get(user=table.other, scene=table.scene).last_post_id == post.pk
    notified = set(Notification.objects.filter(post=post).values_list("user__username", flat=True))
    assert table.other.username not in notified
    assert table.gm.username in notified


def test_post_edit_keeps_every_previous_version(table):
    access = _access(table, table.player)
    services.post_edit(access=access, post=table.post, body="Dos.", note="Nota dos.")
    services.post_edit(access=access, post=table.post, body="Tres.", note="")
    assert list(PostRevision.objects.filter(post=table.post).values_list("body", "note")) == [
        ("Dos.", "Nota dos."),
        ("Abro la puerta del sótano.", ""),
    ]


def test_post_edit_by_someone_else_than_author_or_gm_is_refused(table):
    with pytest.raises(PermissionDenied):
        services.post_edit(access=_access(table, table.other), post=table.post, body="Mío.", note="")
    assert not PostRevision.objects.exists()


def test_post_show_logs_and_keeps_the_reason_it_was_hidden(table):
    services.post_hide(post=table.post, actor=table.gm, reason="Spoiler")
    services.post_show(post=table.post, actor=table.gm)
    table.post.refresh_from_db()
    assert (table.post.hidden, table.post.hidden_reason) == (False, "Spoiler")
    assert list(ModerationLog.objects.values_list("action", flat=True)) == [
        ModerationAction.POST_SHOWN,
        ModerationAction.POST_HIDDEN,
    ]


# --- applications and invitations -------------------------------------------------------------


def test_joining_by_invitation_takes_one_use_and_its_role_and_tells_the_direction(table):
    invitation = services.invitation_create(
        campaign=table.campaign, actor=table.gm, role=Role.READER, days=1, max_uses=1
    )
    membership = services.invitation_accept(invitation=invitation, user=table.outsider)
    invitation.refresh_from_db()
    assert (invitation.uses, membership.role, membership.status) == (1, Role.READER, Membership.Status.ACTIVE)
    assert table.membership(table.outsider) == membership
    told = Notification.objects.filter(kind=Notification.Kind.APPLICATION, text__contains="se ha unido")
    assert {(n.user, n.text, n.url) for n in told} == {
        (
            director,
            "Forastera se ha unido a «La mansión» con una invitación (papel: Lector).",
            "/partidas/la-mansion/direccion/",
        )
        for director in (table.gm, table.cogm)
    }
    with pytest.raises(ValidationError) as error:
        services.invitation_accept(invitation=invitation, user=UserFactory())
    assert (error.value.code, error.value.messages) == ("unusable", ["Esta invitación ya no se puede usar."])


def test_a_refused_join_spends_no_invitation_use(table):
    invitation = services.invitation_create(
        campaign=table.campaign, actor=table.gm, role=Role.PLAYER, days=1, max_uses=3
    )
    for user in (table.gm, table.player, table.cogm):
        with pytest.raises(ValidationError) as error:
            services.invitation_accept(invitation=invitation, user=user)
        assert (error.value.code, error.value.messages) == ("member", ["Ya formas parte de esta partida."])
    services.member_remove(membership=table.membership(table.other), actor=table.gm, reason="Ausente")
    with pytest.raises(ValidationError) as error:
        services.invitation_accept(invitation=invitation, user=table.other)
    assert error.value.code == "removed"
    invitation.refresh_from_db()
    assert invitation.uses == 0
    assert table.membership(table.other).status == Membership.Status.REMOVED


def test_accepting_a_member_who_had_left_makes_them_active_again(table):
    membership = table.membership(table.player)
    services.membership_leave(membership=membership)
    application = services.application_create(campaign=table.campaign, user=table.player, text="Vuelvo")
    services.application_decide(application=application, actor=table.gm, accept=True)
    membership.refresh_from_db()
    assert (membership.status, membership.ended_at) == (Membership.Status.ACTIVE, None)


def test_handing_over_to_a_member_who_left_is_refused(table):
    membership = table.membership(table.other)
    services.membership_leave(membership=membership)
    with pytest.raises(ValidationError):
        services.campaign_hand_over(campaign=table.campaign, actor=table.gm, membership=membership)


# --- journeys ---------------------------------------------------------------------------------


def test_journey_invitation_application_post_hide_and_whisper(db):
    """Issue 4, item 13, with the Django client: the GM creates a campaign and a
    scene and makes an invitation; the players follow it and are in at once
    (issue 14: the link is the GM's consent), the GM told of each; the
    player posts with an out-of-character note; the GM hides it with a
    reason; the player sees the placeholder and the reason; a post addressed
    only to the GM is invisible to another player."""
    gm, ana, bruno = UserFactory(display_name="DJ"), UserFactory(display_name="Ana"), UserFactory(display_name="Bruno")
    gm_client, ana_client, bruno_client = client_for(gm), client_for(ana), client_for(bruno)
    gm_client.post(
        reverse("campaigns:campaign-create"),
        {"title": "Niebla", "system": "hitos", "visibility": "private", "status": "recruiting"},
    )
    slug = "niebla"
    gm_client.post(reverse("campaigns:scene-create", args=[slug]), {"title": "El muelle", "everyone": "on"})
    scene = Scene.objects.get(title="El muelle")
    gm_client.post(reverse("campaigns:invitation-create", args=[slug]), {"role": "player", "days": 7, "max_uses": 2})
    invitation = Invitation.objects.get(campaign__slug=slug)

    for user_client in (ana_client, bruno_client):
        response = user_client.post(invitation.get_absolute_url())
        assert response.status_code == 302
        assert response.url == reverse("campaigns:campaign-detail", args=[slug])
    assert not Application.objects.filter(campaign__slug=slug).exists()
    assert set(
        Notification.objects.filter(user=gm, kind=Notification.Kind.APPLICATION).values_list("text", flat=True)
    ) == {
        "Ana se ha unido a «Niebla» con una invitación (papel: Jugador).",
        "Bruno se ha unido a «Niebla» con una invitación (papel: Jugador).",
    }
    assert ana_client.get(scene.get_absolute_url()).status_code == 200

    post_url = reverse("table:post-create", args=[slug, scene.pk])
    ana_client.post(
        post_url, {"voice": "ooc", "body": "Miro el agua.", "note": "Vuelvo el lunes.", "recipients": "all"}
    )
    post = Post.objects.get(author=ana)
    assert "Vuelvo el lunes." in bruno_client.get(scene.get_absolute_url()).text

    gm_client.post(reverse("campaigns:post-hide", args=[post.pk]), {"reason": "Fuera de tono"})
    for viewer, sees_text in ((ana_client, True), (bruno_client, False)):
        page = viewer.get(scene.get_absolute_url()).text
        assert "Mensaje oculto por la dirección. Motivo: Fuera de tono" in page
        assert ("Miro el agua." in page) is sees_text

    ana_client.post(post_url, {"voice": "ooc", "body": "Solo para ti, DJ.", "recipients": "gm"})
    whisper = Post.objects.get(body="Solo para ti, DJ.")
    assert "Solo para ti, DJ." not in bruno_client.get(scene.get_absolute_url()).text
    assert bruno_client.get(whisper.get_absolute_url()).status_code == 404
    assert "Solo para ti, DJ." in gm_client.get(scene.get_absolute_url()).text


def test_journey_a_removed_member_keeps_their_posts_but_loses_the_campaign(private_table):
    t = private_table
    client_for(t.gm).post(
        reverse("campaigns:member-remove", args=[t.campaign.slug, t.membership(t.player).pk]), {"reason": "Ausente"}
    )
    player = client_for(t.player)
    assert player.get(t.campaign.get_absolute_url()).status_code == 404
    assert player.get(t.post.get_absolute_url()).status_code == 404
    assert t.campaign not in player.get(reverse("home")).context["my_campaigns"]
    page = client_for(t.other).get(t.scene.get_absolute_url()).text
    assert "Abro la puerta del sótano." in page
    assert "Ana" in page
