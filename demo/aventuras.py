"""The Hora de Aventuras campaign of the ``make run`` demo (issue 16, item 7):
«El castillo de regaliz», loaded beside the HITOS and Vaesen ones,
idempotently (each part is created only when missing) and only through the
project's services (the post form's own path, ``table.services``, for the
posts with rolls).

Who is who (the password of every demo account is ``demo.campaign.DEMO_PASSWORD``):

- ``directora`` directs (the same GM as the HITOS demo).
- ``ana`` plays **Chispa, la tostada ninja** (Espabilado 5 and Majo 3
  highlighted; the tool «Gorro pensador», +1 to Espabilado).
- ``bruno`` plays **Grumo, el oso de gominola** (Cachas 6 and Majo 3
  highlighted; the tool «Cuchara gigante», +3 to Cachas).
- **El Barón Regaliz** is the GM's villain (Cachas 8 and Cerebrito 5
  highlighted, Espabilado and Majo not: two dice, A2; no hero points, A20).

The campaign is public (anonymous readers see its scenes and the public part
of the approved sheets) and being played; its slug is ``AVENTURAS_CAMPAIGN_SLUG``.

What happened (the dice are real, so the details change on every fresh load;
the narrator's posts follow what they gave):

1. Scene «1. La puerta del acertijo»: Chispa wants to leave home, but the
   spirit of the door only opens to an answer that leaves it speechless.
   It poses riddle after riddle (Espabilado, difficulty 2, «dificililla»);
   Chispa converts every chachi into a 5 and a new die as long as chachis
   come (A5). The door opens on the first answer whose chain has **two
   conversions** (the shape of the seed's worked example, A30: two
   ``extend`` entries in one roll's chain; when the second 6 came on an
   added die, the narrator says so). Every other answer is told and closed
   with «¡Ya está!».
2. Scene «2. El castillo de regaliz»: Grumo fiddles with the candy lock of
   the gate (Cerebrito, not highlighted: two dice, difficulty 1) lock after
   lock until one attempt fails; **he spends a hero point to re-roll the
   failed dice** (A22: a ``reroll`` entry paid by a ``HeroMove`` of use
   «repetir dados»). Then the Barón lashes at Grumo with a liquorice whip (a
   small pool, Espabilado without highlight) and Grumo **reacts** with his
   Cuchara gigante (Cachas 6 + 3, and +2 dice from a hero point the first
   time, A22), until a reaction **blocks** the whip (A16: more successes
   than the action); each lash is told. The Barón flees on his liquorice
   horse and Chispa chases him: **a competition** (A13), resolved. Last,
   the Barón hurls a giant gumdrop at Chispa: **her reaction is open**.
   The GM's off-game note at the end says what is left.

What is left to do:

- ``ana``: react (or not, A14) to the Barón's gumdrop, from its card in
  scene 2; Chispa's claim of a hero point for facing her flaw (A25) waits
  for the GM.
- ``bruno``: accept (or refuse) the state «Pegajoso» «por el morro» the GM
  proposed to Grumo (A27: it gives him a hero point).
- ``directora``: decide Chispa's claim (A25) and narrate the gumdrop once
  Ana reacts.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from campaigns import services as campaign_services
from campaigns.models import Campaign, CampaignStatus, Membership, Post, Role, Scene, Visibility
from campaigns.permissions import campaign_access
from rolls.models import RollEntry
from sheets import permissions as sheet_permissions
from sheets import services as core
from sheets.models import CampaignSheetOptions, Character
from systems.aventuras.contests import reactions
from systems.aventuras.contests import services as contest_services
from systems.aventuras.heroes import services as hero_services
from systems.aventuras.models import AventurasContest, AventurasReaction, AventurasTool, HeroRequest
from systems.aventuras.rolls import services as roll_services
from systems.aventuras.sheet.services import SheetData, sheet_create
from systems.aventuras.system import roll_plan
from table import services as table_services
from table.models import TableRoll

AVENTURAS_CAMPAIGN_SLUG = "el-castillo-de-regaliz"
AVENTURAS_TITLE = "El castillo de regaliz"
NARRATOR = "Narración"
DOOR_SPIRIT = "El espíritu de la puerta"
DOOR_SCENE = "1. La puerta del acertijo"
CASTLE_SCENE = "2. El castillo de regaliz"
CHISPA = "Chispa, la tostada ninja"
GRUMO = "Grumo, el oso de gominola"
BARON = "El Barón Regaliz"
THINKING_CAP = "Gorro pensador"
SPOON = "Cuchara gigante"
FOR_FREE_STATE = "Pegajoso"
CHASE = "La persecución del Barón Regaliz"
# A30 — the door opens on an answer whose chain converts this many chachis.
CONVERSIONS_WANTED = 2
# Each loop stops on a shape that comes in about one attempt in three
# (two conversions with six dice), three in four (a failed lock) or nearly
# always (a block with nine or eleven dice against two): this many attempts
# all missing it never happens in practice.
MAX_ATTEMPTS = 40

RIDDLES = (
    "«Un granjero tiene 10 conejos, 20 caballos y 40 cerdos. Si llamamos “cerdos” a los “caballos”, "
    "¿cuántos caballos tendrá?»",
    "«¿Qué tiene dientes pero nunca muerde?»",
    "«Cuanto más quitas, más grande se hace. ¿Qué es?»",
    "«Vuela sin alas, llora sin ojos. ¿Qué es?»",
    "«Si me nombras, desaparezco. ¿Quién soy?»",
)
ANSWERS = ("¡20 caballos!", "¡Un peine!", "¡Un agujero!", "¡Una nube!", "¡El silencio!")
LOCKS = (
    "la cerradura de caramelo",
    "el candado de chicle",
    "el cerrojo de mazapán",
    "la aldaba de turrón",
)

SHEETS = {
    CHISPA: SheetData(
        fields={
            "name": CHISPA,
            "concept": "Tostada ninja",
            "cachas": 2,
            "cerebrito": 2,
            "espabilado": 5,
            "majo": 3,
            "highlighted": ["espabilado", "majo"],
            "health": 5,
            "flaw": "Presumida: tiene que contar a todo el mundo lo lista que es",
            "flaw_earns": "Gana un punto si se calla un acierto para que otro se luzca",
            "public_description": "Una tostada con antifaz y mantequilla en los bordes. Salta de tejado en tejado.",
            "private_notes": "Le da muchísimo miedo la mermelada de fresa.",
        },
        feats=[
            {
                "name": "Salto de mantequilla",
                "description": "Resbala por cualquier superficie como si fuera hielo.",
                "needs_hero_point": True,
            }
        ],
        tools=[{"name": THINKING_CAP, "attribute": "espabilado", "bonus": 1, "uses": "acertijos y enigmas"}],
    ),
    GRUMO: SheetData(
        fields={
            "name": GRUMO,
            "concept": "Oso de gominola",
            "cachas": 6,
            "cerebrito": 2,
            "espabilado": 2,
            "majo": 3,
            "highlighted": ["cachas", "majo"],
            "health": 6,
            "flaw": "Goloso: no resiste un dulce aunque sea una trampa",
            "flaw_earns": "Gana un punto si deja pasar un dulce para salvar a alguien",
            "public_description": "Un oso de gominola verde, blandito y enorme. Abraza a todo el mundo.",
            "private_notes": "Guarda un caramelo del Barón en el bolsillo y no se lo ha dicho a nadie.",
        },
        feats=[{"name": "Abrazo pegajoso", "description": "Nadie se suelta de su abrazo.", "needs_hero_point": False}],
        tools=[{"name": SPOON, "attribute": "cachas", "bonus": 3, "uses": "parar golpes y empujar"}],
    ),
}
PLAYERS = {"ana": CHISPA, "bruno": GRUMO}

VILLAIN = SheetData(
    fields={
        "name": BARON,
        "concept": "Villano de regaliz",
        "cachas": 8,
        "cerebrito": 5,
        "espabilado": 2,
        "majo": 2,
        "highlighted": ["cachas", "cerebrito"],
        "health": 8,
        "public_description": "Un caballero larguirucho de regaliz negro, con monóculo y un látigo de regaliz rojo.",
        "gm_notes": "Quiere cubrir todo Ooo de regaliz para que nadie vuelva a comer gominolas.",
    },
    tools=[{"name": "Látigo de regaliz", "attribute": "espabilado", "bonus": 1, "uses": "atrapar y azotar"}],
)


@dataclass(frozen=True)
class People:
    """The campaign, its GM and players, and their characters as stored now."""

    campaign: Campaign
    gm: object
    ana: object
    bruno: object
    chispa: Character
    grumo: Character
    baron: Character


# --- the campaign, its people and its sheets -----------------------------------------


def _campaign(gm) -> Campaign:
    campaign = Campaign.objects.filter(slug=AVENTURAS_CAMPAIGN_SLUG).first()
    if campaign is None:
        campaign = campaign_services.campaign_create(
            gm=gm,
            title=AVENTURAS_TITLE,
            system="aventuras",
            visibility=Visibility.PUBLIC,
            status=CampaignStatus.PLAYING,
            description="Una partida de **Hora de Aventuras** en la tierra de Ooo: una puerta que pone "
            "acertijos, un castillo de regaliz y un barón que quiere acabar con todas las gominolas.",
        )
        campaign.slug = AVENTURAS_CAMPAIGN_SLUG
        campaign.save(update_fields=["slug"])
        # Whoever reads the campaign sees the public part of the approved sheets.
        options = sheet_permissions.sheet_options(campaign)
        options.visibility = CampaignSheetOptions.Visibility.PUBLIC
        options.full_clean()
        options.save()
    return campaign


def _player_character(campaign: Campaign, player, name: str) -> Character:
    """The player's sheet, written by the player, sent and approved by the GM."""
    character = Character.objects.filter(campaign=campaign, owner=player, name=name).first()
    if character is None:
        character = sheet_create(campaign=campaign, owner=player, actor=player, data=SHEETS[name])
    if character.status in (Character.Status.DRAFT, Character.Status.RETURNED):
        core.sheet_submit(character=character, actor=player)
    if character.status == Character.Status.SUBMITTED:
        core.sheet_review(character=character, actor=campaign.gm, approve=True, comment="¡Bienvenida a Ooo!")
    return character


