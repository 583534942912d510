"""What HITOS tells the players (through the forum's ``campaigns.notify``):
activations against their rolls, narrative elements, horror to face, harm
applied to their characters."""

from __future__ import annotations

from django.urls import reverse
from django.utils.translation import gettext as _

from campaigns import notify
from campaigns.models import Notification, Post


def activation_pending(activation) -> list[Notification]:
    """Tell the owner of a roll that an aspect was activated against it (H18, H25)."""
    table_roll = activation.table_roll
    values = {
        "aspect": activation.aspect_text,
        "who": activation.activator_character.name if activation.activator_character else "",
        "purpose": table_roll.first.purpose,
    }

    def text() -> str:
        if values["who"]:
            return _("%(who)s activa «%(aspect)s» en contra de tu tirada «%(purpose)s»: acéptala o cancélala.") % values
        return (
            _("La dirección activa «%(aspect)s» en contra de tu tirada «%(purpose)s»: acéptala o cancélala.") % values
        )

    return notify.notify_users(
        [table_roll.owner],
        campaign=activation.campaign,
        kind=Notification.Kind.ANSWER,
        url=table_roll.latest.get_absolute_url(),
        text=text,
        post=table_roll.post,
    )


def narrative_pending(activation) -> list[Notification]:
    """Tell a player that a narrative element harms their character (H23):
    they gain the point, or refuse it by paying one."""
    character = activation.target_character
    values = {
        "aspect": activation.aspect_text,
        "name": character.name,
        "note": activation.note,
        "who": activation.activator_character.name if activation.activator_character else "",
    }

    def text() -> str:
        if values["who"]:
            return (
                _(
                    "%(who)s introduce un elemento narrativo contra %(name)s («%(aspect)s»: %(note)s): acéptalo o recházalo."
                )
                % values
            )
        return (
            _(
                "La dirección introduce un elemento narrativo contra %(name)s («%(aspect)s»: %(note)s): acéptalo o recházalo."
            )
            % values
        )

    url = reverse("hitos:drama", args=[activation.campaign.slug])
    return notify.notify_users(
        [character.owner], campaign=activation.campaign, kind=Notification.Kind.ANSWER, url=url, text=text
    )


def horror_exposed(test, characters) -> list[Notification]:
    """Ask each exposed player character's player to roll Entereza (H78)."""
    url = reverse("hitos:horror", args=[test.campaign.slug, test.scene_id])
    notifications = []
    for character in characters:
        if character.is_npc or not character.owner.is_active:
            continue
        values = {"name": character.name, "description": test.description}

        def text(values=values) -> str:
            return _("%(name)s se enfrenta al horror (%(description)s): tira Entereza.") % values

        notifications += notify.notify_users(
            [character.owner], campaign=test.campaign, kind=Notification.Kind.REQUEST, url=url, text=text
        )
    return notifications


def character_harmed(character, *, what: str, amount: int, url: str, post: Post | None = None) -> list[Notification]:
    """Tell a player that damage (``what`` = "damage") or a horror loss
    ("horror") was applied to their character. NPCs have no player to tell."""
    if character.is_npc:
        return []
    values = {"name": character.name, "n": amount}

    def text() -> str:
        if what == "horror":
            return _("%(name)s pierde %(n)s de Estabilidad Mental por el horror.") % values
        return _("%(name)s recibe %(n)s de daño.") % values

    return notify.notify_users(
        [character.owner], campaign=character.campaign, kind=Notification.Kind.CHARACTER, url=url, text=text, post=post
    )
