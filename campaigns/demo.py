"""The demo campaign that ``make run`` loads, idempotently.

Later features add their part here (scenes, posts, sheets, rolls), always
with get-or-create so that running it again reuses what exists.
"""

from dataclasses import dataclass

from django.db import transaction

from accounts.models import User
from campaigns.models import Campaign, System, Visibility

DEMO_PASSWORD = "demo-hitos-2026"
DEMO_CAMPAIGN_SLUG = "la-mansion-de-las-sombras"


@dataclass(frozen=True)
class DemoUser:
    username: str
    display_name: str
    role: str


DEMO_USERS = (
    DemoUser("directora", "Directora (DJ)", "gm"),
    DemoUser("ana", "Ana", "player"),
    DemoUser("bruno", "Bruno", "player"),
)


@transaction.atomic
def demo_load() -> tuple[list[tuple[DemoUser, bool]], Campaign]:
    """Create what is missing; return the users (with ``created``) and the campaign."""
    users = []
    accounts = {}
    for demo in DEMO_USERS:
        user, created = User.objects.get_or_create(
            username=demo.username,
            defaults={
                "display_name": demo.display_name,
                "email": f"{demo.username}@demo.invalid",
                "language": "es",
            },
        )
        if created:
            user.set_password(DEMO_PASSWORD)
            user.save(update_fields=["password"])
        accounts[demo.username] = user
        users.append((demo, created))
    campaign, _ = Campaign.objects.get_or_create(
        slug=DEMO_CAMPAIGN_SLUG,
        defaults={
            "title": "La mansión de las sombras",
            "system": System.HITOS,
            "visibility": Visibility.PUBLIC,
            "gm": accounts["directora"],
        },
    )
    return users, campaign