def _villain(campaign: Campaign) -> Character:
    character = Character.objects.filter(campaign=campaign, name=BARON, kind=Character.Kind.NPC).first()
    if character is None:
        character = sheet_create(
            campaign=campaign, owner=campaign.gm, actor=campaign.gm, kind=Character.Kind.NPC, data=VILLAIN
        )
    return character


def _fresh(character: Character) -> Character:
    """The character with its sheet as stored now (the services change it)."""
    return Character.objects.select_related("aventuras", "owner", "campaign").get(pk=character.pk)


def _tool(character: Character, name: str) -> int:
    return AventurasTool.objects.get(sheet_id=character.pk, name=name).pk


def _short(character: Character) -> str:
    """«Chispa, la tostada ninja» → «Chispa»: how the narrator calls them."""
    return character.name.split(",")[0]


# --- posts and rolls -------------------------------------------------------------------


def _narrate(people: People, scene: Scene, body: str, *, npc_name: str = NARRATOR) -> Post:
    return campaign_services.post_create(
        access=campaign_access(people.gm, people.campaign),
        scene=scene,
        voice=Post.Voice.NPC,
        npc_name=npc_name,
        body=body,
    )


def _post_with_roll(people: People, scene: Scene, *, user, character: Character, body: str, **plan) -> TableRoll:
    """A post with one roll, as the post form makes it (``table.services``):
    the player's character speaks; the GM's villain speaks as an NPC."""
    access = campaign_access(user, people.campaign)
    if character.is_npc:
        voice = {"voice": Post.Voice.NPC, "npc_name": character.name}
    else:
        voice = {"voice": Post.Voice.CHARACTER, "character": character}
    post = table_services.post_with_rolls_create(
        access=access, scene=scene, body=body, rolls=[roll_plan(_fresh(character), **plan)], **voice
    )
    return TableRoll.objects.select_related("latest", "first").get(post=post)


