"""Joining and leaving: applications, invitations, leaving, removal, roles, handing over."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from campaigns import services
from campaigns.models import (
    Application,
    CampaignStatus,
    Invitation,
    Membership,
    ModerationAction,
    ModerationLog,
    Notification,
    Post,
    Role,
)
from tests.conftest import client_for
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _u(name, t, *args):
    return reverse(f"campaigns:{name}", args=[t.campaign.slug, *args])


# --- applications --------------------------------------------------------------------


def test_outsider_applies_and_the_campaign_page_says_it_is_pending(table):
    client = client_for(table.outsider)
    assert "Solicitar unirme" in client.get(table.campaign.get_absolute_url()).text
    response = client.post(_u("application-create", table), {"text": "Me gusta el terror."})
    assert response.status_code == 302
    assert response.url == table.campaign.get_absolute_url()
    application = Application.objects.get(user=table.outsider)
    assert (application.status, application.text, application.role) == ("pending", "Me gusta el terror.", "player")
    page = client.get(table.campaign.get_absolute_url())
    assert page.context["can_apply"] is False
    assert "Tu solicitud está pendiente." in page.text


def test_a_second_pending_application_is_refused_in_spanish(table):
    client = client_for(table.applicant)
    response = client.post(_u("application-create", table), {"text": "Otra vez."})
    assert response.status_code == 200
    assert response.context["form"].non_field_errors() == ["Ya tienes una solicitud pendiente en esta partida."]


def test_members_cannot_apply_and_campaigns_not_recruiting_refuse_applications(table, private_table):
    assert client_for(table.player).get(_u("application-create", table)).status_code == 403
    table.campaign.status = CampaignStatus.PLAYING
    table.campaign.save()
    response = client_for(table.outsider).get(_u("application-create", table))
    assert response.status_code == 403
    assert client_for(private_table.outsider).get(_u("application-create", private_table)).status_code == 404
    assert client_for(table.outsider).put(_u("application-create", table)).status_code == 405


def test_gm_accepts_an_application_the_applicant_becomes_a_member_and_is_told(table):
    response = client_for(table.gm).post(
        _u("application-decide", table, table.application.pk), {"decision": "accept", "answer": "¡Bienvenida!"}
    )
    assert response.status_code == 302
    assert response.url == _u("dashboard", table)
    table.application.refresh_from_db()
    assert (table.application.status, table.application.decided_by, table.application.answer) == (
        "accepted",
        table.gm,
        "¡Bienvenida!",
    )
    membership = Membership.objects.get(campaign=table.campaign, user=table.applicant)
    assert (membership.role, membership.status) == (Role.PLAYER, Membership.Status.ACTIVE)
    notification = Notification.objects.get(user=table.applicant, kind=Notification.Kind.APPLICATION)
    assert notification.campaign == table.campaign
    entry = ModerationLog.objects.get(action=ModerationAction.APPLICATION_ACCEPTED)
    assert (entry.actor, entry.target_user, entry.reason) == (table.gm, table.applicant, "¡Bienvenida!")


def test_gm_rejects_an_application_and_the_applicant_is_told(table):
    client_for(table.cogm).post(_u("application-decide", table, table.application.pk), {"decision": "reject"})
    table.application.refresh_from_db()
    assert table.application.status == "rejected"
    assert not Membership.objects.filter(user=table.applicant).exists()
    assert Notification.objects.filter(user=table.applicant, kind=Notification.Kind.APPLICATION).count() == 1


def test_deciding_twice_is_refused_with_a_message(table):
    client = client_for(table.gm)
    client.post(_u("application-decide", table, table.application.pk), {"decision": "accept"})
    response = client.post(_u("application-decide", table, table.application.pk), {"decision": "reject"}, follow=True)
    assert "Esta solicitud ya se resolvió." in response.text
    table.application.refresh_from_db()
    assert table.application.status == "accepted"


def test_a_decision_must_be_accept_or_reject(table):
    response = client_for(table.gm).post(
        _u("application-decide", table, table.application.pk), {"decision": "x"}, follow=True
    )
    assert "Elige aceptar o rechazar." in response.text


# --- invitations ----------------------------------------------------------------------


def test_gm_creates_an_invitation_with_expiry_and_a_use_limit(table):
    response = client_for(table.gm).post(
        _u("invitation-create", table), {"role": "reader", "days": 3, "max_uses": 2}, follow=True
    )
    invitation = Invitation.objects.filter(campaign=table.campaign).first()
    assert (invitation.role, invitation.max_uses, invitation.uses) == ("reader", 2, 0)
    assert timedelta(days=3) - (invitation.expires_at - timezone.now()) < timedelta(minutes=1)
    assert invitation.get_absolute_url() in response.text


def test_invitation_with_bad_numbers_is_refused_with_a_message(table):
    response = client_for(table.gm).post(
        _u("invitation-create", table), {"role": "player", "days": 0, "max_uses": 1}, follow=True
    )
    assert "Revisa los datos de la invitación" in response.text
    assert Invitation.objects.filter(campaign=table.campaign).count() == 1


def test_invitation_link_counts_its_uses_and_is_gone_when_used_up(table):
    invitation = services.invitation_create(
        campaign=table.campaign, actor=table.gm, role=Role.READER, days=1, max_uses=2
    )
    url = invitation.get_absolute_url()
    for _ in range(2):
        user = UserFactory()
        response = client_for(user).post(url)
        assert response.status_code == 302
        assert response.url == table.campaign.get_absolute_url()
        assert table.membership(user).role == Role.READER
        assert not Application.objects.filter(user=user).exists()
    invitation.refresh_from_db()
    assert invitation.uses == 2
    response = client_for(UserFactory()).get(url)
    assert response.status_code == 410
    assert "Esta invitación ya no sirve" in response.text
    assert "Ya se usó tantas veces como permitía." in response.text


def test_expired_invitation_shows_a_page_that_says_so(expired_invitation, client):
    response = client.get(expired_invitation.get_absolute_url())
    assert response.status_code == 410
    assert "Esta invitación ya no sirve" in response.text
    assert "Caducó el" in response.text
    newcomer = UserFactory()
    response = client_for(newcomer).post(expired_invitation.get_absolute_url())
    assert response.status_code == 410
    assert not Membership.objects.filter(user=newcomer).exists()
    expired_invitation.refresh_from_db()
    assert expired_invitation.uses == 0


def test_revoked_invitation_says_the_gm_revoked_it(table):
    response = client_for(table.gm).post(_u("invitation-revoke", table, table.invitation.pk))
    assert response.status_code == 302
    page = client_for(table.outsider).get(table.invitation.get_absolute_url())
    assert page.status_code == 410
    assert "La dirección la anuló." in page.text
    assert ModerationLog.objects.filter(action=ModerationAction.INVITATION_REVOKED).count() == 1


def test_invitation_page_asks_anonymous_visitors_to_sign_in(table, client):
    response = client.get(table.invitation.get_absolute_url())
    assert response.status_code == 200
    assert "Para unirte necesitas una cuenta." in response.text
    response = client.post(table.invitation.get_absolute_url(), {"text": "Hola"})
    assert response.url == f"{reverse('accounts:login')}?next={table.invitation.get_absolute_url()}"


def test_invitation_to_a_private_campaign_works_for_an_outsider(private_table):
    client = client_for(private_table.outsider)
    assert client.get(private_table.invitation.get_absolute_url()).status_code == 200
    response = client.post(private_table.invitation.get_absolute_url())
    assert response.url == private_table.campaign.get_absolute_url()
    assert client.get(response.url).status_code == 200


def test_members_opening_an_invitation_are_sent_to_the_campaign(table):
    response = client_for(table.player).get(table.invitation.get_absolute_url())
    assert response.url == table.campaign.get_absolute_url()
    assert client_for(table.player).delete(table.invitation.get_absolute_url()).status_code == 405


# --- leaving, removal, roles, handing over ---------------------------------------------------


def test_member_leaves_and_their_posts_stay(table):
    response = client_for(table.player).post(_u("membership-leave", table))
    assert response.url == reverse("home")
    assert table.membership(table.player).status == Membership.Status.LEFT
    page = client_for(table.other).get(table.scene.get_absolute_url())
    assert "Abro la puerta del sótano." in page.text


def test_gm_cannot_leave_their_own_campaign(table):
    assert client_for(table.gm).post(_u("membership-leave", table)).status_code == 403
    assert client_for(table.player).get(_u("membership-leave", table)).status_code == 405


def test_gm_removes_a_member_posts_stay_attributed_and_access_is_lost(private_table):
    t = private_table
    response = client_for(t.gm).post(_u("member-remove", t, t.membership(t.player).pk), {"reason": "Inactivo"})
    assert response.url == _u("dashboard", t)
    assert t.membership(t.player).status == Membership.Status.REMOVED
    post = Post.objects.get(pk=t.post.pk)
    assert post.author == t.player
    assert "Ana" in client_for(t.gm).get(t.scene.get_absolute_url()).text
    assert client_for(t.player).get(t.campaign.get_absolute_url()).status_code == 404
    assert client_for(t.player).get(t.scene.get_absolute_url()).status_code == 404
    entry = ModerationLog.objects.get(action=ModerationAction.MEMBER_REMOVED)
    assert (entry.target_user, entry.reason) == (t.player, "Inactivo")
    assert Notification.objects.filter(user=t.player, kind=Notification.Kind.MODERATION).count() == 1


def test_removing_needs_a_reason(table):
    response = client_for(table.gm).post(_u("member-remove", table, table.membership(table.player).pk), {}, follow=True)
    assert "Explica el motivo de la expulsión." in response.text
    assert table.membership(table.player).status == Membership.Status.ACTIVE


def test_a_cogm_cannot_remove_another_cogm(table):
    second = UserFactory()
    membership = Membership.objects.create(campaign=table.campaign, user=second, role=Role.COGM)
    response = client_for(table.cogm).post(_u("member-remove", table, membership.pk), {"reason": "x"})
    assert response.status_code == 403


def test_gm_changes_a_members_role(table):
    response = client_for(table.cogm).post(
        _u("member-role", table, table.membership(table.other).pk), {"role": "reader"}
    )
    assert response.status_code == 302
    assert table.membership(table.other).role == Role.READER
    entry = ModerationLog.objects.get(action=ModerationAction.MEMBER_ROLE)
    assert (entry.target_user, entry.reason) == (table.other, "Lector")


def test_only_the_gm_names_cogms(table):
    url = _u("member-role", table, table.membership(table.other).pk)
    assert client_for(table.cogm).post(url, {"role": "cogm"}).status_code == 403
    assert client_for(table.gm).post(url, {"role": "cogm"}).status_code == 302
    assert table.membership(table.other).role == Role.COGM


def test_handing_over_makes_the_member_gm_and_the_old_gm_a_cogm(table):
    response = client_for(table.gm).post(
        _u("campaign-hand-over", table), {"membership": table.membership(table.other).pk}
    )
    assert response.url == table.campaign.get_absolute_url()
    table.campaign.refresh_from_db()
    assert table.campaign.gm == table.other
    old = table.membership(table.gm)
    assert (old.role, old.status) == (Role.COGM, Membership.Status.ACTIVE)
    assert not Membership.objects.filter(campaign=table.campaign, user=table.other).exists()
    assert client_for(table.other).get(_u("dashboard", table)).status_code == 200
    assert client_for(table.gm).post(_u("campaign-hand-over", table), {"membership": old.pk}).status_code == 403
    entry = ModerationLog.objects.get(action=ModerationAction.CAMPAIGN_HANDED_OVER)
    assert (entry.actor, entry.target_user) == (table.gm, table.other)


def test_handing_over_to_someone_not_a_member_is_a_404(table):
    client = client_for(table.gm)
    assert client.post(_u("campaign-hand-over", table), {"membership": "abc"}).status_code == 404
    assert client.post(_u("campaign-hand-over", table), {}).status_code == 404
    table.campaign.refresh_from_db()
    assert table.campaign.gm == table.gm
