"""The demo campaign that ``make run`` loads, idempotently.

Each part is created only when missing, so running it again reuses what
exists. Later features add their part here (sheets, rolls).
"""

from dataclasses import dataclass

from django.db import transaction

from accounts.models import User
from campaigns import services
from campaigns.models import Campaign, CampaignStatus, Membership, Post, Role, Visibility
from campaigns.permissions import campaign_access
from demo.aventuras import aventuras_demo_load
from demo.pace import pace_demo_load
from demo.sheets import sheets_demo_load
from demo.table import TABLE_SCENE, rolls_demo_load, table_demo_load
from demo.vaesen import vaesen_demo_load
from sheets.models import Character

DEMO_PASSWORD = "demo-hitos-2026"
DEMO_CAMPAIGN_SLUG = "la-mansion-de-las-sombras"


@dataclass(frozen=True)
class DemoUser:
    username: str
    display_name: str
    character: str


DEMO_USERS = (
    DemoUser("directora", "Directora (DJ)", ""),
    DemoUser("ana", "Ana", "Inés Albarrán"),
    DemoUser("bruno", "Bruno", "Tomás Quiroga"),
)


def _user(demo: DemoUser) -> tuple[User, bool]:
    user, created = User.objects.get_or_create(
        username=demo.username,
        defaults={"display_name": demo.display_name, "email": f"{demo.username}@demo.invalid", "language": "es"},
    )
    if created:
        user.set_password(DEMO_PASSWORD)
        user.save(update_fields=["password"])
    return user, created


def _story(campaign: Campaign, gm: User, ana: User, bruno: User) -> None:
    ines = Character.objects.get(campaign=campaign, owner=ana)
    tomas = Character.objects.get(campaign=campaign, owner=bruno)
    gm_access = campaign_access(gm, campaign)
    ana_access = campaign_access(ana, campaign)
    bruno_access = campaign_access(bruno, campaign)
    offgame = campaign.scenes.get(is_offgame=True)

    hall = services.scene_create(
        campaign=campaign,
        title="1. La verja oxidada",
        description="Madrid, otoño de 1923. La mansión Albarrán lleva veinte años cerrada.",
        game_values={"aspects": ["Niebla espesa", "La verja chirría"]},
    )
    services.post_create(
        access=gm_access,
        scene=hall,
        voice=Post.Voice.NPC,
        npc_name="El cochero",
        body="—Hasta aquí llego, señores. Ni por todo el oro de Madrid cruzo esa verja.",
    )
    services.post_create(
        access=ana_access,
        scene=hall,
        voice=Post.Voice.CHARACTER,
        character=ines,
        body="Inés se ajusta los guantes y empuja la verja. *Es la casa de mi abuelo; no pienso quedarme fuera.*",
        note="¿Puedo tirar Percepción para ver si hay huellas recientes en el barro?",
    )
    services.post_create(
        access=bruno_access,
        scene=hall,
        voice=Post.Voice.CHARACTER,
        character=tomas,
        body="Tomás levanta el farol. —Después de usted, señorita Albarrán.",
    )
    services.post_create(
        access=bruno_access,
        scene=hall,
        voice=Post.Voice.OOC,
        body="Directora: Tomás lleva encima el revólver del que hablamos, ¿vale?",
        recipients=Post.Recipients.GM,
    )
    spam = services.post_create(
        access=bruno_access,
        scene=offgame,
        voice=Post.Voice.OOC,
        body="¡Vendo dados de la suerte! Escríbeme por privado.",
    )
    services.post_hide(post=spam, actor=gm, reason="Publicidad: no es el sitio.")
    services.post_create(
        access=gm_access,
        scene=offgame,
        voice=Post.Voice.OOC,
        body="Bienvenidos. Intentad escribir al menos un mensaje cada dos días.",
    )


@transaction.atomic
def demo_load(*, vaesen: bool = True, aventuras: bool = True) -> tuple[list[tuple[DemoUser, bool]], Campaign]:
    """Create what is missing; return the users (with ``created``) and the
    HITOS campaign (the Vaesen one is ``demo.vaesen.VAESEN_CAMPAIGN_SLUG``,
    left out with ``vaesen=False``: the HITOS story's own tests; the Hora de
    Aventuras one is ``demo.aventuras.AVENTURAS_CAMPAIGN_SLUG``, left out
    with ``aventuras=False``)."""
    users = []
    accounts = {}
    for demo in DEMO_USERS:
        user, created = _user(demo)
        accounts[demo.username] = user
        users.append((demo, created))
    gm = accounts["directora"]
    campaign = Campaign.objects.filter(slug=DEMO_CAMPAIGN_SLUG).first()
    if campaign is None:
        campaign = services.campaign_create(
            gm=gm,
            title="La mansión de las sombras",
            system="hitos",
            visibility=Visibility.PUBLIC,
            status=CampaignStatus.PLAYING,
            description="Una partida de **HITOS** en el Madrid de los años veinte. Terror, misterio y una casa que no quiere visitas.",
        )
        campaign.slug = DEMO_CAMPAIGN_SLUG
        campaign.save(update_fields=["slug"])
    for demo in DEMO_USERS[1:]:
        player = accounts[demo.username]
        Membership.objects.get_or_create(campaign=campaign, user=player, defaults={"role": Role.PLAYER})
        Character.objects.get_or_create(
            campaign=campaign,
            owner=player,
            defaults={"name": demo.character, "status": Character.Status.APPROVED},
        )
    sheets_demo_load(campaign)
    if not Post.objects.filter(scene__campaign=campaign).exists():
        _story(campaign, gm, accounts["ana"], accounts["bruno"])
    players = (accounts["ana"], accounts["bruno"])
    rolls_demo_load(
        campaign=campaign,
        gm=gm,
        players=players,
        characters=tuple(Character.objects.get(campaign=campaign, owner=p) for p in players),
        scene=campaign.scenes.exclude(is_offgame=True).order_by("position").first(),
    )
    table_demo_load(
        campaign=campaign,
        gm=gm,
        players=players,
        characters=tuple(Character.objects.get(campaign=campaign, owner=p) for p in players),
    )
    # Bruno away this week, and a deadline on the table's scene (``demo.pace``).
    pace_demo_load(
        campaign=campaign,
        gm=gm,
        bruno=accounts["bruno"],
        scene=campaign.scenes.get(title=TABLE_SCENE),
    )
    # The Vaesen campaign beside it, with the same GM and players (``demo.vaesen``).
    if vaesen:
        vaesen_demo_load(gm=gm, ana=accounts["ana"], bruno=accounts["bruno"])
    # The Hora de Aventuras campaign, with the same GM and players (``demo.aventuras``).
    if aventuras:
        aventuras_demo_load(gm=gm, ana=accounts["ana"], bruno=accounts["bruno"])
    return users, campaign