def _settled(table_roll: TableRoll, user) -> TableRoll:
    """«¡Ya está!» when the roll still waits for a decision (A6, A11)."""
    table_roll.refresh_from_db()
    if not roll_services.is_final(table_roll):
        roll_services.settle(table_roll, by=user)
    return TableRoll.objects.select_related("latest", "first").get(pk=table_roll.pk)


def _convert_every_chachi(table_roll: TableRoll, user) -> list[RollEntry]:
    """A5 — convert each open 6 into a 5 and a new die, as long as 6s come
    (also on the added dice); the ``extend`` entries, in order."""
    extensions = []
    for _step in range(MAX_ATTEMPTS):
        table_roll.refresh_from_db()
        chachis = roll_services.open_chachis(table_roll.facts)
        if not chachis or roll_services.is_final(table_roll):
            break
        extensions.append(roll_services.convert(table_roll=table_roll, user=user, position=chachis[0]))
    return extensions


def _riddles(people: People, scene: Scene) -> None:
    """Scene 1: riddle after riddle until an answer's chain converts two chachis (A30)."""
    chispa = people.chispa
    for attempt in range(MAX_ATTEMPTS):
        riddle, answer = RIDDLES[attempt % len(RIDDLES)], ANSWERS[attempt % len(ANSWERS)]
        _narrate(people, scene, f"—{riddle}", npc_name=DOOR_SPIRIT)
        table_roll = _post_with_roll(
            people,
            scene,
            user=people.ana,
            character=chispa,
            body=f"Chispa se rasca la corteza, se cala el gorro pensador y contesta: —{answer}",
            attribute="espabilado",
            difficulty=2,
            tool_id=_tool(chispa, THINKING_CAP),
            action_kind="mental",
            purpose=f"Espabilado: el acertijo n.º {attempt + 1} del espíritu de la puerta",
        )
        pool = len(table_roll.first.dice)
        extensions = _convert_every_chachi(table_roll, people.ana)
        table_roll = _settled(table_roll, people.ana)
        succeeded = bool(table_roll.facts["succeeded"])
        if len(extensions) >= CONVERSIONS_WANTED:
            on_added = int(extensions[1].entry["converted"][0]) >= pool
            chain = (
                "¡y el dado nuevo vuelve a salir 6, y Chispa lo convierte otra vez!"
                if on_added
                else "¡y otro 6 más, que también convierte!"
            )
            result = "¡Respuesta correcta!" if succeeded else "La respuesta no es la buena, pero…"
            _narrate(
                people,
                scene,
                f"Chispa convierte un 6 en un 5 y tira otro dado… {chain} {result} El espíritu se queda "
                "boquiabierto con tanto dado: refunfuña algo sobre los listillos, pero la puerta se abre.",
            )
            return
        if succeeded:
            told = "—Correcto —bosteza el espíritu—. Pero no me ha sorprendido. Otro."
        else:
            told = "—¡Mal! —se ríe el espíritu—. A ver con este."
        _narrate(people, scene, told, npc_name=DOOR_SPIRIT)
    raise RuntimeError(f"{MAX_ATTEMPTS} acertijos sin dos conversiones: la demostración necesita una cadena de dos.")


