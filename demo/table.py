"""Verified rolls for the demo campaign, including a re-roll chain, and a
scene played at the table.

Every roll is real: it goes through the project's services into the signed
log, so the dice differ on every fresh load. What the narrator then says is
chosen from what the dice gave (``demo.story``), and where the dice could
leave the demo at an extreme (a character Enloquecido before anyone has
played), the demo picks what it does so that no outcome can.
"""

from demo import story
from rolls import services
from rolls.models import RollEntry
from rules import hitos
from systems.hitos import reading as hitos_reading


def _narrate(*, access, scene, body: str, chosen=()):
    """A post of the GM as the narrator; to ``chosen`` members only when given."""
    from campaigns import services as campaign_services
    from campaigns.models import Post

    return campaign_services.post_create(
        access=access,
        scene=scene,
        voice=Post.Voice.NPC,
        npc_name=story.NARRATOR,
        body=body,
        recipients=Post.Recipients.CHOSEN if chosen else Post.Recipients.ALL,
        chosen=chosen,
    )


def rolls_demo_load(*, campaign, players, characters, scene, gm=None) -> None:
    """Scene 1's rolls (a check re-rolled with an aspect, a check, a free
    roll) and the narration they call for, posted by ``gm`` (the campaign's
    GM by default). Idempotent: skipped once the campaign has rolls."""
    from campaigns.permissions import campaign_access

    if RollEntry.objects.filter(campaign=campaign).rolls().exists():
        return
    ana, bruno = players
    ines, tomas = characters
    entry, _ = hitos_reading.hitos_check_roll(
        campaign=campaign,
        user=ana,
        purpose="Intelecto + Percepción: huellas en el barro",
        modifier=9,
        difficulty=15,
        breakdown=[("Intelecto", 5), ("Percepción", 4)],
        character=ines,
        scene=scene,
    )
    # Inés invokes her aspect and re-rolls her two lowest dice (a positive activation).
    lowest = sorted(range(3), key=lambda i: entry.dice[i])[:2]
    footprints = services.reroll_append(
        parent=entry,
        user=ana,
        positions=lowest,
        purpose="Aspecto «Nieta del difunto»: repite dos dados",
        activation="positive",
        aspect="Nieta del difunto",
        paid_by=ana,
        payment="1 punto dramático",
        read=hitos_reading.hitos_reader(
            campaign=campaign,
            what="Intelecto + Percepción: huellas en el barro",
            modifier=9,
            difficulty=15,
            breakdown=[("Intelecto", 5), ("Percepción", 4)],
            reading=hitos.Reading.POSITIVE,
        ),
    )
    _stealth_entry, stealth = hitos_reading.hitos_check_roll(
        campaign=campaign,
        user=bruno,
        purpose="Reflejos + Sigilo: cruzar el jardín sin ruido",
        modifier=8,
        difficulty=20,
        breakdown=[("Reflejos", 5), ("Sigilo", 3)],
        character=tomas,
        scene=scene,
    )
    coins = services.free_roll(
        campaign=campaign, user=bruno, text="2d6+1", purpose="Monedas en el bolsillo del cochero", scene=scene
    )
    _narrate(
        access=campaign_access(gm or campaign.gm, campaign),
        scene=scene,
        body=story.garden_narration(
            footprints=footprints.signed_game["success"],
            stealth=stealth.success,
            coins=coins.signed_game["total"],
        ),
    )


# --- A scene played at the table (issue 7) -------------------------------------------

TABLE_SCENE = "2. El sótano"
CREATURE = "La cosa del pozo"


def _attack_until_hit(*, combat, access, attacker, target, weapon, attempts: int = 6):
    """A few rounds of shots: the demo wants one hit to apply (every shot is a
    real roll in the log, as at a real table). Returns the last attack and
    the number of shots."""
    from systems.hitos.combat import services as combat_services

    attack = None
    for shot in range(1, attempts + 1):
        attack = combat_services.attack_make(
            combat=combat, access=access, attacker=attacker, target=target, weapon=weapon
        )
        if combat_services.attack_damage_for(attack):
            return attack, shot
        combat_services.next_round(combat=combat, access=access)
    return attack, attempts


