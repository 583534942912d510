"""The Vaesen campaign of the ``make run`` demo (issue 15, item 7): «Los
ahogados de Svartsjön», loaded beside the HITOS one, idempotently (each part
is created only when missing) and only through the project's services.

Who is who (the password of every demo account is ``demo.campaign.DEMO_PASSWORD``):

- ``directora`` directs (the same GM as the HITOS demo).
- ``ana`` plays **Elin Berg**, a doctor from Uppsala (Precisión 4, Medicina 3).
- ``bruno`` plays **Axel Lindqvist**, a retired cavalry sergeant (Físico 4,
  Combate cuerpo a cuerpo 3, a sabre).
- **Olof Ek, el molinero** is the GM's human NPC (Resistencia 5, a boathook):
  he feeds the lake one drowned person a year so that his mill never stops.
- **El bäckahäst** is the creature (Miedo 2): the white water horse of the lake.

The campaign is public (anonymous readers see its scenes and the public part
of the approved sheets) and being played; its slug is ``VAESEN_CAMPAIGN_SLUG``.

What happened (the dice are real, so the details change on every fresh load;
the narrator's posts follow what they gave):

1. Scene «1. El molino de Svartsjön» (Uppland, autumn 1879): the narrator and
   Olof introduce the drowned boy. Elin examines the body (Precisión +
   Medicina, three successes needed; each success is a clue the narrator
   tells, then the next clue is tried) until a test fails; **she pushes the
   failed test** (the re-roll of the log) and marks the physical condition
   «Exhausto» on her sheet; the narrator tells what the pushed roll found.
   Then Axel searches the attic (Lógica + Investigación, two successes) until
   a test fails, and **that failure is not pushed yet**: the GM's off-game
   note asks Bruno whether he pushes it (a mental condition) before she tells
   what Axel finds.
2. Scene «2. El embarcadero» (that night): Olof attacks at the pier. **A
   short combat** (initiative through the log; each attack parried when
   the defender has an action to spare; Olof and at least one PC attack) is
   left open on **a player character's turn**. Then the bäckahäst rises
   from the water and the GM starts **a fear test** against it for Elin and
   Axel: Elin has answered (Empatía); **Axel has not**. If Elin's test
   failed, Ana may still push it or accept the terror. The GM's off-game
   note at the end says all of this to the players.

What is left to do:

- ``bruno``: answer Axel's fear test (scene 2, «Miedo»); push (or not) Axel's
  failed search in scene 1 from its card; and, if it is Axel's turn, declare
  his action in the combat.
- ``ana``: if it is Elin's turn, declare her action; if her fear test failed,
  push it or accept the terror (scene 2, «Miedo»).
- ``directora``: narrate Axel's search once Bruno decides, pass the combat's
  turn after the player acts, close or follow the fear test.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from campaigns import services as campaign_services
from campaigns.models import Campaign, CampaignStatus, Membership, Post, Role, Scene, Visibility
from campaigns.permissions import campaign_access
from rules import vaesen as rules
from sheets import permissions as sheet_permissions
from sheets import services as core
from sheets.models import CampaignSheetOptions, Character
from systems.vaesen.combat import services as combat_services
from systems.vaesen.fear import services as fear_services
from systems.vaesen.models import VaesenAction, VaesenCombat, VaesenSheet
from systems.vaesen.rolls import services as roll_services
from systems.vaesen.sheet.services import SheetData, sheet_create
from table.models import TableRoll

VAESEN_CAMPAIGN_SLUG = "los-ahogados-de-svartsjon"
VAESEN_TITLE = "Los ahogados de Svartsjön"
NARRATOR = "Narración"
MILL_SCENE = "1. El molino de Svartsjön"
PIER_SCENE = "2. El embarcadero"
ELIN = "Elin Berg"
AXEL = "Axel Lindqvist"
OLOF = "Olof Ek, el molinero"
CREATURE = "El bäckahäst"
PUSHED_CONDITION = "Exhausto"
# A test that keeps succeeding is tried on the next clue; this many attempts
# all succeeding (at most a few in a hundred each) never happens in practice.
MAX_ATTEMPTS = 40


@dataclass(frozen=True)
class Clue:
    """One attempt of an investigation: the player's post, the roll's
    purpose and what the narrator says when it succeeds."""

    body: str
    purpose: str
    found: str


ELIN_CLUES = (
    Clue(
        "Elin se arrodilla junto al cuerpo de Nils y le abre los párpados con dos dedos. "
        "*Esto no es un ahogamiento corriente.*",
        "Precisión + Medicina: cómo murió Nils",
        "Elin encuentra agua dulce en los pulmones y, en los tobillos, la marca de algo que tiró hacia abajo.",
    ),
    Clue(
        "Elin examina las manos del chico, una uña tras otra.",
        "Precisión + Medicina: las manos de Nils",
        "Bajo las uñas de Nils hay crines blancas, largas y ásperas, como de caballo.",
    ),
    Clue(
        "Elin vuelve al cuello del chico con la lupa del maletín.",
        "Precisión + Medicina: las marcas del cuello",
        "Las marcas del cuello no son de dedos: son de una rienda de junco trenzado.",
    ),
)
AXEL_CLUES = (
    Clue(
        "Axel sube al desván del molino y aparta los sacos de harina uno a uno.",
        "Lógica + Investigación: el desván del molino",
        "Tras los sacos, Axel encuentra una brida vieja, empapada aunque lleva años colgada en seco.",
    ),
    Clue(
        "Axel revisa el libro de la molienda que Olof guarda junto a la piedra.",
        "Lógica + Investigación: el libro de la molienda",
        "Cada otoño, el libro anota una cosecha espléndida; y, cada otoño, un entierro en el pueblo.",
    ),
    Clue(
        "Axel tantea las tablas del suelo buscando una que suene hueca.",
        "Lógica + Investigación: el suelo del desván",
        "Bajo una tabla suelta hay un cuaderno de oraciones con una página arrancada.",
    ),
)

SHEETS = {
    ELIN: SheetData(
        fields={
            "name": ELIN,
            "archetype": "Doctora",
            "age": 34,
            "fisico": 2,
            "precision": 4,
            "logica": 3,
            "empatia": 3,
            "motivation": "Demostrar que la medicina explica lo que el pueblo llama brujería",
            "trauma": "Vio a su hermana pequeña sonreír a algo en el río antes de ahogarse",
            "dark_secret": "Firmó como accidente una muerte que no lo era",
            "relationships": ["Axel me salvó la vida en Upsala: le debo una."],
            "talents": ["Médica de campaña"],
            "resources": 4,
            "public_description": "Doctora de Upsala, de abrigo gris y maletín de cuero. Nunca levanta la voz.",
            "private_notes": "La muerte de Nils se parece demasiado a la de mi hermana.",
        },
        skills={"Medicina": 3, "Observación": 2, "Erudición": 2, "Inspiración": 1, "Combate cuerpo a cuerpo": 1},
        items=[{"name": "Maletín de médico", "bonus": 1, "skill": "Medicina", "availability": 2}],
        weapons=[{"name": "Bisturí", "skill": "Combate cuerpo a cuerpo", "damage": 1, "bonus": 0, "range": ""}],
    ),
    AXEL: SheetData(
        fields={
            "name": AXEL,
            "archetype": "Oficial",
            "age": 46,
            "fisico": 4,
            "precision": 3,
            "logica": 2,
            "empatia": 2,
            "motivation": "Proteger a los que no saben defenderse",
            "trauma": "Un caballo blanco sin jinete cruzó su campamento la noche antes de la matanza",
            "dark_secret": "Desertó de su regimiento",
            "relationships": ["Elin es la única que sabe que deserté."],
            "talents": ["Veterano"],
            "resources": 3,
            "public_description": "Sargento de caballería retirado. Bigote cano y un sable que no se quita ni para dormir.",
            "private_notes": "No soporta el relincho de un caballo en la oscuridad.",
        },
        skills={"Combate cuerpo a cuerpo": 3, "Fuerza": 2, "Agilidad": 2, "Combate a distancia": 2, "Investigación": 1},
        weapons=[
            {"name": "Sable de caballería", "skill": "Combate cuerpo a cuerpo", "damage": 2, "bonus": 0, "range": ""},
            {"name": "Revólver Husqvarna", "skill": "Combate a distancia", "damage": 2, "bonus": 0, "range": "Corto"},
        ],
    ),
}
PLAYERS = {"ana": ELIN, "bruno": AXEL}

NPCS = {
    OLOF: SheetData(
        fields={
            "name": OLOF,
            "npc_kind": VaesenSheet.NpcKind.HUMAN,
            "fisico": 4,
            "precision": 2,
            "logica": 2,
            "empatia": 2,
            "resistance": 5,
            "public_description": "El molinero de Svartsjön: manos enormes, ojos que no se apartan del agua.",
            "gm_notes": "Cada otoño le da un ahogado al lago para que la rueda del molino no se pare nunca.",
        },
        skills={"Fuerza": 2, "Combate cuerpo a cuerpo": 2, "Manipulación": 2},
        weapons=[{"name": "Bichero", "skill": "Combate cuerpo a cuerpo", "damage": 1, "bonus": 0, "range": ""}],
    ),
    CREATURE: SheetData(
        fields={
            "name": CREATURE,
            "npc_kind": VaesenSheet.NpcKind.CREATURE,
            "fisico": 8,
            "precision": 4,
            "logica": 3,
            "empatia": 5,
            "fear": 2,
            "public_description": "Un caballo blanco y hermoso que sale del lago y se deja montar. Después vuelve al agua.",
            "gm_notes": "Quien lo monta ya no puede bajarse: el bäckahäst se lo lleva al fondo.",
        },
        skills={"Fuerza": 4, "Agilidad": 3, "Manipulación": 4},
    ),
}


# --- the campaign, its people and its sheets -----------------------------------------


def _campaign(gm) -> Campaign:
    campaign = Campaign.objects.filter(slug=VAESEN_CAMPAIGN_SLUG).first()
    if campaign is None:
        campaign = campaign_services.campaign_create(
            gm=gm,
            title=VAESEN_TITLE,
            system="vaesen",
            visibility=Visibility.PUBLIC,
            status=CampaignStatus.PLAYING,
            description="Una partida de **Vaesen** en la Suecia de 1879: un lago que se cobra un ahogado "
            "cada otoño, un molino que no se para nunca y un caballo blanco que sale del agua.",
        )
        campaign.slug = VAESEN_CAMPAIGN_SLUG
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
        core.sheet_review(character=character, actor=campaign.gm, approve=True, comment="Bienvenida a Svartsjön.")
    return character


def _npc(campaign: Campaign, name: str) -> Character:
    character = Character.objects.filter(campaign=campaign, name=name, kind=Character.Kind.NPC).first()
    if character is None:
        character = sheet_create(
            campaign=campaign, owner=campaign.gm, actor=campaign.gm, kind=Character.Kind.NPC, data=NPCS[name]
        )
    return character


def _fresh(character: Character) -> Character:
    """The character with its sheet as stored now (the services change it)."""
    return Character.objects.select_related("vaesen", "owner", "campaign").get(pk=character.pk)


# --- posts and rolls -------------------------------------------------------------------


def _narrate(access, scene: Scene, body: str) -> Post:
    return campaign_services.post_create(access=access, scene=scene, voice=Post.Voice.NPC, npc_name=NARRATOR, body=body)


def _until_failed(*, campaign, scene, gm_access, player, character, clues, skill: str, needed: int) -> TableRoll:
    """Each clue in turn (from the start again after the last) as a post of the
    player with its test, until one fails: that failed test is returned;
    the narrator tells what each success found."""
    access = campaign_access(player, campaign)
    for attempt in range(MAX_ATTEMPTS):
        clue = clues[attempt % len(clues)]
        post = campaign_services.post_create(
            access=access, scene=scene, voice=Post.Voice.CHARACTER, character=character, body=clue.body
        )
        table_roll = roll_services.table_test(
            campaign=campaign,
            user=player,
            setup=roll_services.pool_setup(_fresh(character), skill=skill, needed=needed),
            purpose=clue.purpose,
            character=character,
            scene=scene,
            post=post,
        )
        if table_roll.facts["can_push"]:
            return table_roll
        _narrate(gm_access, scene, clue.found)
    raise RuntimeError(f"{MAX_ATTEMPTS} pruebas seguidas con éxito: la demostración necesita una fallida.")


def _mill(campaign: Campaign, gm, ana, bruno, elin: Character, axel: Character, olof: Character) -> None:
    """Scene 1: Elin's failed examination pushed (with «Exhausto»), Axel's
    failed search waiting for Bruno."""
    gm_access = campaign_access(gm, campaign)
    scene = campaign_services.scene_create(
        campaign=campaign,
        title=MILL_SCENE,
        description="Uppland, otoño de 1879. Esta mañana han sacado del lago a Nils, el hijo del molinero.",
    )
    _narrate(
        gm_access,
        scene,
        "La rueda del molino gira sin descanso, aunque nadie muele. Sobre la mesa de la cocina, "
        "envuelto en una sábana húmeda, está el cuerpo de Nils Ek, doce años. Huele a lago.",
    )
    campaign_services.post_create(
        access=gm_access,
        scene=scene,
        voice=Post.Voice.NPC,
        npc_name=olof.name,
        body="—Se lo llevó el agua, como a tantos. No hay nada que mirar, doctora. Dejen descansar al chico.",
    )
    failed = _until_failed(
        campaign=campaign,
        scene=scene,
        gm_access=gm_access,
        player=ana,
        character=elin,
        clues=ELIN_CLUES,
        skill="Medicina",
        needed=3,
    )
    pushed = roll_services.push(table_roll=failed, user=ana, condition=PUSHED_CONDITION)
    if pushed.signed_game["success"]:
        found = next(c.found for c in ELIN_CLUES if c.purpose == failed.first.purpose)
        told = f"Elin insiste hasta que le tiemblan las manos, y lo consigue. {found}"
    else:
        told = (
            "Elin insiste hasta que le tiemblan las manos, pero el cuerpo no le dice nada más. "
            "Solo una cosa es segura: Nils no se cayó al agua; algo lo llevó."
        )
    _narrate(gm_access, scene, f"{told} (Elin queda *{PUSHED_CONDITION}*.)")
    _until_failed(
        campaign=campaign,
        scene=scene,
        gm_access=gm_access,
        player=bruno,
        character=axel,
        clues=AXEL_CLUES,
        skill="Investigación",
        needed=2,
    )
    campaign_services.post_create(
        access=gm_access,
        scene=scene,
        voice=Post.Voice.OOC,
        body="Bruno: la última búsqueda de Axel ha fallado. Puedes forzarla desde su tarjeta "
        "(te costará un estado mental) o dejarla así; os cuento lo que encuentra en cuanto decidas. "
        "Mientras, seguimos esa noche en «2. El embarcadero».",
    )


def _fight(campaign: Campaign, scene: Scene, gm, players: dict, characters: dict) -> tuple[VaesenCombat, list[str]]:
    """A short combat at the pier: initiative, then each one's attack on its
    turn (answered by a parry when the defender has an action left), until
    the NPC and a player character have attacked and the turn is a player
    character's. Returns the combat and the narrator's lines."""
    gm_access = campaign_access(gm, campaign)
    elin, axel, olof = characters[ELIN], characters[AXEL], characters[OLOF]
    fight = combat_services.combat_start(scene=scene, access=gm_access, characters=[elin, axel, olof])
    combat_services.initiative_roll(combat=fight, access=gm_access)
    lines = []
    npc_attacked = pc_attacked = False
    for _turn in range(2 * len(characters)):
        fight.refresh_from_db()
        combatants = list(fight.combatants.select_related("character__vaesen", "character__owner").order_by("order"))
        by_character = {c.character_id: c for c in combatants}
        acting = combat_services.current(fight, combatants)
        if not acting.character.is_npc and npc_attacked and pc_attacked:
            break
        if acting.character_id == olof.pk:
            # Olof swings his boathook at Axel, who parries with his sabre.
            target = by_character[axel.pk]
            access, answer = gm_access, campaign_access(players["bruno"], campaign)
            weapon = olof.vaesen.weapons.get(name="Bichero")
            npc_attacked = True
        else:
            target = by_character[olof.pk]
            access, answer = campaign_access(acting.character.owner, campaign), gm_access
            weapon = acting.character.vaesen.weapons.order_by("id").first()
            pc_attacked = True
        action = combat_services.declare(
            combat=fight, access=access, actor=acting, kind=VaesenAction.Kind.ATTACK, target=target, weapon=weapon
        )
        target.refresh_from_db()
        # A parry is a fast action; one kept for a turn still to come is not spent on it.
        parry = target.fast_used == 0 and rules.may_take_action(target.slow_used, target.fast_used, slow=False)
        action = combat_services.react(
            action=action,
            access=answer,
            reaction=VaesenAction.Reaction.PARRY_MELEE if parry else VaesenAction.Reaction.NONE,
            reactor=target,
        )
        lines.append(_attack_line(action, _short(acting.character), _short(target.character), weapon.name, parry))
        combat_services.next_turn(combat=fight, access=gm_access)
    fight.refresh_from_db()
    return fight, lines


def _short(character: Character) -> str:
    """«Olof Ek, el molinero» → «Olof»: how the narrator calls them."""
    return character.name.split(",")[0].split()[0]


def _attack_line(action: VaesenAction, attacker: str, target: str, weapon: str, parried: bool) -> str:
    """What the narrator says of one attack, from what its rolls settled."""
    start = f"{attacker} ataca a {target} con {weapon.lower()}"
    if not action.succeeded:
        return f"{start}, pero {target} para el golpe." if parried else f"{start} y falla."
    return f"{start} y le alcanza: {action.outcome}"


def _pier(campaign: Campaign, gm, players: dict, characters: dict) -> None:
    """Scene 2: the combat left on a player character's turn, and the fear
    test Elin has answered and Axel has not."""
    gm_access = campaign_access(gm, campaign)
    elin, axel, olof, creature = (characters[n] for n in (ELIN, AXEL, OLOF, CREATURE))
    scene = campaign_services.scene_create(
        campaign=campaign,
        title=PIER_SCENE,
        description="Esa misma noche. La niebla cubre Svartsjön y el embarcadero cruje bajo los pies.",
    )
    _narrate(
        gm_access,
        scene,
        "Al final del embarcadero, con un farol a los pies, os espera Olof. Lleva el bichero en las manos "
        "y no mira hacia vosotros, sino al agua.",
    )
    campaign_services.post_create(
        access=gm_access,
        scene=scene,
        voice=Post.Voice.NPC,
        npc_name=olof.name,
        body="—El lago tiene hambre. Si no es uno de ustedes, será otro niño. Lo siento.",
    )
    fight, lines = _fight(campaign, scene, gm, players, characters)
    _narrate(gm_access, scene, "\n\n".join(lines))
    campaign_services.post_create(
        access=gm_access,
        scene=scene,
        voice=Post.Voice.NPC,
        npc_name=creature.name,
        body="Detrás de Olof, el agua hierve. Un caballo blanco, hermoso y chorreando, sube por la orilla "
        "y os mira con unos ojos que no son de caballo.",
    )
    test = fear_services.fear_start(
        scene=scene, actor=gm, characters=[elin, axel], fear=None, creature=creature, against=""
    )
    campaign.refresh_from_db()
    answer = fear_services.fear_roll(
        scene=scene, actor=players["ana"], test_id=test["id"], character=_fresh(elin), attribute="empatía"
    )
    if answer.facts["success"]:
        _narrate(
            gm_access, scene, "Elin respira hondo y sostiene la mirada del caballo: no es más que un animal. Casi."
        )
    fight_url = combat_services.combat_url(fight)
    acting = combat_services.current(fight, list(fight.combatants.select_related("character").order_by("order")))
    todo = [
        f"Combate: es el turno de {acting.character.name}; declarad la acción en [el combate]({fight_url}).",
        f"Bruno: Axel tiene pendiente la prueba de Miedo contra {creature.name} (Miedo {creature.vaesen.fear}).",
    ]
    if not answer.facts["success"]:
        todo.append("Ana: la prueba de Miedo de Elin ha fallado: puedes forzarla o aceptar el terror.")
    campaign_services.post_create(access=gm_access, scene=scene, voice=Post.Voice.OOC, body="\n\n".join(todo))


@transaction.atomic
def vaesen_demo_load(*, gm, ana, bruno) -> Campaign:
    """Create what is missing of the Vaesen demo and return its campaign."""
    campaign = _campaign(gm)
    players = {"ana": ana, "bruno": bruno}
    for player in players.values():
        Membership.objects.get_or_create(campaign=campaign, user=player, defaults={"role": Role.PLAYER})
    characters = {name: _player_character(campaign, players[login], name) for login, name in PLAYERS.items()}
    characters |= {name: _npc(campaign, name) for name in NPCS}
    if not campaign.scenes.filter(title=MILL_SCENE).exists():
        _mill(campaign, gm, ana, bruno, characters[ELIN], characters[AXEL], characters[OLOF])
    if not campaign.scenes.filter(title=PIER_SCENE).exists():
        _pier(campaign, gm, players, {name: _fresh(c) for name, c in characters.items()})
    return campaign