def _door(people: People) -> None:
    scene = campaign_services.scene_create(
        campaign=people.campaign,
        title=DOOR_SCENE,
        description="La casa de Chispa, una mañana cualquiera en Ooo. La Princesa Gominola la espera en palacio.",
    )
    _narrate(
        people,
        scene,
        "Chispa gira el pomo de la puerta, pero la puerta no se mueve. Una voz soñolienta sale de la madera.",
    )
    _narrate(
        people,
        scene,
        "—Soy el espíritu de la puerta, regulador del paso. Hoy no he desayunado, así que solo abriré a una "
        "respuesta que me deje con la boca abierta.",
        npc_name=DOOR_SPIRIT,
    )
    _riddles(people, scene)


def _lock(people: People, scene: Scene) -> TableRoll:
    """Grumo's lock after lock (Cerebrito, two dice, difficulty 1) until one
    attempt fails: that failed roll is returned, still open."""
    for attempt in range(MAX_ATTEMPTS):
        lock = LOCKS[attempt % len(LOCKS)]
        table_roll = _post_with_roll(
            people,
            scene,
            user=people.bruno,
            character=people.grumo,
            body=f"Grumo saca la lengua, concentrado, y hurga en {lock} con una garra.",
            attribute="cerebrito",
            difficulty=1,
            action_kind="mental",
            purpose=f"Cerebrito: {lock}",
        )
        if not table_roll.facts["succeeded"]:
            return table_roll
        _settled(table_roll, people.bruno)
        _narrate(people, scene, f"¡Clic! {lock[0].upper()}{lock[1:]} se abre… y detrás aparece otra.")
    raise RuntimeError(f"{MAX_ATTEMPTS} cerraduras abiertas seguidas: la demostración necesita un fallo.")


