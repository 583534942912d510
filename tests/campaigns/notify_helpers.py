"""Small builders shared by the notification, digest and feed tests."""

from django.core.mail.backends.base import BaseEmailBackend

from campaigns.markup import render_markdown
from campaigns.models import Membership, Post, Role, Scene
from tests.factories import UserFactory


def member(campaign, *, role=Role.PLAYER, status=Membership.Status.ACTIVE, **user_fields):
    user = UserFactory(**user_fields)
    Membership.objects.create(campaign=campaign, user=user, role=role, status=status)
    return user


def scene(campaign, *, title="La posada", everyone=True, participants=()):
    scene = Scene.objects.create(campaign=campaign, title=title, everyone=everyone)
    scene.participants.set(participants)
    return scene


def post(scene, author, *, body="Entro en la posada.", recipients=Post.Recipients.ALL, chosen=(), **fields):
    fields.setdefault("voice", Post.Voice.OOC)
    created = Post.objects.create(
        scene=scene, author=author, body=body, body_html=render_markdown(body), recipients=recipients, **fields
    )
    created.chosen_recipients.set(chosen)
    return created


class BrokenBackend(BaseEmailBackend):
    """A mail backend whose server is always down."""

    def send_messages(self, email_messages):
        raise ConnectionRefusedError("mail server down")