def _result(table_roll):
    """The check as its latest version reads, after any activation."""
    from systems.hitos.checks.services import table_result
    from table.models import TableRoll

    return table_result(TableRoll.objects.select_related("latest", "campaign").get(pk=table_roll.pk))


def _sheet(character):
    """The character's sheet as it stands now (meters change during the scene)."""
    from systems.hitos.models import HitosSheet

    return HitosSheet.objects.select_related("character__campaign").get(character_id=character.pk)


def table_demo_load(*, campaign, gm, players, characters) -> None:
    """Scene «2. El sótano»: posts with rolls, a positive aspect re-roll, a
    negative activation the player accepted, a combat with an attack whose
    damage is applied, and a horror test, each followed by the narration its
    dice call for. Idempotent: skipped when the scene exists."""
    from campaigns import services as campaign_services
    from campaigns.models import Post
    from campaigns.permissions import campaign_access
    from sheets.models import Character
    from systems.hitos.activations import services as activations
    from systems.hitos.checks import services as table
    from systems.hitos.combat import services as combat
    from systems.hitos.horror import services as horror
    from systems.hitos.models import Aspect, HitosSheet, Skill
    from systems.hitos.reading import campaign_options
    from systems.hitos.secret import services as secret

    if campaign.scenes.filter(title=TABLE_SCENE).exists():
        return
    ana, bruno = players
    ines, tomas = characters
    gm_access = campaign_access(gm, campaign)
    cellar = campaign_services.scene_create(
        campaign=campaign,
        title=TABLE_SCENE,
        description="Una escalera de piedra baja hacia la oscuridad. Huele a agua estancada.",
        game_values={"aspects": ["Oscuridad casi total", "Escalones resbaladizos"]},
    )
    slippery = cellar.aspects.get(phrase="Escalones resbaladizos")

    def story_post(body: str) -> None:
        _narrate(access=gm_access, scene=cellar, body=body)

    # Inés reads the ledger by the lamp: a roll in her post, then her hito.
    post = campaign_services.post_create(
        access=campaign_access(ana, campaign),
        scene=cellar,
        voice=Post.Voice.CHARACTER,
        character=ines,
        body="Inés acerca el farol al libro de cuentas que hay sobre la mesa. *¿Qué pagaba el abuelo cada mes?*",
    )
    ledger = table.table_check(
        campaign=campaign,
        user=ana,
        setup=table.check_setup(ines, characteristic="intelecto", skill="Investigar"),
        purpose="Descifrar el libro de cuentas",
        difficulty=15,
        character=ines,
        scene=cellar,
        post=post,
    )
    hito = ines.aspects.get(kind=Aspect.Kind.HITO, phrase="Se crió entre los libros del abuelo")
    lowest = sorted(range(3), key=lambda i: ledger.latest.entry["dice"][i])[:2]
    activations.activate_positive(
        table_roll=ledger, user=ana, aspect_choice=f"a{hito.pk}", positions=lowest, payment="point"
    )
    story_post(story.ledger_narration(success=_result(ledger).success))

    # Tomás goes down the steps; the GM activates the slippery steps against him and he accepts.
    post = campaign_services.post_create(
        access=campaign_access(bruno, campaign),
        scene=cellar,
        voice=Post.Voice.CHARACTER,
        character=tomas,
        body="Tomás baja el primero, con el revólver por delante. —Quédese detrás de mí.",
    )
    steps = table.table_check(
        campaign=campaign,
        user=bruno,
        setup=table.check_setup(tomas, characteristic="reflejos", skill="Atletismo"),
        purpose="Bajar sin resbalar",
        difficulty=10,
        character=tomas,
        scene=cellar,
        post=post,
    )
    highest = max(range(3), key=lambda i: steps.latest.entry["dice"][i])
    negative = activations.activate_negative(
        table_roll=steps,
        user=gm,
        aspect_choice=f"s{slippery.pk}",
        positions=[highest],
        note="El musgo cubre los escalones.",
    )
    activations.answer_negative(activation=negative, user=bruno, accept=True)
    story_post(story.steps_narration(success=_result(steps).success))

    # Something climbs out of the well: combat.
    creature = Character.objects.create(
        campaign=campaign,
        owner=gm,
        name=CREATURE,
        kind=Character.Kind.NPC,
        status=Character.Status.APPROVED,
        gm_notes="Lo que el abuelo alimentaba cada mes.",
    )
    HitosSheet.objects.create(
        character=creature,
        fortaleza=7,
        reflejos=5,
        voluntad=3,
        intelecto=2,
        drama=0,
        drama_points=0,
        rd=1,
        damage_code="M",
    )
    Skill.objects.create(character=creature, name="Garras", category="combate", value=4)
    campaign_services.post_create(
        access=gm_access,
        scene=cellar,
        voice=Post.Voice.NPC,
        npc_name=CREATURE,
        body="Del pozo asoma una mano gris, demasiado larga, y después otra.",
    )
    fight = combat.combat_start(scene=cellar, access=gm_access, characters=[ines, tomas, creature])
    combat.initiative_roll(combat=fight, access=gm_access)
    fighters = {c.character_id: c for c in fight.combatants.all()}
    revolver = tomas.weapons.get(name="Revólver")
    attack, shots = _attack_until_hit(
        combat=fight, access=gm_access, attacker=fighters[tomas.pk], target=fighters[creature.pk], weapon=revolver
    )
    damage = None
    if combat.attack_damage_for(attack):
        damage = combat.damage_apply(attack=attack, access=gm_access).damage_applied
    story_post(story.attack_narration(shots=shots, damage=damage, state=_sheet(creature).health_state))

    # And the horror of seeing it: each one's aspect moves the level (H81),
    # and the level is the strongest whose worst loss can neither fill a
    # sanity meter nor call for a trauma test (whose failure would): the
    # dice decide how much is lost, never that someone starts mad.
    exposed = [(ines, 0, ""), (tomas, -1, "Ha visto cosas en Marruecos")]
    sheets = {character.pk: _sheet(character) for character, _shift, _reason in exposed}
    level = story.safe_horror_level(
        (
            (sheets[character.pk], shift, horror.exposure_setup(character).modifier - sheets[character.pk].entereza)
            for character, shift, _reason in exposed
        ),
        options=campaign_options(campaign),
    )
    if level is not None:
        test = horror.horror_start(
            scene=cellar,
            actor=gm,
            level=level.key,
            description="La cosa del pozo sale a la luz del farol",
            exposures=exposed,
        )
        outcomes = []
        for exposure in test.exposures.select_related("character").order_by("pk"):
            before = _sheet(exposure.character).mental_meter.lost
            rolled = horror.exposure_roll(exposure=exposure, actor=gm)
            outcome = horror.exposure_outcome(rolled)
            outcomes.append(
                (
                    exposure.character.name,
                    rolled.exempt,
                    bool(outcome and outcome.test and outcome.test.success),
                    _sheet(exposure.character).mental_meter.lost - before,
                )
            )
        story_post(story.horror_narration(outcomes))

    # Private rolls (sealed in the log): a whisper from Inés to Tomás with a
    # roll, and two secret rolls of the GM, one of them revealed.
    whisper = campaign_services.post_create(
        access=campaign_access(ana, campaign),
        scene=cellar,
        voice=Post.Voice.CHARACTER,
        character=ines,
        body="(A Tomás, en voz baja) —He visto una llave en el cinturón de esa cosa. Voy a por ella.",
        recipients=Post.Recipients.CHOSEN,
        chosen=[bruno],
    )
    key = table.table_check(
        campaign=campaign,
        user=ana,
        setup=table.check_setup(ines, characteristic="reflejos"),
        purpose="Quitarle la llave sin que se dé cuenta",
        difficulty=20,
        character=ines,
        scene=cellar,
        post=whisper,
    )
    secret.secret_check_roll(
        scene=cellar,
        user=gm,
        purpose="¿Oye la criatura el susurro de Inés?",
        character=creature,
        characteristic="intelecto",
        difficulty=15,
    )
    revealed = secret.secret_free_roll(
        scene=cellar, user=gm, notation="1d6", purpose="¿Cuántos escalones faltan hasta el agua?"
    )
    # The narrator answers the whisper to the two of them only.
    _narrate(
        access=gm_access, scene=cellar, body=story.key_narration(success=_result(key).success), chosen=[ana, bruno]
    )
    secret.secret_roll_reveal(entry=revealed, user=gm, access=gm_access)
    story_post(story.steps_left_narration(steps=revealed.signed_game["total"]))