def _reroll(people: People, scene: Scene, failed: TableRoll) -> None:
    """A22 — a hero point re-rolls the failed dice of the failed lock."""
    threshold = int(failed.facts["threshold"])
    positions = [i for i, value in enumerate(failed.facts["values"]) if value < threshold]
    roll_services.hero_reroll(table_roll=failed, user=people.bruno, positions=positions)
    again = _settled(failed, people.bruno)
    if again.facts["succeeded"]:
        told = "Grumo gasta un punto de Héroe, sopla sobre la garra y lo intenta otra vez: ¡clic! La verja se abre."
    else:
        told = (
            "Grumo gasta un punto de Héroe y lo intenta otra vez, pero la cerradura se le pega a la garra. "
            "Al final, de un empujón, la verja cede… y suena una alarma de campanillas de azúcar."
        )
    _narrate(people, scene, told)


def _whip(people: People, scene: Scene) -> None:
    """The Barón lashes at Grumo (a small pool) until Grumo's reaction blocks it (A16)."""
    spoon = _tool(people.grumo, SPOON)
    bruno_access = campaign_access(people.bruno, people.campaign)
    for attempt in range(MAX_ATTEMPTS):
        action = _post_with_roll(
            people,
            scene,
            user=people.gm,
            character=people.baron,
            body="—¡Nadie entra en mi castillo! —El Barón hace restallar su látigo de regaliz contra Grumo.",
            attribute="espabilado",
            action_kind="física",
            targets=[people.grumo],
            purpose="Espabilado: el latigazo de regaliz",
        )
        action = _settled(action, people.gm)
        reaction = AventurasReaction.objects.get(action=action, target=people.grumo)
        # A22 — the first time, Grumo spends a hero point on two more dice.
        answer = reactions.react(
            reaction=reaction,
            access=bruno_access,
            attribute="cachas",
            tool_id=spoon,
            hero_point=attempt == 0,
        )
        answer = _settled(answer, people.bruno)
        outcome = reactions.result(
            roll_services.roll_tally(action), roll_services.roll_tally(answer), int(action.facts["difficulty"])
        )
        if outcome["blocked"]:
            extra = " (con un punto de Héroe, dos dados más)" if attempt == 0 else ""
            _narrate(
                people,
                scene,
                f"Grumo levanta la cuchara gigante{extra} y el látigo rebota en ella con un «¡boing!». "
                "¡Bloqueado por completo! El Barón se queda mirando su látigo, hecho un nudo.",
            )
            return
        hit = "le da de lleno" if outcome["succeeded"] else "se le enreda en la cuchara, sin hacerle daño"
        _narrate(people, scene, f"El latigazo {hit}. El Barón recoge el látigo y vuelve a intentarlo.")
    raise RuntimeError(f"{MAX_ATTEMPTS} latigazos sin bloquear: la demostración necesita un bloqueo.")


def _chase(people: People, scene: Scene) -> None:
    """A13 — Chispa (Espabilado, running) against the Barón (Espabilado, riding), resolved."""
    gm_access = campaign_access(people.gm, people.campaign)
    _narrate(
        people,
        scene,
        "El Barón salta a lomos de su caballo de regaliz y sale al galope hacia la torre. "
        "Chispa echa a correr detrás: ¡a ver quién llega antes!",
    )
    contest = contest_services.contest_create(
        scene=scene,
        access=gm_access,
        kind=AventurasContest.Kind.COMPETITION,
        title=CHASE,
        sides=[
            contest_services.Side(people.chispa, "espabilado"),
            contest_services.Side(people.baron, "espabilado"),
        ],
    )
    for side in contest.contestants.select_related("character"):
        user = people.gm if side.character.is_npc else people.ana
        table_roll = contest_services.contest_roll(contestant=side, access=campaign_access(user, people.campaign))
        _settled(table_roll, user)
    contest.refresh_from_db()
    winners = contest.result.get("winners") or []
    if winners == [people.chispa.pk]:
        told = (
            "Chispa salta de tejado en tejado y aterriza delante del caballo: ¡le corta el paso con las manos en alto!"
        )
    elif winners == [people.baron.pk]:
        told = "El caballo de regaliz galopa más que una tostada: el Barón se escapa hasta la torre más alta."
    elif contest.result.get("decided_by") == "nobody":
        told = "El caballo tropieza con su propia cola y Chispa resbala en su mantequilla: nadie llega a la torre."
    else:
        told = "Llegan a la vez al pie de la torre, resoplando; ninguno le saca ventaja al otro."
    _narrate(people, scene, told)


