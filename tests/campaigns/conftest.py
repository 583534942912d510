"""Fixtures for the campaign view, permission, service and XSS tests.

``table`` is the forum's own world, not the table's of tests/conftest.py: a
campaign made through ``campaigns.services`` (so it has its off-game scene)
with one person of every standing (GM, co-GM, reader, two players, an
outsider, an applicant), an open scene, a post by ``player`` written through
the service and the pending records moderation needs (an application, a
report, an invitation), and no characters or rolls. The permission matrix
checks every URL against each of those standings in a public and a private
campaign. It is built from the shared factories (tests/factories.py); the
people have the names of the shared world's. Tests build anything else they
need through the services.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from accounts.models import User
from campaigns import services
from campaigns.models import Application, Campaign, Invitation, Membership, Post, PostReport, Role, Scene, Visibility
from tests.conftest import client_for
from tests.factories import UserFactory, add_member, write


@dataclass
class Table:
    campaign: Campaign
    scene: Scene
    post: Post
    gm: User
    cogm: User
    reader: User
    player: User
    other: User
    outsider: User
    applicant: User
    application: Application
    invitation: Invitation
    report: PostReport

    def user(self, standing: str) -> User | None:
        return None if standing == "anonymous" else getattr(self, standing)

    def client(self, standing: str) -> Client:
        return client_for(self.user(standing))

    def membership(self, user: User) -> Membership:
        return Membership.objects.get(campaign=self.campaign, user=user)


def make_table(visibility: str = Visibility.PUBLIC) -> Table:
    gm = UserFactory(display_name="La Directora")
    campaign = services.campaign_create(gm=gm, title="La mansión", system="hitos", visibility=visibility)
    cogm = add_member(campaign, Role.COGM, display_name="El Codirector")
    reader = add_member(campaign, Role.READER, display_name="La Lectora")
    player = add_member(campaign, Role.PLAYER, display_name="Ana")
    other = add_member(campaign, Role.PLAYER, display_name="Bruno")
    outsider = UserFactory(display_name="Forastera")
    applicant = UserFactory(display_name="Aspirante")
    scene = services.scene_create(campaign=campaign, title="El vestíbulo", description="Huele a polvo.")
    post = write(scene, player, "Abro la puerta del sótano.")
    application = services.application_create(campaign=campaign, user=applicant, text="Quiero jugar.")
    invitation = services.invitation_create(campaign=campaign, actor=gm, role=Role.PLAYER, days=7, max_uses=3)
    report = services.post_report(post=post, reporter=other, reason="Se adelanta a la escena.")
    return Table(
        campaign=campaign,
        scene=scene,
        post=post,
        gm=gm,
        cogm=cogm,
        reader=reader,
        player=player,
        other=other,
        outsider=outsider,
        applicant=applicant,
        application=application,
        invitation=invitation,
        report=report,
    )


@pytest.fixture
def table(db) -> Table:
    return make_table(Visibility.PUBLIC)


@pytest.fixture
def private_table(db) -> Table:
    return make_table(Visibility.PRIVATE)


@pytest.fixture
def expired_invitation(table) -> Invitation:
    return Invitation.objects.create(
        campaign=table.campaign,
        created_by=table.gm,
        expires_at=timezone.now() - timedelta(hours=1),
    )
