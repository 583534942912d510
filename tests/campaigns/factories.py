"""Builders for the campaign view, permission, service and XSS tests.

``make_table`` is a small campaign with one person of every standing (GM, co-GM,
reader, two players, an outsider), an open scene, a post by ``player`` and
the pending records moderation needs (an application, a report, an
invitation). Tests build anything else they need through the services.
"""

from __future__ import annotations

from dataclasses import dataclass

import factory
from django.test import Client

from accounts.models import User
from campaigns import services
from campaigns.models import Application, Campaign, Invitation, Membership, Post, PostReport, Role, Scene, Visibility
from campaigns.permissions import campaign_access
from sheets.models import Character
from tests.factories import UserFactory


class CharacterFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Character

    name = factory.Sequence(lambda n: f"Personaje {n}")
    status = Character.Status.APPROVED


def add_member(campaign: Campaign, role: str = Role.PLAYER, **user_fields) -> User:
    user = UserFactory(**user_fields)
    Membership.objects.create(campaign=campaign, user=user, role=role)
    return user


def write(scene: Scene, author: User, body: str = "Entro en la posada.", **fields) -> Post:
    """A post written through the service, as the author."""
    fields.setdefault("voice", Post.Voice.OOC)
    access = campaign_access(author, scene.campaign)
    return services.post_create(access=access, scene=scene, body=body, **fields)


def client_for(user: User | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


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