def _castle(people: People) -> None:
    """Scene 2: the lock re-rolled with a hero point, the whip blocked, the
    chase, the gumdrop waiting for Ana's reaction and what the players ask."""
    campaign, gm = people.campaign, people.gm
    scene = campaign_services.scene_create(
        campaign=campaign,
        title=CASTLE_SCENE,
        description="Todo el castillo es de regaliz negro y huele a anís. En la verja hay una cerradura de caramelo.",
    )
    _narrate(
        people,
        scene,
        "Chispa y Grumo llegan a la verja del castillo del Barón Regaliz. Dentro se oye un ruido de ollas: "
        "está fundiendo todas las gominolas de Ooo.",
    )
    campaign_services.post_create(
        access=campaign_access(people.ana, campaign),
        scene=scene,
        voice=Post.Voice.CHARACTER,
        character=people.chispa,
        body="—Grumo, tú que eres de gominola: ¿no te da un poco de cosa entrar ahí?",
    )
    failed = _lock(people, scene)
    _reroll(people, scene, failed)
    _whip(people, scene)
    _chase(people, scene)
    gumdrop = _post_with_roll(
        people,
        scene,
        user=gm,
        character=people.baron,
        body="—¡Toma gominola gigante! —El Barón levanta una gominola del tamaño de una casa y se la lanza a Chispa.",
        attribute="cachas",
        action_kind="física",
        targets=[people.chispa],
        purpose="Cachas: la gominola gigante",
    )
    _settled(gumdrop, gm)
    hero_services.ask(
        character=_fresh(people.chispa),
        actor=people.ana,
        kind=HeroRequest.Kind.FLAW,
        why="He dejado que Grumo contara cómo abrimos la verja, aunque me moría por presumir de lista.",
        scene=scene,
    )
    hero_services.propose_state(
        character=_fresh(people.grumo),
        actor=gm,
        state_name=FOR_FREE_STATE,
        why="Con tanto regaliz derretido, Grumo se va quedando pegado a todo lo que toca.",
        scene=scene,
    )
    campaign_services.post_create(
        access=campaign_access(gm, campaign),
        scene=scene,
        voice=Post.Voice.OOC,
        body="\n\n".join(
            [
                "Ana: el Barón le ha lanzado a Chispa una gominola gigante. Reacciona (o no) desde la tarjeta de "
                "la tirada; tengo pendiente tu punto de Héroe por tu defecto, lo decido enseguida.",
                f"Bruno: te propongo que Grumo quede *{FOR_FREE_STATE}* por el morro (te da un punto de Héroe): "
                "acéptalo o recházalo en el panel de puntos de Héroe de la escena.",
                "En cuanto reaccionéis, os cuento qué pasa con la gominola.",
            ]
        ),
    )


@transaction.atomic
def aventuras_demo_load(*, gm, ana, bruno) -> Campaign:
    """Create what is missing of the Hora de Aventuras demo and return its campaign."""
    campaign = _campaign(gm)
    players = {"ana": ana, "bruno": bruno}
    for player in players.values():
        Membership.objects.get_or_create(campaign=campaign, user=player, defaults={"role": Role.PLAYER})
    characters = {name: _player_character(campaign, players[login], name) for login, name in PLAYERS.items()}
    baron = _villain(campaign)

    def people() -> People:
        return People(
            campaign=campaign,
            gm=gm,
            ana=ana,
            bruno=bruno,
            chispa=_fresh(characters[CHISPA]),
            grumo=_fresh(characters[GRUMO]),
            baron=_fresh(baron),
        )

    if not campaign.scenes.filter(title=DOOR_SCENE).exists():
        _door(people())
    if not campaign.scenes.filter(title=CASTLE_SCENE).exists():
        _castle(people())
    return campaign
