"""Over-long and malformed input never reaches the database (issue #11, item 7).

``FORMS`` is a registry of every form of the site (the apps campaigns, sheets,
accounts and rolls): the view each is sent to, who may send it, valid data,
and its text and number fields. From it:

* every text field is sent one character over its limit (a line of a "one per
  line" text area too): the answer is not a server error, it carries the
  exact Spanish message, the text comes back where the user can see it, and
  not one row of the database changed;
* every text field is sent exactly at its limit: it is saved, whole (on
  PostgreSQL this proves the limit is no longer than the column);
* every number field is sent a huge number: a Spanish form error, nothing saved;
* a form class of our apps missing from the registry, or a text or number
  field a registered form has and the registry does not list, fails a test.

To register a new form, add ``FormClass: (Target(...),)`` to ``FORMS``:
``view`` (its URL name, for the test ids), ``url`` and ``data`` (functions of
the ``World`` below: where to send it and a complete valid submission),
``user`` (a ``World`` attribute, or "anonymous"), ``form`` (the form as its
view builds it, for the field check), ``text`` and ``numbers`` (the field
names; "{ines}" stands for the pk of Inés, for per-character fields), and
``prefix`` when the view gives the form one. A Vaesen form is sent in the
world's Vaesen campaign (``w.vaesen``, ``w.vaesen_url``; test ids name its
package: ``vaesen.sheet.SheetForm``). A text field whose value is
split into rows goes in ``LINES`` with the limit of one row; a new field that
is a new kind of value (a code, an address) may need a generator in
``VALUES``. A form with no text or number field goes in ``NOT_TYPED``, with
why. A new field of a registered form (a checkbox, say) only needs valid data
in its target's ``data`` when it is required.
"""

from __future__ import annotations

import json
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from functools import cached_property
from html import escape
from importlib import import_module

import pytest
from django import forms
from django.apps import apps
from django.contrib.auth.signals import user_login_failed
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.forms import BackgroundPasswordResetForm, LoginForm, ProfileForm, SignUpForm
from accounts.limits import max_length_of
from accounts.models import User
from campaigns import absences as campaign_absences
from campaigns import deadlines as campaign_deadlines
from campaigns import notify
from campaigns import services as campaign_services
from campaigns.forms import (
    ApplicationForm,
    CampaignForm,
    DecisionForm,
    InvitationForm,
    OptionalReasonForm,
    PostEditForm,
    PostForm,
    ReasonForm,
    RoleForm,
    SceneForm,
    SearchForm,
)
from campaigns.forms_absences import AbsenceForm, ConsentForm
from campaigns.forms_waiting import NudgeForm, SceneDeadlineForm, SettleForm
from campaigns.models import Absence, Campaign, Deadline, Membership, Post, Role, Scene, SceneRead
from campaigns.permissions import campaign_access
from rolls import services as roll_services
from rolls.forms import CLIENT_SEED_MAX_LENGTH, CLIENT_SEED_MESSAGE, FreeRollForm
from rolls.forms_checkpoints import CheckpointSubscriptionForm
from rolls.models import CampaignLog
from rules.aventuras import HeroSpend
from sheets.forms import SheetOptionsForm
from sheets.models import Character
from systems.aventuras.contests import forms as aventuras_contest_forms
from systems.aventuras.contests import reactions as aventuras_reactions
from systems.aventuras.contests import services as aventuras_contests
from systems.aventuras.heroes import forms as aventuras_hero_forms
from systems.aventuras.models import AventurasState
from systems.aventuras.rolls import forms as aventuras_roll_forms
from systems.aventuras.rolls import services as aventuras_rolls
from systems.aventuras.sheet import forms as aventuras_forms
from systems.hitos.activations.forms import DramaPoolForm, NarrativeForm, NegativeActivationForm, PositiveActivationForm
from systems.hitos.checks.forms import PostRollForm, RollRequestForm
from systems.hitos.checks.services import check_setup, table_check
from systems.hitos.combat import services as combat_services
from systems.hitos.combat.forms import (
    AttackForm,
    CombatantAddForm,
    CombatantStateForm,
    CombatStartForm,
    DamageApplyForm,
    DelayForm,
    EffectForm,
    InitiativeForm,
    RoundDeadlineForm,
    ShiftForm,
)
from systems.hitos.horror import services as horror
from systems.hitos.horror.forms import ExposureRollForm, HorrorStartForm, OpposedStartForm
from systems.hitos.models import Aspect, Attack, Combatant, HitosSheet, HorrorExposure, SceneAspect, Skill
from systems.hitos.options.forms import CampaignOptionsForm
from systems.hitos.secret.forms import SecretRollForm
from systems.hitos.sheet import services as sheet_services
from systems.hitos.sheet.forms import (
    SECUELA_MAX,
    AspectActionForm,
    AspectForm,
    DramaForm,
    ImportForm,
    MeterForm,
    NewSceneForm,
    NewSessionForm,
    NotesForm,
    NpcForm,
    ReviewForm,
    SheetForm,
    SkillForm,
    WeaponForm,
)
from systems.vaesen.combat import forms as vaesen_combat
from systems.vaesen.combat import services as vaesen_combat_services
from systems.vaesen.fear import forms as vaesen_fear_forms
from systems.vaesen.fear import opposed as vaesen_opposed
from systems.vaesen.fear import services as vaesen_fear
from systems.vaesen.healing import forms as vaesen_healing_forms
from systems.vaesen.models import VaesenAction, VaesenInjury, VaesenSheet
from systems.vaesen.options import forms as vaesen_options_forms
from systems.vaesen.options import tables as vaesen_tables
from systems.vaesen.rolls import forms as vaesen_roll_forms
from systems.vaesen.rolls import services as vaesen_rolls
from systems.vaesen.sheet import forms as vaesen_forms
from systems.vaesen.sheet import services as vaesen_sheet_services
from table import takeover as takeover_services
from table.forms import TablePostForm, TakeoverEndForm, TakeoverForm
from table.models import TableRoll
from tests.conftest import World as PlayWorld
from tests.conftest import chosen_dice
from tests.factories import CampaignFactory, UserFactory, client_seed, make_post
from tests.systems.aventuras.conftest import aventuras_character
from tests.systems.vaesen.conftest import vaesen_character

APPS = ("accounts", "campaigns", "sheets", "rolls", "table", "systems")


# --- the world every form is sent in -------------------------------------------------------


class World(PlayWorld):
    """The shared world of tests/conftest.py (a GM; Ana with Inés and Bruno
    with Tomás, approved; a reader; an outsider; an NPC; an open scene with a
    post by Ana; ``client(who)`` logs in as one of them) and, made when a form
    first needs them, the other things forms act on."""

    def url(self, name: str, *args) -> str:
        return reverse(name, args=[self.campaign.slug, *args])

    def scene_url(self, name: str, *args) -> str:
        return self.url(name, self.scene.pk, *args)

    def sheet_url(self, name: str, character: Character, *args) -> str:
        return self.url(name, character.pk, *args)

    @property
    def ids(self) -> dict[str, int]:
        return {"ines": self.ines.pk}

    @property
    def head(self) -> str:
        return CampaignLog.objects.get(campaign=self.campaign).head_hash

    @cached_property
    def bruno_away(self) -> Absence:
        """Bruno is away this week and lets the direction play Tomás."""
        today = campaign_absences.campaign_today(self.campaign)
        Membership.objects.filter(campaign=self.campaign, user=self.bruno).update(takeover_consent="gm")
        return Absence.objects.create(
            campaign=self.campaign, user=self.bruno, starts_on=today, ends_on=today + timedelta(days=3)
        )

    @cached_property
    def takeover(self):
        """The GM plays Tomás while Bruno is away."""
        self.bruno_away  # noqa: B018 (made when first asked for)
        return takeover_services.takeover_start(
            access=campaign_access(self.gm, self.campaign),
            character=self.tomas,
            taken_by=self.gm,
            scene=None,
            reason="De viaje.",
        )

    @cached_property
    def passed_deadline(self) -> Deadline:
        """The scene's deadline, passed an hour ago: the direction settles it."""
        deadline = campaign_deadlines.set_deadline(
            campaign=self.campaign,
            scene=self.scene,
            kind=campaign_deadlines.SCENE,
            target_id=self.scene.pk,
            due_at=timezone.now() + timedelta(days=2),
            actor=self.gm,
        )
        Deadline.objects.filter(pk=deadline.pk).update(due_at=timezone.now() - timedelta(hours=1))
        return deadline

    @cached_property
    def applicant(self):
        return UserFactory(display_name="Aspirante")

    @cached_property
    def application(self):
        return campaign_services.application_create(campaign=self.campaign, user=self.applicant, text="Quiero jugar.")

    @cached_property
    def report(self):
        return campaign_services.post_report(post=self.post, reporter=self.bruno, reason="Se adelanta.")

    @cached_property
    def submitted(self) -> Character:
        """A sheet Bruno sent to the GM for review."""
        lucia = Character.objects.create(
            campaign=self.campaign, owner=self.bruno, name="Lucía", status=Character.Status.SUBMITTED
        )
        HitosSheet.objects.create(character=lucia)
        return lucia

    @cached_property
    def table_roll(self) -> TableRoll:
        """Inés's roll in the scene, for an activation against it."""
        return table_check(
            campaign=self.campaign,
            user=self.ana,
            setup=check_setup(self.ines, characteristic="reflejos", skill="Sigilo"),
            purpose="Cruzar el vestíbulo sin ruido",
            difficulty=15,
            character=self.ines,
            scene=self.scene,
            post=self.post,
            client_seed=client_seed(),
        )

    @cached_property
    def attack_above_mcm(self) -> Attack:
        """Inés's hit with a weapon above mCM: its extra die is drawn when the damage is applied (H51)."""
        weapon = self.ines.weapons.create(name="Cañón", damage_code="mCM+1d10", melee=False)
        with chosen_dice([9, 3, 7]):
            return combat_services.attack_make(
                combat=self.combat,
                access=campaign_access(self.gm, self.campaign),
                attacker=self.combatant(self.ines),
                target=self.combatant(self.npc),
                weapon=weapon,
            )

    @cached_property
    def scene_aspect(self) -> SceneAspect:
        """An aspect of the scene Ana can activate for Inés's roll."""
        return SceneAspect.objects.create(scene=self.scene, phrase="Oscuridad")

    @cached_property
    def combat(self):
        return combat_services.combat_start(
            scene=self.scene, access=campaign_access(self.gm, self.campaign), characters=[self.ines, self.npc]
        )

    def combatant(self, character: Character) -> Combatant:
        return Combatant.objects.get(combat=self.combat, character=character)

    @cached_property
    def attack(self) -> Attack:
        """Inés's critical on the NPC (H47: a double ten): it hits, and the
        GM has a secuela to confirm or dismiss (H48)."""
        with chosen_dice([10, 4, 10]):
            return combat_services.attack_make(
                combat=self.combat,
                access=campaign_access(self.gm, self.campaign),
                attacker=self.combatant(self.ines),
                target=self.combatant(self.npc),
                weapon=self.ines.weapons.get(),
            )

    @cached_property
    def exposure(self) -> HorrorExposure:
        test = horror.horror_start(
            scene=self.scene, actor=self.gm, level="desasosiego", description="Un grito", exposures=[(self.ines, 0, "")]
        )
        return HorrorExposure.objects.get(test=test)

    def skill_named(self, length: int) -> str:
        """A skill name of ``length`` characters; Inés has the skill when the
        name fits the column (a request can only ask for a skill the sheet has)."""
        name = "h" * length
        if length <= max_length_of(Skill, "name"):
            Skill.objects.get_or_create(character=self.ines, name=name, defaults={"category": "cultura", "value": 2})
        return name

    # --- Vaesen

    @cached_property
    def vaesen(self) -> VaesenPlay:
        """A Vaesen campaign of the same GM: Ana with the approved «Elsa»,
        Bruno with «Gustav» sent for review, the GM's human NPC (Resistencia
        3), an open scene and the campaign's roll log."""
        campaign = CampaignFactory(title="El molino", gm=self.gm, system="vaesen")
        roll_services.log_open(campaign=campaign)
        for member in (self.ana, self.bruno):
            Membership.objects.create(campaign=campaign, user=member, role=Role.PLAYER)
        scene = Scene.objects.create(campaign=campaign, title="El puente")
        elsa = vaesen_character(
            campaign, self.ana, "Elsa", fisico=3, precision=4, logica=3, empatia=2, skills={"Agilidad": 2}
        )
        gustav = vaesen_character(campaign, self.bruno, "Gustav", status=Character.Status.SUBMITTED)
        miller = vaesen_character(
            campaign,
            self.gm,
            "El molinero",
            kind=Character.Kind.NPC,
            npc_kind=VaesenSheet.NpcKind.HUMAN,
            resistance=3,
        )
        return VaesenPlay(campaign=campaign, scene=scene, pc=elsa, submitted=gustav, npc=miller)

    def vaesen_url(self, name: str, *args) -> str:
        return reverse(name, args=[self.vaesen.campaign.slug, *args])

    @cached_property
    def vaesen_injury(self) -> VaesenInjury:
        return vaesen_sheet_services.add_injury(
            self.vaesen.pc,
            kind="físico",
            roll_value=None,
            name="Costilla rota",
            effect="",
            time_limit="un día",
            actor=self.gm,
            reason="",
        )

    @cached_property
    def failed_test(self) -> TableRoll:
        """A failed test of Elsa's (Físico 3 + Agilidad 2 against ten
        successes) in a post of Ana's, with dice to push (V6)."""
        v = self.vaesen
        for _try in range(40):
            post = make_post(v.scene, self.ana, voice=Post.Voice.CHARACTER, character=v.pc)
            table_roll = vaesen_rolls.table_test(
                campaign=v.campaign,
                user=self.ana,
                setup=vaesen_rolls.pool_setup(v.pc, attribute="físico", skill="Agilidad", needed=10),
                purpose="Cruzar el puente",
                character=v.pc,
                scene=v.scene,
                post=post,
                client_seed=client_seed(),
            )
            if table_roll.facts["can_push"]:
                return table_roll
        raise AssertionError("forty tests of five dice were all sixes")

    @cached_property
    def breaking_push(self) -> TableRoll:
        """The failed test pushed with the three physical conditions marked:
        Elsa is Broken and a critical injury is to be rolled (V10, V13)."""
        table_roll = self.failed_test
        sheet = self.vaesen.pc.vaesen
        sheet.physical_conditions = ["Exhausto", "Magullado", "Herido"]
        sheet.save()
        vaesen_rolls.push(table_roll=table_roll, user=self.ana)
        table_roll.refresh_from_db()
        return table_roll

    @cached_property
    def terrified(self) -> Character:
        """Elsa, Aterrorizado for three more rounds: the GM may end it (V27)."""
        VaesenSheet.objects.filter(pk=self.vaesen.pc.pk).update(terrified_rounds=3, terror_reaction="Huida")
        return self.vaesen.pc

    @cached_property
    def karl(self) -> Character:
        """Bruno's approved «Karl», who heals Elsa (V29: never himself)."""
        return vaesen_character(self.vaesen.campaign, self.bruno, "Karl", skills={"Medicina": 2})

    @cached_property
    def fear_test(self) -> dict:
        """An open fear test of Fear 10 for Elsa (V26)."""
        v = self.vaesen
        return vaesen_fear.fear_start(
            scene=v.scene, actor=self.gm, characters=[v.pc], fear=10, creature=None, against="Un grito en el molino"
        )

    @cached_property
    def failed_fear(self) -> TableRoll:
        """Elsa's fear test, failed (three dice of Lógica never make ten
        successes): its failure is to be accepted (V27)."""
        v = self.vaesen
        return vaesen_fear.fear_roll(
            scene=v.scene, actor=self.ana, test_id=self.fear_test["id"], character=v.pc, attribute="lógica"
        )

    @cached_property
    def opposed(self) -> dict:
        """An open opposed roll (V14): Elsa's Físico against the miller's three dice."""
        v = self.vaesen
        return vaesen_opposed.opposed_start(
            scene=v.scene,
            actor=self.gm,
            purpose="Echar un pulso",
            sides=[(v.pc, "físico", "", None), (v.npc, "", "", 3)],
        )

    @cached_property
    def vaesen_action(self) -> VaesenAction:
        """An attack between Elsa and the miller, waiting for its target's reaction (V21)."""
        v = self.vaesen
        access = campaign_access(self.gm, v.campaign)
        combat = vaesen_combat_services.combat_start(scene=v.scene, access=access, characters=[v.pc, v.npc])
        vaesen_combat_services.initiative_roll(combat=combat, access=access)
        combat.refresh_from_db()
        combatants = list(combat.combatants.select_related("character__vaesen").order_by("order"))
        actor = vaesen_combat_services.current(combat, combatants)
        target = next(c for c in combatants if c.pk != actor.pk)
        return vaesen_combat_services.declare(
            combat=combat, access=access, actor=actor, kind=VaesenAction.Kind.ATTACK, target=target
        )

    # --- Hora de Aventuras

    @cached_property
    def aventuras(self) -> AventurasPlay:
        """A Hora de Aventuras campaign of the same GM: Ana with the approved
        hero «Palomita» (Cachas 3 and Majo 4 highlighted; 5 hero points, 4 XP;
        the feat «Aullido» that needs a hero point, A23; the state
        «Hambriento»; a health level lost) and a post of hers in the open
        scene (her turn, A24), Bruno with the approved «Tarta Dulce» and
        «Marceline» sent for review, the GM's NPC «Profesor Cacahuete»."""
        campaign = CampaignFactory(title="La tierra de Ooo", gm=self.gm, system="aventuras")
        roll_services.log_open(campaign=campaign)
        for member in (self.ana, self.bruno):
            Membership.objects.create(campaign=campaign, user=member, role=Role.PLAYER)
        scene = Scene.objects.create(campaign=campaign, title="La puerta del acertijo")
        palomita = aventuras_character(
            campaign,
            self.ana,
            "Palomita",
            cachas=3,
            majo=4,
            highlighted=["cachas", "majo"],
            experience=4,
            health_lost=1,
            flaw="Le pueden los acertijos",
        )
        palomita.aventuras.feats.create(name="Aullido", description="Asusta a los malos", needs_hero_point=True)
        state = AventurasState.objects.create(sheet=palomita.aventuras, name="Hambriento", modifier=-1)
        make_post(scene, self.ana, voice=Post.Voice.CHARACTER, character=palomita)
        tarta = aventuras_character(campaign, self.bruno, "Tarta Dulce", espabilado=4, highlighted=["espabilado"])
        marceline = aventuras_character(campaign, self.bruno, "Marceline", status=Character.Status.SUBMITTED)
        cacahuete = aventuras_character(
            campaign, self.gm, "Profesor Cacahuete", kind=Character.Kind.NPC, espabilado=3, highlighted=["espabilado"]
        )
        return AventurasPlay(
            campaign=campaign, scene=scene, pc=palomita, other_pc=tarta, submitted=marceline, npc=cacahuete, state=state
        )

    def aventuras_url(self, name: str, *args) -> str:
        return reverse(name, args=[self.aventuras.campaign.slug, *args])

    @cached_property
    def chachi_roll(self) -> TableRoll:
        """Palomita's roll of six dice (Majo 4 + 2) in a post of Ana's, with a
        6 still open (A5: to convert, A12: to spend on an effect)."""
        a = self.aventuras
        for _try in range(60):
            post = make_post(a.scene, self.ana, voice=Post.Voice.CHARACTER, character=a.pc)
            table_roll = aventuras_rolls.make_roll(
                campaign=a.campaign,
                user=self.ana,
                setup=aventuras_rolls.roll_setup(a.pc, attribute="majo", modifier=2),
                purpose="Abrir la puerta del acertijo",
                character=a.pc,
                scene=a.scene,
                post=post,
                client_seed=client_seed(),
            )
            if aventuras_rolls.open_chachis(table_roll.facts):
                return table_roll
        raise AssertionError("sixty rolls of six dice without a 6")

    @property
    def chachi_position(self) -> str:
        """The open 6 of ``chachi_roll`` as the card sends it (1 is the first die)."""
        return str(aventuras_rolls.open_chachis(self.chachi_roll.facts)[0] + 1)

    @cached_property
    def aventuras_contestant(self):
        """Palomita's side in a competition against the NPC (A13), not rolled yet."""
        a = self.aventuras
        contest = aventuras_contests.contest_create(
            scene=a.scene,
            access=campaign_access(self.gm, a.campaign),
            kind="competition",
            title="La carrera tras el caballo",
            sides=[aventuras_contests.Side(a.pc, "cachas", 0), aventuras_contests.Side(a.npc, "espabilado", 1)],
        )
        return contest.contestants.get(character=a.pc)

    @cached_property
    def aventuras_reaction(self):
        """Palomita's action against Tarta Dulce: Bruno's open reaction (A14, A18)."""
        a = self.aventuras
        action = aventuras_rolls.make_roll(
            campaign=a.campaign,
            user=self.ana,
            setup=aventuras_rolls.roll_setup(a.pc, attribute="cachas", difficulty=1),
            purpose="Atizar",
            character=a.pc,
            scene=a.scene,
        )
        (reaction,) = aventuras_reactions.open_reactions(action, [a.other_pc], by=self.ana)
        return reaction


@dataclass(frozen=True)
class VaesenPlay:
    campaign: Campaign
    scene: Scene
    pc: Character
    submitted: Character
    npc: Character


@dataclass(frozen=True)
class AventurasPlay:
    campaign: Campaign
    scene: Scene
    pc: Character
    other_pc: Character
    submitted: Character
    npc: Character
    state: AventurasState


@pytest.fixture
def world(db) -> World:
    return World.build()


# --- valid submissions ---------------------------------------------------------------------


def _sheet_data(w: World, **extra) -> dict[str, str]:
    data = {
        "name": "Rosa Quiroga",
        "concept": "Médica de pueblo",
        "cita": "Nada que no cure el reposo.",
        "fortaleza": "5",
        "reflejos": "5",
        "voluntad": "5",
        "intelecto": "5",
        "trait_fortaleza": "Manos firmes",
        "trait_reflejos": "",
        "trait_voluntad": "",
        "trait_intelecto": "Ojo clínico",
        "hitos": "Estudió en Salamanca\nSalvó al alcalde",
        "complications": "Debe dinero al boticario",
        "drama": "5",
        "degeneracion": "0",
        "armour": "Abrigo de cuero",
        "rd": "0",
        "secuelas_temporales": "",
        "secuelas_permanentes": "Cicatriz en la mano",
        "public_description": "Alta, con gafas.",
        "private_notes": "Busca a su hermano.",
        "skills-TOTAL_FORMS": "0",
        "skills-INITIAL_FORMS": "0",
        "weapons-TOTAL_FORMS": "0",
        "weapons-INITIAL_FORMS": "0",
    }
    data.update(extra)
    return data


def _skill_row(w: World) -> dict[str, str]:
    return _sheet_data(
        w,
        **{
            "skills-TOTAL_FORMS": "1",
            "skills-0-name": "Medicina",
            "skills-0-category": "profesion",
            "skills-0-value": "3",
        },
    )


def _weapon_row(w: World) -> dict[str, str]:
    return _sheet_data(
        w,
        **{
            "weapons-TOTAL_FORMS": "1",
            "weapons-0-name": "Bisturí",
            "weapons-0-damage_code": "C",
            "weapons-0-melee": "1",
            "weapons-0-notes": "Afilado",
        },
    )


def _npc_data(w: World) -> dict[str, str]:
    return {
        "name": "El sereno",
        "concept": "Vigila de noche",
        "fortaleza": "5",
        "reflejos": "5",
        "voluntad": "5",
        "intelecto": "5",
        "rd": "1",
        "damage_code": "M",
        "gm_notes": "Sabe más de lo que dice.",
        "skills-TOTAL_FORMS": "0",
        "skills-INITIAL_FORMS": "0",
    }


def _prefixed(prefix: str, **data: str) -> dict[str, str]:
    return {f"{prefix}-{name}": value for name, value in data.items()}


def _post_data(w: World, **extra) -> dict[str, str]:
    data = {
        "voice": "npc",
        "npc_name": "El tabernero",
        "body": "Cierren la puerta, que entra el frío.",
        "note": "Llueve desde ayer.",
        "recipients": "all",
        "submission_key": client_seed(),
        "answer_seed": client_seed(),
    }
    data.update(extra)
    return data


def _post_roll_data(w: World) -> dict[str, str]:
    data = _post_data(w, voice=f"character:{w.ines.pk}", npc_name="")
    row = {
        "characteristic": "reflejos",
        "skill": "Sigilo",
        "reason_1": "Barro",
        "value_1": "-1",
        "reason_2": "Buena luz",
        "value_2": "1",
        "difficulty": "15",
        "purpose": "Cruzar sin ruido",
        "client_seed": client_seed(),
    }
    data.update({f"tirada-0-{name}": value for name, value in row.items()})
    return data


def _opposed_data(w: World) -> dict[str, str]:
    data = {"purpose": "Quién llega antes a la puerta", "tie_allowed": "", "client_seed": client_seed()}
    for side, character in (("primero", w.ines), ("segundo", w.tomas)):
        data.update(
            {
                f"{side}_personaje": str(character.pk),
                f"{side}_caracteristica": "reflejos",
                f"{side}_habilidad": "",
                f"{side}_modificador": "1",
                f"{side}_motivo": "Empieza cerca",
            }
        )
    return data


VAESEN_SKILLS = tuple(vaesen_forms.skill_field_name(skill) for skill, _label in vaesen_forms.SKILL_CHOICES)
VAESEN_ATTRIBUTES = ("fisico", "precision", "logica", "empatia")


def _vaesen_sheet_data(w: World, **extra) -> dict[str, str]:
    data = {
        "name": "Gustav Lind",
        "archetype": "Escritor",
        "age": "41",
        "motivation": "Escribir lo que nadie cree",
        "trauma": "Vio arder la casa de sus padres",
        "dark_secret": "Firmó con el nombre de otro",
        "relationships": "Elsa: me salvó en el puente",
        "talents": "Erudito",
        "insights": "",
        "defects": "Bebe",
        "resources": "2",
        "armour": "Abrigo grueso",
        "armour_protection": "1",
        "armour_agility_penalty": "0",
        "fisico": "2",
        "precision": "3",
        "logica": "5",
        "empatia": "4",
        **dict.fromkeys(VAESEN_SKILLS, ""),
        "skill_6": "3",
        "public_description": "Gafas redondas.",
        "private_notes": "Busca a su editor.",
        "items-TOTAL_FORMS": "0",
        "items-INITIAL_FORMS": "0",
        "weapons-TOTAL_FORMS": "0",
        "weapons-INITIAL_FORMS": "0",
    }
    data.update(extra)
    return data


def _vaesen_npc_data(w: World) -> dict[str, str]:
    data = _vaesen_sheet_data(w, name="La lavandera", npc_kind="human", resistance="3", fear="", gm_notes="Miente.")
    for name in vaesen_forms.PC_ONLY + ("private_notes",):
        data.pop(name, None)
    return data


def _vaesen_item_row(w: World) -> dict[str, str]:
    return _vaesen_sheet_data(
        w,
        **{
            "items-TOTAL_FORMS": "1",
            "items-0-name": "Ganzúas",
            "items-0-bonus": "1",
            "items-0-skill": "Sigilo",
            "items-0-availability": "2",
        },
    )


def _vaesen_weapon_row(w: World) -> dict[str, str]:
    return _vaesen_sheet_data(
        w,
        **{
            "weapons-TOTAL_FORMS": "1",
            "weapons-0-name": "Bastón",
            "weapons-0-skill": "Combate cuerpo a cuerpo",
            "weapons-0-damage": "1",
            "weapons-0-bonus": "0",
            "weapons-0-range": "Brazo",
        },
    )


def _vaesen_post_data(w: World, voice: str, **row: str) -> dict[str, str]:
    data = {"voice": voice, "body": "Cruzo el puente.", "recipients": "all", "submission_key": client_seed()}
    data.update({f"tirada-0-{name}": value for name, value in row.items()})
    return data


def _vaesen_test_data(w: World) -> dict[str, str]:
    return _vaesen_post_data(
        w,
        f"character:{w.vaesen.pc.pk}",
        attribute="físico",
        skill="Agilidad",
        helpers="1",
        modifier="1",
        needed="2",
        purpose="Cruzar el puente helado",
        client_seed=client_seed(),
    )


def _vaesen_scene_url(w: World, name: str, *args) -> str:
    return w.vaesen_url(name, w.vaesen.scene.pk, *args)


def _vaesen_combat_url(w: World, name: str) -> str:
    """A new combat of Elsa and the miller, before its initiative (and its ambush, V25)."""
    v = w.vaesen
    combat = vaesen_combat_services.combat_start(
        scene=v.scene, access=campaign_access(w.gm, v.campaign), characters=[v.pc, v.npc]
    )
    return _vaesen_scene_url(w, name, combat.pk)


def _vaesen_ambush_data(w: World) -> dict[str, str]:
    """Elsa ambushes the miller, in the combat ``_vaesen_combat_url`` opened."""
    combat = w.vaesen.scene.vaesen_combats.get(ended_at__isnull=True)
    elsa, miller = (combat.combatants.get(character=c).pk for c in (w.vaesen.pc, w.vaesen.npc))
    return {"roller": str(elsa), "watcher": str(miller), "ambushers": str(elsa), "client_seed": client_seed()}


def _vaesen_owed_injury_url(w: World) -> str:
    """Elsa owes the critical injury of the sheet's «Sufrir» (V10)."""
    VaesenSheet.objects.filter(pk=w.vaesen.pc.pk).update(pending_injuries=["físico"])
    return w.vaesen_url("vaesen:injury-roll", w.vaesen.pc.pk)


def _vaesen_opposed_data(w: World) -> dict[str, str]:
    """Elsa's Físico against the miller's free pool (only an NPC has one)."""
    v = w.vaesen
    return {
        "purpose": "Quién sujeta la rueda",
        "character_1": str(v.pc.pk),
        "attribute_1": "físico",
        "skill_1": "",
        "pool_1": "",
        "character_2": str(v.npc.pk),
        "attribute_2": "",
        "skill_2": "",
        "pool_2": "3",
    }


def _vaesen_options_data(w: World) -> dict[str, str]:
    return {
        "players_mark_own_conditions": "",
        "npc_penalty": "cada_prueba",
        "initiative_mode": "d10",
        "injuries_physical": "11-16 | Costilla rota | −1 a Agilidad | un día",
        "injuries_mental": "11 | Pesadillas",
    }


def _vaesen_pool_data(w: World) -> dict[str, str]:
    """The GM's free pool (only the GM rolls one)."""
    data = _vaesen_post_data(w, "npc", free_pool="4", needed="1", purpose="¿Cede el puente?", client_seed=client_seed())
    data["npc_name"] = "El barquero"
    return data


AVENTURAS_ATTRIBUTES = ("cachas", "cerebrito", "espabilado", "majo")


def _aventuras_sheet_data(w: World, **extra) -> dict[str, str]:
    data = {
        "name": "Finn",
        "concept": "Humano aventurero",
        "highlighted": "cachas",
        "cachas": "4",
        "cerebrito": "",
        "espabilado": "",
        "majo": "",
        "health": "5",
        "flaw": "Impulsivo",
        "flaw_earns": "Se lanza sin pensar para salvar a alguien",
        "public_description": "Lleva un gorro de oso.",
        "private_notes": "Busca a su madre.",
        "feats-TOTAL_FORMS": "0",
        "feats-INITIAL_FORMS": "0",
        "tools-TOTAL_FORMS": "0",
        "tools-INITIAL_FORMS": "0",
    }
    data.update(extra)
    return data


def _aventuras_npc_data(w: World) -> dict[str, str]:
    data = _aventuras_sheet_data(w, name="Rey Helado", gm_notes="Secuestra princesas.")
    for name in aventuras_forms.PC_ONLY:
        data.pop(name, None)
    return data


def _aventuras_feat_row(w: World) -> dict[str, str]:
    return _aventuras_sheet_data(
        w,
        **{
            "feats-TOTAL_FORMS": "1",
            "feats-0-name": "Puñetazo heroico",
            "feats-0-description": "Tumba a un enemigo",
            "feats-0-needs_hero_point": "on",
        },
    )


def _aventuras_tool_row(w: World) -> dict[str, str]:
    return _aventuras_sheet_data(
        w,
        **{
            "tools-TOTAL_FORMS": "1",
            "tools-0-name": "Espada de demonio",
            "tools-0-attribute": "cachas",
            "tools-0-bonus": "1",
            "tools-0-uses": "Zurrar a los malos",
        },
    )


def _aventuras_sheet_url(w: World, name: str, *args) -> str:
    return w.aventuras_url(name, w.aventuras.pc.pk, *args)


def _aventuras_hero_url(w: World, name: str, *args) -> str:
    return w.aventuras_url(name, w.aventuras.pc.pk, *args)


def _aventuras_scene_url(w: World, name: str, *args) -> str:
    return w.aventuras_url(name, w.aventuras.scene.pk, *args)


def _aventuras_roll_data(w: World) -> dict[str, str]:
    """A row of the post form: Palomita's Majo against difficulty 1 (A1, A8)."""
    a = w.aventuras
    data = {"voice": f"character:{a.pc.pk}", "body": "Palomita aúlla.", "recipients": "all"}
    data["submission_key"] = client_seed()
    row = {
        "attribute": "majo",
        "difficulty": "1",
        "action_kind": "",
        "modifier": "1",
        "easier": "1",
        "harder": "0",
        "purpose": "Abrir la puerta del acertijo",
        "client_seed": client_seed(),
    }
    data.update({f"tirada-0-{name}": value for name, value in row.items()})
    return data


def _spend_target(use: HeroSpend, target: Callable[[World], str], options: Callable[[World], list]) -> Target:
    """A23 — a hero point spent on ``use`` from Palomita's panel (the form's prefix is the use's)."""
    prefix = aventuras_hero_forms.SPEND_USES[use][0]
    return Target(
        "aventuras:hero-spend",
        lambda w: _aventuras_hero_url(w, "aventuras:hero-spend", prefix),
        "ana",
        lambda w: _prefixed(prefix, scene=str(w.aventuras.scene.pk), target=target(w), why="Para salvar a Finn"),
        lambda w: aventuras_hero_forms.SpendForm(use=use, options=options(w), scenes=[w.aventuras.scene]),
        text=("why",),
        prefix=prefix,
    )


# --- the registry ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """Where a form is sent, by whom, with what (see the module docstring)."""

    view: str
    url: Callable[[World], str]
    user: str
    data: Callable[[World], dict[str, str]]
    form: Callable[[World], forms.BaseForm]
    text: tuple[str, ...] = ()
    numbers: tuple[str, ...] = ()
    # The form's prefix, or a function of the world when the view's has an id in it.
    prefix: str | Callable[[World], str] = ""
    method: str = "post"
    # The view answers a refused form with a redirect and the form's errors as
    # a message (the combat page's small inline forms): the text is not shown again.
    echoes: bool = True
    # A known bug of the view that keeps the over-limit cases from passing:
    # what it is. Those cases are strict xfails: once it is fixed they fail
    # until the note goes.
    gap: str = ""

    def key(self, name: str, w: World) -> str:
        """A field's name in the request."""
        name = name.format(**w.ids)
        prefix = self.prefix(w) if callable(self.prefix) else self.prefix
        return f"{prefix}-{name}" if prefix else name


FORMS: dict[type[forms.BaseForm], tuple[Target, ...]] = {
    # --- accounts
    LoginForm: (
        Target(
            "accounts:login",
            lambda w: reverse("accounts:login"),
            "anonymous",
            lambda w: {"username": w.ana.username, "password": "clave-de-prueba-123"},
            lambda w: LoginForm(),
            text=("username",),
        ),
    ),
    SignUpForm: (
        Target(
            "accounts:signup",
            lambda w: reverse("accounts:signup"),
            "anonymous",
            lambda w: {
                "username": "nueva",
                "email": "nueva@example.org",
                "password1": "clave-de-prueba-123",
                "password2": "clave-de-prueba-123",
            },
            lambda w: SignUpForm(),
            text=("username", "email"),
        ),
    ),
    BackgroundPasswordResetForm: (
        Target(
            "accounts:password-reset",
            lambda w: reverse("accounts:password-reset"),
            "anonymous",
            lambda w: {"email": w.ana.email},
            lambda w: BackgroundPasswordResetForm(),
            text=("email",),
        ),
    ),
    ProfileForm: (
        Target(
            "accounts:profile",
            lambda w: reverse("accounts:profile"),
            "ana",
            lambda w: {
                "display_name": "Ana María",
                "language": "",
                "email_notifications": "digest",
                "time_zone": "America/Bogota",
                "takeover_consent": "gm",
            },
            lambda w: ProfileForm(instance=w.ana),
            text=("display_name",),
        ),
    ),
    # --- campaigns
    AbsenceForm: (
        Target(
            "campaigns:absences",
            lambda w: w.url("campaigns:absences"),
            "ana",
            lambda w: {
                "starts_on": campaign_absences.campaign_today(w.campaign).isoformat(),
                "ends_on": (campaign_absences.campaign_today(w.campaign) + timedelta(days=3)).isoformat(),
                "note": "de viaje",
                "hold_notifications": "on",
            },
            lambda w: AbsenceForm(campaign=w.campaign, user=w.ana, action="/"),
            text=("note",),
        ),
    ),
    TakeoverForm: (
        Target(
            "table:takeover-start",
            lambda w: (w.bruno_away, w.url("table:takeover-start"))[1],
            "gm",
            lambda w: {"character": w.tomas.pk, "taken_by": w.gm.pk, "scene": "", "reason": "Bruno está de viaje."},
            lambda w: TakeoverForm(
                campaign=w.campaign,
                candidates=takeover_services.candidates(w.campaign),
                direction=notify.gm_ids(w.campaign),
            ),
            text=("reason",),
        ),
    ),
    TakeoverEndForm: (
        Target(
            "table:takeover-end",
            lambda w: w.url("table:takeover-end", w.takeover.pk),
            "gm",
            lambda w: {"reason": "Ha vuelto."},
            lambda w: TakeoverEndForm(),
            text=("reason",),
        ),
    ),
    CampaignForm: (
        Target(
            "campaigns:campaign-create",
            lambda w: reverse("campaigns:campaign-create"),
            "ana",
            lambda w: {
                "title": "La isla",
                "system": "hitos",
                "visibility": "public",
                "status": "recruiting",
                "description": "Un faro.",
                "time_zone": "Europe/Madrid",
            },
            lambda w: CampaignForm(),
            text=("title", "description"),
        ),
        Target(
            "campaigns:campaign-edit",
            lambda w: w.url("campaigns:campaign-edit"),
            "gm",
            lambda w: {
                "title": "La mansión",
                "system": "hitos",
                "visibility": "public",
                "status": "playing",
                "description": "Otra vez.",
                "time_zone": "America/Bogota",
                "pace_public": "on",
            },
            lambda w: CampaignForm(instance=w.campaign),
            text=("title", "description"),
        ),
    ),
    CampaignOptionsForm: (
        Target(
            "hitos:campaign-options",
            lambda w: w.url("hitos:campaign-options"),
            "gm",
            lambda w: {
                "unprepared_penalty": "2",
                "critical_damage": "weapon_dice",
                "npc_drama": "gm_pool",
                "stabilise_difficulty": "12",
                "alterado_boundary": "at_least",
                "activation_deadline_hours": "24",
            },
            lambda w: CampaignOptionsForm(campaign=w.campaign),
            numbers=("activation_deadline_hours",),
        ),
    ),
    ApplicationForm: (
        Target(
            "campaigns:application-create",
            lambda w: w.url("campaigns:application-create"),
            "outsider",
            lambda w: {"text": "Juego los martes."},
            lambda w: ApplicationForm(),
            text=("text",),
        ),
    ),
    DecisionForm: (
        Target(
            "campaigns:application-decide",
            lambda w: w.url("campaigns:application-decide", w.application.pk),
            "gm",
            lambda w: {"decision": "accept", "answer": "Bienvenida."},
            lambda w: DecisionForm(),
            text=("answer",),
            echoes=False,
        ),
    ),
    InvitationForm: (
        Target(
            "campaigns:invitation-create",
            lambda w: w.url("campaigns:invitation-create"),
            "gm",
            lambda w: {"role": "player", "days": "7", "max_uses": "5"},
            lambda w: InvitationForm(),
            numbers=("days", "max_uses"),
        ),
    ),
    ReasonForm: (
        Target(
            "campaigns:post-report",
            lambda w: reverse("campaigns:post-report", args=[w.post.pk]),
            "bruno",
            lambda w: {"reason": "Revela un secreto."},
            lambda w: ReasonForm(),
            text=("reason",),
        ),
        Target(
            "campaigns:post-hide",
            lambda w: reverse("campaigns:post-hide", args=[w.post.pk]),
            "gm",
            lambda w: {"reason": "Fuera de tono."},
            lambda w: ReasonForm(),
            text=("reason",),
            echoes=False,
        ),
        Target(
            "campaigns:member-remove",
            lambda w: w.url("campaigns:member-remove", Membership.objects.get(campaign=w.campaign, user=w.bruno).pk),
            "gm",
            lambda w: {"reason": "No vuelve desde marzo."},
            lambda w: ReasonForm(),
            text=("reason",),
            echoes=False,
        ),
    ),
    OptionalReasonForm: (
        Target(
            "campaigns:report-resolve",
            lambda w: w.url("campaigns:report-resolve", w.report.pk),
            "gm",
            lambda w: {"reason": "No revela nada."},
            lambda w: OptionalReasonForm(),
            text=("reason",),
            echoes=False,
        ),
    ),
    SceneForm: (
        Target(
            "campaigns:scene-create",
            lambda w: w.url("campaigns:scene-create"),
            "gm",
            lambda w: {"title": "El sótano", "description": "Huele a humedad.", "everyone": "on", "aspects": "Oscuro"},
            lambda w: SceneForm(campaign=w.campaign, members=User.objects.none(), creating=True),
            text=("title", "description", "aspects"),
        ),
        Target(
            "campaigns:scene-edit",
            lambda w: w.scene_url("campaigns:scene-edit"),
            "gm",
            lambda w: {
                "title": "El vestíbulo",
                "description": "Polvo.",
                "everyone": "on",
                "aspects": "Oscuridad casi total",
                "status": "open",
                "position": "0",
            },
            lambda w: SceneForm(instance=w.scene, members=User.objects.none()),
            text=("title", "description", "aspects"),
            numbers=("position",),
        ),
    ),
    # The forum's post form is sent inside the table's.
    PostForm: (
        Target(
            "table:post-create",
            lambda w: w.scene_url("table:post-create"),
            "gm",
            _post_data,
            lambda w: PostForm(can_npc=True, members=User.objects.none()),
            text=("npc_name", "body", "note", "submission_key"),
        ),
    ),
    TablePostForm: (
        Target(
            "table:post-create",
            lambda w: w.scene_url("table:post-create"),
            "gm",
            _post_data,
            lambda w: TablePostForm(can_npc=True, members=User.objects.none()),
            text=("npc_name", "body", "note", "submission_key", "answer_seed"),
        ),
    ),
    PostRollForm: (
        Target(
            "table:post-create",
            lambda w: w.scene_url("table:post-create"),
            "ana",
            _post_roll_data,
            lambda w: PostRollForm(prefix="tirada-0"),
            text=("reason_1", "reason_2", "difficulty", "purpose", "client_seed"),
            numbers=("free_modifier", "value_1", "value_2"),
            prefix="tirada-0",
        ),
    ),
    RollRequestForm: (
        Target(
            "table:request-create",
            lambda w: w.scene_url("table:request-create"),
            "gm",
            lambda w: {
                "character": str(w.ines.pk),
                "characteristic": "intelecto",
                "skill": "",
                "modifier": "0",
                "difficulty": "15",
                "purpose": "¿Reconoces el escudo?",
            },
            lambda w: RollRequestForm(characters=[w.ines]),
            text=("skill", "difficulty", "purpose"),
            numbers=("modifier",),
        ),
    ),
    PostEditForm: (
        Target(
            "campaigns:post-edit",
            lambda w: reverse("campaigns:post-edit", args=[w.post.pk]),
            "ana",
            lambda w: {"body": "Entro sin hacer ruido.", "note": "", "reason": "Una errata."},
            lambda w: PostEditForm(),
            text=("body", "note", "reason"),
        ),
    ),
    SearchForm: (
        Target(
            "campaigns:campaign-search",
            lambda w: w.url("campaigns:campaign-search"),
            "ana",
            lambda w: {"q": "silencio"},
            lambda w: SearchForm(),
            text=("q",),
            method="get",
        ),
    ),
    # --- sheets
    SheetForm: (
        Target(
            "sheets:sheet-create",
            lambda w: w.url("sheets:sheet-create"),
            "ana",
            _sheet_data,
            lambda w: SheetForm(creating=True),
            text=(
                "name",
                "concept",
                "cita",
                "trait_fortaleza",
                "trait_reflejos",
                "trait_voluntad",
                "trait_intelecto",
                "hitos",
                "complications",
                "armour",
                "secuelas_temporales",
                "secuelas_permanentes",
                "public_description",
                "private_notes",
            ),
            numbers=("fortaleza", "reflejos", "voluntad", "intelecto", "drama", "degeneracion", "rd"),
        ),
        Target(
            "sheets:sheet-edit",
            lambda w: w.sheet_url("sheets:sheet-edit", w.ines),
            "gm",
            lambda w: _sheet_data(w, name="Inés Salcedo", drama_points="3", gm_notes="Es la heredera."),
            lambda w: SheetForm(is_gm=True),
            text=("complications", "gm_notes"),
            numbers=("drama_points",),
        ),
    ),
    NpcForm: (
        Target(
            "sheets:npc-create",
            lambda w: w.url("sheets:npc-create"),
            "gm",
            _npc_data,
            lambda w: NpcForm(),
            text=("name", "concept", "damage_code", "gm_notes"),
            numbers=("fortaleza", "reflejos", "voluntad", "intelecto", "rd"),
        ),
    ),
    SkillForm: (
        Target(
            "sheets:sheet-create",
            lambda w: w.url("sheets:sheet-create"),
            "ana",
            _skill_row,
            lambda w: SkillForm(prefix="skills-0"),
            text=("name",),
            numbers=("value",),
            prefix="skills-0",
        ),
    ),
    WeaponForm: (
        Target(
            "sheets:sheet-create",
            lambda w: w.url("sheets:sheet-create"),
            "ana",
            _weapon_row,
            lambda w: WeaponForm(prefix="weapons-0"),
            text=("name", "damage_code", "notes"),
            prefix="weapons-0",
        ),
    ),
    NotesForm: (
        Target(
            "sheets:sheet-notes",
            lambda w: w.sheet_url("sheets:sheet-notes", w.ines),
            "gm",
            lambda w: {"private_notes": "Nada.", "public_description": "Morena.", "gm_notes": "Miente."},
            lambda w: NotesForm(is_gm=True, description_allowed=True),
            text=("private_notes", "public_description", "gm_notes"),
        ),
    ),
    ReviewForm: (
        Target(
            "sheets:sheet-review",
            lambda w: w.sheet_url("sheets:sheet-review", w.submitted),
            "gm",
            lambda w: {"decision": "return", "comment": "Falta la cita."},
            lambda w: ReviewForm(),
            text=("comment",),
        ),
    ),
    MeterForm: (
        Target(
            "hitos:meter-update",
            lambda w: w.sheet_url("hitos:meter-update", w.ines, sheet_services.HEALTH),
            "gm",
            lambda w: _prefixed(
                sheet_services.HEALTH,
                action="damage",
                amount="1",
                rested="on",
                reason="Un golpe",
                post="",
                client_seed=client_seed(),
            ),
            lambda w: MeterForm(meter=sheet_services.HEALTH, campaign=w.campaign),
            text=("reason", "client_seed"),
            numbers=("amount",),
            prefix=sheet_services.HEALTH,
        ),
    ),
    DramaForm: (
        Target(
            "hitos:drama-update",
            lambda w: w.sheet_url("hitos:drama-update", w.ines),
            "gm",
            lambda w: _prefixed("drama", change="-1", reason="Salta el foso", post=""),
            lambda w: DramaForm(campaign=w.campaign),
            text=("reason",),
            prefix="drama",
        ),
    ),
    AspectForm: (
        Target(
            "hitos:aspect-create",
            lambda w: w.sheet_url("hitos:aspect-create", w.ines),
            "gm",
            lambda w: _prefixed("aspect", phrase="Empapada", duration="scene", origin="La tormenta"),
            lambda w: AspectForm(),
            text=("phrase", "origin"),
            prefix="aspect",
        ),
    ),
    NewSessionForm: (
        Target(
            "hitos:session-new",
            lambda w: w.url("hitos:session-new"),
            "gm",
            lambda w: {"reason": "Sesión del martes"},
            lambda w: NewSessionForm(),
            text=("reason",),
            echoes=False,
        ),
    ),
    NewSceneForm: (
        Target(
            "hitos:scene-new",
            lambda w: w.url("hitos:scene-new"),
            "gm",
            lambda w: {"reason": "Cambio de escena"},
            lambda w: NewSceneForm(),
            text=("reason",),
            echoes=False,
        ),
    ),
    # --- rolls
    FreeRollForm: (
        Target(
            "rolls:free-roll",
            lambda w: w.url("rolls:free-roll"),
            "ana",
            lambda w: {"notation": "2d6+1", "purpose": "Suerte", "client_seed": client_seed(), "seen": w.head},
            lambda w: FreeRollForm(),
            text=("notation", "purpose", "client_seed", "seen"),
        ),
    ),
    SecretRollForm: (
        Target(
            "hitos:secret-roll-create",
            lambda w: w.scene_url("hitos:secret-roll-create"),
            "gm",
            lambda w: {
                "character": "",
                "characteristic": "",
                "skill": "",
                "free_modifier": "2",
                "difficulty": "15",
                "notation": "",
                "purpose": "Percepción oculta",
                "client_seed": client_seed(),
                "seen": w.head,
            },
            lambda w: SecretRollForm(characters=[w.ines]),
            text=("skill", "notation", "purpose", "client_seed", "seen"),
            numbers=("free_modifier", "difficulty"),
        ),
    ),
    NegativeActivationForm: (
        Target(
            "hitos:activation-negative",
            lambda w: reverse("hitos:activation-negative", args=[w.table_roll.pk]),
            "gm",
            lambda w: {"aspect": "libre", "aspect_text": "Suelo mojado", "note": "Llovía.", "dice": "0"},
            lambda w: NegativeActivationForm(aspects=[], free_text=True),
            text=("aspect_text", "note"),
        ),
    ),
    # Issue 18: the extra dice of damage above mCM carry the browser's seed.
    DamageApplyForm: (
        Target(
            "hitos:combat-damage-apply",
            lambda w: w.scene_url("hitos:combat-damage-apply", w.attack_above_mcm.pk),
            "gm",
            lambda w: {"client_seed": client_seed()},
            lambda w: DamageApplyForm(),
            text=("client_seed",),
            echoes=False,
        ),
    ),
    # Issue 18: initiative rolls (and their roll-offs) carry the browser's seed.
    InitiativeForm: (
        Target(
            "hitos:combat-initiative",
            lambda w: w.scene_url("hitos:combat-initiative", w.combat.pk),
            "gm",
            lambda w: {"client_seed": client_seed()},
            lambda w: InitiativeForm(),
            text=("client_seed",),
            echoes=False,
        ),
    ),
    # Issue 18: a re-roll carries the browser's seed, like a first roll.
    PositiveActivationForm: (
        Target(
            "hitos:activation-positive",
            lambda w: reverse("hitos:activation-positive", args=[w.table_roll.pk]),
            "ana",
            lambda w: {
                "aspect": f"s{w.scene_aspect.pk}",
                "payment": "point",
                "dice": "0",
                "client_seed": client_seed(),
            },
            lambda w: PositiveActivationForm(aspects=[], payments=[]),
            text=("client_seed",),
        ),
    ),
    DramaPoolForm: (
        Target(
            "hitos:drama-pool-set",
            lambda w: w.url("hitos:drama-pool-set"),
            "gm",
            lambda w: {"value": "4", "reason": "Nueva sesión"},
            lambda w: DramaPoolForm(),
            text=("reason",),
            numbers=("value",),
        ),
    ),
    NarrativeForm: (
        Target(
            "hitos:drama-narrative",
            lambda w: w.url("hitos:drama-narrative"),
            "gm",
            lambda w: {"activator": "", "aspect_text": "Tormenta", "note": "Se va la luz.", "affected": ""},
            lambda w: NarrativeForm(activators=[("", "GM")], affected=[]),
            text=("aspect_text", "note"),
        ),
    ),
    DelayForm: (
        Target(
            "hitos:combat-combatant-delay",
            lambda w: w.scene_url("hitos:combat-combatant-delay", w.combatant(w.ines).pk),
            "gm",
            lambda w: {"position": "1"},
            lambda w: DelayForm(),
            numbers=("position",),
        ),
    ),
    AttackForm: (
        Target(
            "hitos:combat-attack",
            lambda w: w.scene_url("hitos:combat-attack", w.combat.pk),
            "gm",
            lambda w: {
                "attacker": str(w.combatant(w.ines).pk),
                "target": str(w.combatant(w.npc).pk),
                "weapon": f"w{w.ines.weapons.get().pk}",
                "modifier": "1",
                "modifier_reason": "Por la espalda",
                "client_seed": client_seed(),
            },
            lambda w: AttackForm(combatants=[], attackers=[]),
            text=("modifier_reason", "client_seed"),
            numbers=("modifier",),
        ),
    ),
    # Issue 18: an option that rolls draws its dice with the direction's browser seed.
    SettleForm: (
        Target(
            "campaigns:deadline-settle",
            lambda w: w.url("campaigns:deadline-settle", w.passed_deadline.pk),
            "gm",
            lambda w: {"choice": "continue", "client_seed": client_seed()},
            lambda w: SettleForm(deadline=w.passed_deadline, actor=w.gm),
            text=("client_seed",),
        ),
    ),
    ShiftForm: (
        Target(
            "hitos:combat-attack-shift",
            lambda w: w.scene_url("hitos:combat-attack-shift", w.attack.pk),
            "gm",
            lambda w: {"steps": "1", "aspect": "Ágil como una gata"},
            lambda w: ShiftForm(),
            text=("aspect",),
            echoes=False,
        ),
    ),
    EffectForm: (
        Target(
            "hitos:combat-effect",
            lambda w: w.scene_url("hitos:combat-effect", w.attack.pk),
            "gm",
            lambda w: {"decision": "confirm", "phrase": "Brazo roto"},
            lambda w: EffectForm(),
            text=("phrase",),
            echoes=False,
        ),
    ),
    HorrorStartForm: (
        Target(
            "hitos:horror-start",
            lambda w: w.scene_url("hitos:horror-start"),
            "gm",
            lambda w: {
                "level": "desasosiego",
                "description": "Un grito en el pozo",
                f"expuesto_{w.ines.pk}": "on",
                f"nivel_{w.ines.pk}": "1",
                f"aspecto_{w.ines.pk}": "Miedo a la oscuridad",
            },
            # The view offers every character in play; one row is enough here.
            lambda w: HorrorStartForm(characters=[w.ines]),
            text=("description", "aspecto_{ines}"),
        ),
    ),
    ExposureRollForm: (
        Target(
            "hitos:horror-roll",
            lambda w: w.scene_url("hitos:horror-roll", w.exposure.pk),
            "ana",
            lambda w: {"client_seed": client_seed()},
            lambda w: ExposureRollForm(),
            text=("client_seed",),
        ),
    ),
    OpposedStartForm: (
        Target(
            "hitos:opposed-start",
            lambda w: w.scene_url("hitos:opposed-start"),
            "gm",
            _opposed_data,
            lambda w: OpposedStartForm(characters=[w.ines, w.tomas]),
            text=("purpose", "primero_motivo", "segundo_motivo", "client_seed"),
            numbers=("primero_modificador", "segundo_modificador"),
        ),
    ),
    # --- Vaesen: the sheet
    vaesen_forms.SheetForm: (
        Target(
            "sheets:sheet-create",
            lambda w: w.vaesen_url("sheets:sheet-create"),
            "ana",
            _vaesen_sheet_data,
            lambda w: vaesen_forms.SheetForm(),
            text=(
                "name",
                "archetype",
                "motivation",
                "trauma",
                "dark_secret",
                "relationships",
                "talents",
                "insights",
                "defects",
                "armour",
                "public_description",
                "private_notes",
            ),
            numbers=("age", "resources", "armour_protection", "armour_agility_penalty", *VAESEN_ATTRIBUTES)
            + VAESEN_SKILLS,
        ),
        # An NPC's stat block: its own ranges (up to 10) and fields.
        Target(
            "sheets:npc-create",
            lambda w: w.vaesen_url("sheets:npc-create"),
            "gm",
            _vaesen_npc_data,
            lambda w: vaesen_forms.SheetForm(npc=True, is_gm=True),
            text=("name", "gm_notes"),
            numbers=("resistance", "fear", "fisico", "skill_0"),
        ),
        # The GM changing a player's sheet says why.
        Target(
            "sheets:sheet-edit",
            lambda w: w.vaesen_url("sheets:sheet-edit", w.vaesen.pc.pk),
            "gm",
            lambda w: _vaesen_sheet_data(w, name="Elsa Berg", gm_notes="Sabe nadar.", reason="Lo acordamos"),
            lambda w: vaesen_forms.SheetForm(is_gm=True, asks_reason=True),
            text=("gm_notes", "reason"),
        ),
    ),
    vaesen_forms.ItemForm: (
        Target(
            "sheets:sheet-create",
            lambda w: w.vaesen_url("sheets:sheet-create"),
            "ana",
            _vaesen_item_row,
            lambda w: vaesen_forms.ItemForm(prefix="items-0"),
            text=("name",),
            numbers=("bonus", "availability"),
            prefix="items-0",
        ),
    ),
    vaesen_forms.WeaponForm: (
        Target(
            "sheets:sheet-create",
            lambda w: w.vaesen_url("sheets:sheet-create"),
            "ana",
            _vaesen_weapon_row,
            lambda w: vaesen_forms.WeaponForm(prefix="weapons-0"),
            text=("name", "range"),
            numbers=("damage", "bonus"),
            prefix="weapons-0",
        ),
    ),
    vaesen_forms.NotesForm: (
        Target(
            "sheets:sheet-notes",
            lambda w: w.vaesen_url("sheets:sheet-notes", w.vaesen.pc.pk),
            "gm",
            lambda w: {"private_notes": "Nada.", "public_description": "Rubia.", "gm_notes": "Oye voces."},
            lambda w: vaesen_forms.NotesForm(is_gm=True, description_allowed=True),
            text=("private_notes", "public_description", "gm_notes"),
        ),
    ),
    vaesen_forms.ReviewForm: (
        Target(
            "sheets:sheet-review",
            lambda w: w.vaesen_url("sheets:sheet-review", w.vaesen.submitted.pk),
            "gm",
            lambda w: {"decision": "return", "comment": "Falta el secreto oscuro."},
            lambda w: vaesen_forms.ReviewForm(),
            text=("comment",),
        ),
    ),
    # The sheet's buttons in play answer with a redirect and the refusal as a message.
    vaesen_forms.ConditionForm: (
        Target(
            "vaesen:condition-update",
            lambda w: w.vaesen_url("vaesen:condition-update", w.vaesen.pc.pk),
            "gm",
            lambda w: {"kind": "físico", "do": "marcar:Herido", "reason": "Cayó al río"},
            lambda w: vaesen_forms.ConditionForm(),
            text=("do", "reason"),
            echoes=False,
        ),
    ),
    vaesen_forms.ResistanceForm: (
        Target(
            "vaesen:resistance-update",
            lambda w: w.vaesen_url("vaesen:resistance-update", w.vaesen.npc.pk),
            "gm",
            lambda w: {"change": "-1", "reason": "Un disparo"},
            lambda w: vaesen_forms.ResistanceForm(),
            text=("reason",),
            echoes=False,
        ),
    ),
    vaesen_forms.InjuryForm: (
        Target(
            "vaesen:injury-create",
            lambda w: w.vaesen_url("vaesen:injury-create", w.vaesen.pc.pk),
            "gm",
            lambda w: {
                "kind": "físico",
                "roll": "36",
                "name": "Pierna rota",
                "effect": "Cojea",
                "time_limit": "un día",
                "reason": "La caída",
            },
            lambda w: vaesen_forms.InjuryForm(),
            text=("name", "effect", "time_limit", "reason"),
            numbers=("roll",),
        ),
    ),
    vaesen_forms.TerrorEndForm: (
        Target(
            "vaesen:terror-update",
            lambda w: w.vaesen_url("vaesen:terror-update", w.terrified.pk),
            "gm",
            lambda w: {"reason": "Pasaron los asaltos"},
            lambda w: vaesen_forms.TerrorEndForm(),
            text=("reason",),
            echoes=False,
        ),
    ),
    vaesen_forms.TreatedForm: (
        Target(
            "vaesen:injury-update",
            lambda w: w.vaesen_url("vaesen:injury-update", w.vaesen.pc.pk, w.vaesen_injury.pk),
            "gm",
            lambda w: {"treated": "1", "reason": "La vendó Gustav"},
            lambda w: vaesen_forms.TreatedForm(),
            text=("reason",),
            echoes=False,
        ),
    ),
    # --- Vaesen: the rolls (a test is a row of the table's post form)
    vaesen_roll_forms.PoolRollForm: (
        Target(
            "table:post-create",
            lambda w: reverse("table:post-create", args=[w.vaesen.campaign.slug, w.vaesen.scene.pk]),
            "ana",
            _vaesen_test_data,
            lambda w: vaesen_roll_forms.PoolRollForm(prefix="tirada-0"),
            text=("purpose", "client_seed"),
            numbers=("helpers", "modifier", "needed"),
            prefix="tirada-0",
        ),
        Target(
            "table:post-create",
            lambda w: reverse("table:post-create", args=[w.vaesen.campaign.slug, w.vaesen.scene.pk]),
            "gm",
            _vaesen_pool_data,
            lambda w: vaesen_roll_forms.PoolRollForm(prefix="tirada-0", npcs={str(w.vaesen.npc.pk): w.vaesen.npc}),
            text=("purpose",),
            numbers=("free_pool",),
            prefix="tirada-0",
        ),
    ),
    vaesen_roll_forms.PushForm: (
        Target(
            "vaesen:push",
            lambda w: reverse("vaesen:push", args=[w.failed_test.pk]),
            "ana",
            lambda w: {"condition": "Magullado", "client_seed": client_seed()},
            lambda w: vaesen_roll_forms.PushForm(free=["Exhausto", "Magullado", "Herido"]),
            text=("client_seed",),
        ),
    ),
    vaesen_roll_forms.InjuryForm: (
        Target(
            "vaesen:injury",
            lambda w: reverse("vaesen:injury", args=[w.breaking_push.pk]),
            "ana",
            lambda w: {"client_seed": client_seed()},
            lambda w: vaesen_roll_forms.InjuryForm(),
            text=("client_seed",),
            echoes=False,
        ),
        # Issue 18: the critical injury the sheet's «Sufrir» owes (V10), rolled by the GM.
        Target(
            "vaesen:injury-roll",
            _vaesen_owed_injury_url,
            "gm",
            lambda w: {"kind": "físico", "client_seed": client_seed()},
            lambda w: vaesen_roll_forms.InjuryForm(),
            text=("client_seed",),
            echoes=False,
        ),
    ),
    # --- Vaesen: fear tests and opposed rolls (the answers' refusals come back as a message)
    vaesen_fear_forms.FearStartForm: (
        Target(
            "vaesen:fear-start",
            lambda w: _vaesen_scene_url(w, "vaesen:fear-start"),
            "gm",
            lambda w: {
                "creature": "",
                "fear": "3",
                "against": "Un grito en el molino",
                "characters": str(w.vaesen.pc.pk),
            },
            lambda w: vaesen_fear_forms.FearStartForm(characters=[w.vaesen.pc]),
            text=("against",),
            numbers=("fear",),
        ),
    ),
    vaesen_fear_forms.FearRollForm: (
        Target(
            "vaesen:fear-roll",
            lambda w: _vaesen_scene_url(w, "vaesen:fear-roll", w.fear_test["id"], w.vaesen.pc.pk),
            "ana",
            lambda w: {"attribute": "lógica", "client_seed": client_seed()},
            lambda w: vaesen_fear_forms.FearRollForm(),
            text=("client_seed",),
        ),
    ),
    vaesen_fear_forms.TerrorForm: (
        Target(
            "vaesen:fear-terror",
            lambda w: _vaesen_scene_url(w, "vaesen:fear-terror", w.failed_fear.pk),
            "ana",
            lambda w: {"reaction": "Huida", "client_seed": client_seed()},
            lambda w: vaesen_fear_forms.TerrorForm(),
            text=("client_seed",),
        ),
    ),
    vaesen_fear_forms.SeedForm: (
        Target(
            "vaesen:opposed-roll",
            lambda w: _vaesen_scene_url(w, "vaesen:opposed-roll", w.opposed["id"], 0),
            "ana",
            lambda w: {"client_seed": client_seed()},
            lambda w: vaesen_fear_forms.SeedForm(),
            text=("client_seed",),
        ),
    ),
    vaesen_fear_forms.OpposedStartForm: (
        Target(
            "vaesen:opposed-start",
            lambda w: _vaesen_scene_url(w, "vaesen:opposed-start"),
            "gm",
            _vaesen_opposed_data,
            lambda w: vaesen_fear_forms.OpposedStartForm(characters=[w.vaesen.pc, w.vaesen.npc]),
            text=("purpose",),
            numbers=("pool_1", "pool_2"),
        ),
    ),
    # --- Vaesen: the «Curación» panel (V28–V30)
    vaesen_healing_forms.TreatmentForm: (
        Target(
            "vaesen:healing-treatment",
            lambda w: _vaesen_scene_url(w, "vaesen:healing-treatment"),
            "ana",
            lambda w: {"healer": str(w.vaesen.pc.pk), "injury": str(w.vaesen_injury.pk), "client_seed": client_seed()},
            lambda w: vaesen_healing_forms.TreatmentForm(healers=[w.vaesen.pc], injuries=[w.vaesen_injury]),
            text=("client_seed",),
        ),
    ),
    vaesen_healing_forms.HealingForm: (
        Target(
            "vaesen:healing-heal",
            lambda w: _vaesen_scene_url(w, "vaesen:healing-heal"),
            "bruno",
            lambda w: {
                "healer": str(w.karl.pk),
                "skill": "Medicina",
                "patients": str(w.vaesen.pc.pk),
                "client_seed": client_seed(),
            },
            lambda w: vaesen_healing_forms.HealingForm(healers=[w.karl], patients=[w.vaesen.pc]),
            text=("client_seed",),
        ),
    ),
    vaesen_healing_forms.RecoveryForm: (
        Target(
            "vaesen:healing-recovery",
            lambda w: _vaesen_scene_url(w, "vaesen:healing-recovery"),
            "ana",
            lambda w: {"character": str(w.vaesen.pc.pk), "kind": "físico", "client_seed": client_seed()},
            lambda w: vaesen_healing_forms.RecoveryForm(healers=[w.vaesen.pc]),
            text=("client_seed",),
        ),
    ),
    # --- Vaesen: the GM's options (the injury tables, V13)
    vaesen_options_forms.VaesenOptionsForm: (
        Target(
            "vaesen:campaign-options",
            lambda w: w.vaesen_url("vaesen:campaign-options"),
            "gm",
            _vaesen_options_data,
            lambda w: vaesen_options_forms.VaesenOptionsForm(campaign=w.vaesen.campaign),
            text=("injuries_physical", "injuries_mental"),
        ),
    ),
    # --- Vaesen: combat. The reactor's id is looked up (see IDS and
    # test_a_huge_vaesen_reactor_id_is_a_spanish_refusal); the forms that roll
    # carry the browser's seed (issue 18).
    vaesen_combat.ReactForm: (
        Target(
            "vaesen:combat-react",
            lambda w: _vaesen_scene_url(w, "vaesen:combat-react", w.vaesen_action.pk),
            "gm",
            lambda w: {
                "reaction": VaesenAction.Reaction.NONE,
                "reactor": str(w.vaesen_action.target_id),
                "client_seed": client_seed(),
            },
            lambda w: vaesen_combat.ReactForm(),
            text=("client_seed",),
            echoes=False,
        ),
    ),
    vaesen_combat.InitiativeForm: (
        Target(
            "vaesen:combat-initiative",
            lambda w: _vaesen_combat_url(w, "vaesen:combat-initiative"),
            "gm",
            lambda w: {"client_seed": client_seed()},
            lambda w: vaesen_combat.InitiativeForm(),
            text=("client_seed",),
            echoes=False,
        ),
    ),
    vaesen_combat.AmbushForm: (
        Target(
            "vaesen:combat-ambush",
            lambda w: _vaesen_combat_url(w, "vaesen:combat-ambush"),
            "gm",
            _vaesen_ambush_data,
            lambda w: vaesen_combat.AmbushForm(combatants=[]),
            text=("client_seed",),
            echoes=False,
        ),
    ),
    # --- Hora de Aventuras: the sheet
    aventuras_forms.SheetForm: (
        Target(
            "sheets:sheet-create",
            lambda w: w.aventuras_url("sheets:sheet-create"),
            "ana",
            _aventuras_sheet_data,
            lambda w: aventuras_forms.SheetForm(),
            text=("name", "concept", "flaw", "flaw_earns", "public_description", "private_notes"),
            numbers=("health", *AVENTURAS_ATTRIBUTES),
        ),
        # A GM character: scores up to 10, no flaw (A20, A25).
        Target(
            "sheets:npc-create",
            lambda w: w.aventuras_url("sheets:npc-create"),
            "gm",
            _aventuras_npc_data,
            lambda w: aventuras_forms.SheetForm(npc=True, is_gm=True),
            text=("name", "gm_notes"),
            numbers=("cachas",),
        ),
        # The GM changing a player's sheet says why.
        Target(
            "sheets:sheet-edit",
            lambda w: _aventuras_sheet_url(w, "sheets:sheet-edit"),
            "gm",
            lambda w: _aventuras_sheet_data(w, name="Palomita", gm_notes="Es una loba.", reason="Lo acordamos"),
            lambda w: aventuras_forms.SheetForm(is_gm=True, asks_reason=True),
            text=("gm_notes", "reason"),
        ),
    ),
    aventuras_forms.FeatForm: (
        Target(
            "sheets:sheet-create",
            lambda w: w.aventuras_url("sheets:sheet-create"),
            "ana",
            _aventuras_feat_row,
            lambda w: aventuras_forms.FeatForm(prefix="feats-0"),
            text=("name", "description"),
            prefix="feats-0",
        ),
    ),
    aventuras_forms.ToolForm: (
        Target(
            "sheets:sheet-create",
            lambda w: w.aventuras_url("sheets:sheet-create"),
            "ana",
            _aventuras_tool_row,
            lambda w: aventuras_forms.ToolForm(prefix="tools-0"),
            text=("name", "uses"),
            numbers=("bonus",),
            prefix="tools-0",
        ),
    ),
    aventuras_forms.NotesForm: (
        Target(
            "sheets:sheet-notes",
            lambda w: _aventuras_sheet_url(w, "sheets:sheet-notes"),
            "gm",
            lambda w: {"private_notes": "Nada.", "public_description": "Una mazorca.", "gm_notes": "Aúlla."},
            lambda w: aventuras_forms.NotesForm(is_gm=True, description_allowed=True),
            text=("private_notes", "public_description", "gm_notes"),
        ),
    ),
    aventuras_forms.ReviewForm: (
        Target(
            "sheets:sheet-review",
            lambda w: w.aventuras_url("sheets:sheet-review", w.aventuras.submitted.pk),
            "gm",
            lambda w: {"decision": "return", "comment": "Falta el defecto."},
            lambda w: aventuras_forms.ReviewForm(),
            text=("comment",),
        ),
    ),
    # The sheet's buttons in play answer a refusal with the page, the reason typed kept.
    aventuras_forms.HealthForm: (
        Target(
            "aventuras:sheet-health",
            lambda w: _aventuras_sheet_url(w, "aventuras:sheet-health"),
            "gm",
            lambda w: {"change": "-1", "reason": "Mordisco de un troll"},
            lambda w: aventuras_forms.HealthForm(),
            text=("reason",),
        ),
    ),
    aventuras_forms.StateForm: (
        Target(
            "aventuras:sheet-state-add",
            lambda w: _aventuras_sheet_url(w, "aventuras:sheet-state-add"),
            "gm",
            lambda w: {"name": "Cansada", "modifier": "-1", "threshold": "", "applies_to": "", "reason": "No durmió"},
            lambda w: aventuras_forms.StateForm(),
            text=("name", "reason"),
            numbers=("modifier",),
        ),
    ),
    aventuras_forms.StateRemoveForm: (
        Target(
            "aventuras:sheet-state-remove",
            lambda w: _aventuras_sheet_url(w, "aventuras:sheet-state-remove", w.aventuras.state.pk),
            "gm",
            lambda w: {"reason": "Comió por fin"},
            lambda w: aventuras_forms.StateRemoveForm(),
            text=("reason",),
        ),
    ),
    aventuras_forms.ExperienceForm: (
        Target(
            "aventuras:sheet-experience",
            lambda w: _aventuras_sheet_url(w, "aventuras:sheet-experience"),
            "gm",
            lambda w: {"experience": "6", "reason": "Fin de aventura"},
            lambda w: aventuras_forms.ExperienceForm(),
            text=("reason",),
            numbers=("experience",),
        ),
    ),
    # --- Hora de Aventuras: hero points (A21–A28)
    aventuras_hero_forms.SpendForm: (
        _spend_target(HeroSpend.IGNORE_STATE, lambda w: str(w.aventuras.state.pk), lambda w: [w.aventuras.state]),
        _spend_target(HeroSpend.RECOVER, lambda w: "1", lambda w: []),
        _spend_target(
            HeroSpend.FEAT,
            lambda w: str(w.aventuras.pc.aventuras.feats.get().pk),
            lambda w: list(w.aventuras.pc.aventuras.feats.all()),
        ),
    ),
    aventuras_hero_forms.EarnForm: (
        # A player asks (a request the GM decides) ...
        Target(
            "aventuras:hero-earn",
            lambda w: _aventuras_hero_url(w, "aventuras:hero-earn"),
            "ana",
            lambda w: {"kind": "flaw", "scene": str(w.aventuras.scene.pk), "why": "Resolvió el acertijo"},
            lambda w: aventuras_hero_forms.EarnForm(scenes=[w.aventuras.scene]),
            text=("why",),
        ),
        # ... the GM grants (a move of the ledger).
        Target(
            "aventuras:hero-earn",
            lambda w: _aventuras_hero_url(w, "aventuras:hero-earn"),
            "gm",
            lambda w: {"kind": "sacrifice", "scene": "", "why": "Se quedó atrás por Finn"},
            lambda w: aventuras_hero_forms.EarnForm(scenes=[w.aventuras.scene]),
            text=("why",),
        ),
    ),
    aventuras_hero_forms.GiftForm: (
        Target(
            "aventuras:hero-gift",
            lambda w: _aventuras_hero_url(w, "aventuras:hero-gift"),
            "ana",
            lambda w: {"receiver": str(w.aventuras.other_pc.pk), "scene": "", "why": "Me sacó del pozo"},
            lambda w: aventuras_hero_forms.GiftForm(receivers=[w.aventuras.other_pc], scenes=[w.aventuras.scene]),
            text=("why",),
        ),
    ),
    aventuras_hero_forms.StateForm: (
        Target(
            "aventuras:hero-state",
            lambda w: _aventuras_hero_url(w, "aventuras:hero-state"),
            "ana",
            lambda w: {"state_name": "Hambrienta", "scene": str(w.aventuras.scene.pk), "why": "No ha desayunado"},
            lambda w: aventuras_hero_forms.StateForm(scenes=[w.aventuras.scene]),
            text=("state_name", "why"),
        ),
    ),
    aventuras_hero_forms.NewAdventureForm: (
        Target(
            "aventuras:new-adventure",
            lambda w: w.aventuras_url("aventuras:new-adventure"),
            "gm",
            lambda w: {"confirm": "on", "why": "Empieza «El reino de los dulces»"},
            lambda w: aventuras_hero_forms.NewAdventureForm(),
            text=("why",),
        ),
    ),
    # --- Hora de Aventuras: rolls (a roll is a row of the table's post form)
    aventuras_roll_forms.AventurasRollForm: (
        Target(
            "table:post-create",
            lambda w: _aventuras_scene_url(w, "table:post-create"),
            "ana",
            _aventuras_roll_data,
            lambda w: aventuras_roll_forms.AventurasRollForm(prefix="tirada-0"),
            text=("purpose", "client_seed"),
            numbers=("modifier", "easier", "harder"),
            prefix="tirada-0",
        ),
    ),
    aventuras_roll_forms.RollRequestForm: (
        Target(
            "table:request-create",
            lambda w: _aventuras_scene_url(w, "table:request-create"),
            "gm",
            lambda w: {
                "character": str(w.aventuras.pc.pk),
                "attribute": "majo",
                "difficulty": "2",
                "purpose": "Resolver el acertijo de la puerta",
            },
            lambda w: aventuras_roll_forms.RollRequestForm(characters=[w.aventuras.pc]),
            text=("purpose",),
        ),
    ),
    # The chain's steps under a card (A5, A12, A22): refusals are the roll's page again.
    aventuras_roll_forms.ChachiForm: (
        Target(
            "aventuras:convert",
            lambda w: reverse("aventuras:convert", args=[w.chachi_roll.pk]),
            "ana",
            lambda w: {"position": w.chachi_position, "client_seed": client_seed()},
            lambda w: aventuras_roll_forms.ChachiForm(),
            text=("client_seed",),
            numbers=("position",),
        ),
        # A chachi spent on an effect rolls nothing: the seed the form checks is not used.
        Target(
            "aventuras:effect",
            lambda w: reverse("aventuras:effect", args=[w.chachi_roll.pk]),
            "ana",
            lambda w: {"position": w.chachi_position, "client_seed": client_seed()},
            lambda w: aventuras_roll_forms.ChachiForm(),
            numbers=("position",),
        ),
    ),
    aventuras_roll_forms.RerollForm: (
        Target(
            "aventuras:reroll",
            lambda w: reverse("aventuras:reroll", args=[w.chachi_roll.pk]),
            "ana",
            lambda w: {"positions": "1", "client_seed": client_seed()},
            lambda w: aventuras_roll_forms.RerollForm(values=w.chachi_roll.facts["values"]),
            text=("client_seed",),
        ),
    ),
    # --- Hora de Aventuras: contests, reactions and initiative (A13–A20)
    aventuras_contest_forms.ContestForm: (
        Target(
            "aventuras:contest-create",
            lambda w: _aventuras_scene_url(w, "aventuras:contest-create"),
            "gm",
            lambda w: {
                "kind": "competition",
                "title": "La carrera tras el caballo",
                "difficulty": "0",
                "character_1": str(w.aventuras.pc.pk),
                "attribute_1": "cachas",
                "difficulty_1": "0",
                "character_2": str(w.aventuras.npc.pk),
                "attribute_2": "espabilado",
                "difficulty_2": "1",
            },
            lambda w: aventuras_contest_forms.ContestForm(characters=[w.aventuras.pc, w.aventuras.npc]),
            text=("title",),
            numbers=("difficulty", *(f"difficulty_{i}" for i in range(1, aventuras_contest_forms.SIDE_ROWS + 1))),
        ),
    ),
    aventuras_contest_forms.CancelForm: (
        Target(
            "aventuras:contest-cancel",
            lambda w: _aventuras_scene_url(w, "aventuras:contest-cancel", w.aventuras_contestant.contest_id),
            "gm",
            lambda w: _prefixed(f"anular-{w.aventuras_contestant.contest_id}", reason="Se escapa el caballo"),
            lambda w: aventuras_contest_forms.CancelForm(prefix=f"anular-{w.aventuras_contestant.contest_id}"),
            text=("reason",),
            prefix=lambda w: f"anular-{w.aventuras_contestant.contest_id}",
        ),
    ),
    aventuras_contest_forms.ContestRollForm: (
        Target(
            "aventuras:contest-roll",
            lambda w: _aventuras_scene_url(w, "aventuras:contest-roll", w.aventuras_contestant.pk),
            "ana",
            lambda w: _prefixed(f"lado-{w.aventuras_contestant.pk}", modifier="1", tool="", client_seed=client_seed()),
            lambda w: aventuras_contest_forms.ContestRollForm(
                character=w.aventuras.pc, prefix=f"lado-{w.aventuras_contestant.pk}"
            ),
            text=("client_seed",),
            numbers=("modifier",),
            prefix=lambda w: f"lado-{w.aventuras_contestant.pk}",
        ),
    ),
    # The fields every roll of a contest or a reaction adds (ContestRollForm's
    # and ReactForm's base): sent as a reaction's roll.
    aventuras_contest_forms.RollFields: (
        Target(
            "aventuras:reaction-roll",
            lambda w: w.aventuras_url("aventuras:reaction-roll", w.aventuras_reaction.pk),
            "bruno",
            lambda w: _prefixed(
                f"reaccion-{w.aventuras_reaction.pk}",
                attribute="espabilado",
                modifier="1",
                tool="",
                client_seed=client_seed(),
            ),
            lambda w: aventuras_contest_forms.RollFields(character=w.aventuras.other_pc),
            text=("client_seed",),
            numbers=("modifier",),
            prefix=lambda w: f"reaccion-{w.aventuras_reaction.pk}",
        ),
    ),
    aventuras_contest_forms.ReactForm: (
        Target(
            "aventuras:reaction-roll",
            lambda w: w.aventuras_url("aventuras:reaction-roll", w.aventuras_reaction.pk),
            "bruno",
            lambda w: _prefixed(
                f"reaccion-{w.aventuras_reaction.pk}",
                attribute="espabilado",
                modifier="1",
                tool="",
                client_seed=client_seed(),
            ),
            lambda w: aventuras_contest_forms.ReactForm(
                character=w.aventuras.other_pc, prefix=f"reaccion-{w.aventuras_reaction.pk}"
            ),
            text=("client_seed",),
            numbers=("modifier",),
            prefix=lambda w: f"reaccion-{w.aventuras_reaction.pk}",
        ),
    ),
}

# Forms with no field a user types text or a number into: only choices,
# checkboxes or a file.
NOT_TYPED = {
    RoleForm: "a choice of role",
    SheetOptionsForm: "two choices",
    AspectActionForm: "choices",
    # The file's content goes through SheetForm, NpcForm and the formsets: see
    # test_an_imported_sheet_with_an_over_long_complication_is_refused.
    ImportForm: "a file",
    CombatStartForm: "checkboxes",
    CombatantAddForm: "a choice",
    CombatantStateForm: "checkboxes",
    # As HITOS's: the file's content goes through the Vaesen SheetForm, its
    # formsets and InjuryForm (test_an_imported_vaesen_sheet_with_an_over_long_line_is_refused).
    vaesen_forms.ImportForm: "a file",
    vaesen_combat.CombatStartForm: "checkboxes",
    vaesen_combat.CombatantAddForm: "a choice",
    vaesen_combat.SwapForm: "two choices",
    vaesen_combat.DeclareForm: "choices and a checkbox",
    # As the others: the file's content goes through the Hora de Aventuras
    # SheetForm, its formsets and the sheet's StateForm.
    aventuras_forms.ImportForm: "a file",
    aventuras_hero_forms.DecisionForm: "a choice (accept, refuse, take back)",
    aventuras_contest_forms.InitiativeForm: "checkboxes",
    # Issue 17: what a member allows while away; deadlines (a date in the
    # campaign's time zone, refused in Spanish when past or skipped by the
    # clocks: tests/campaigns/test_deadlines.py) and whom to nudge.
    ConsentForm: "a choice",
    SceneDeadlineForm: "a date and a choice",
    NudgeForm: "a choice of member",
    RoundDeadlineForm: "a date and a choice",
    vaesen_combat.TurnDeadlineForm: "a date and a choice",
    vaesen_combat.ReactionDeadlineForm: "a date and a choice",
    aventuras_contest_forms.ReactionDeadlineForm: "a date and a choice",
    # Issue 18: a member asks for the daily signed checkpoint by e-mail, or stops
    # (tests/rolls/test_checkpoints.py: a bad choice is refused in Spanish).
    CheckpointSubscriptionForm: "a choice",
}

# Text areas "one per line" whose lines are each stored as a row: the limit
# of one line.
LINES = {
    (SceneForm, "aspects"): max_length_of(SceneAspect, "phrase"),
    (SheetForm, "hitos"): max_length_of(Aspect, "phrase"),
    (SheetForm, "complications"): max_length_of(Aspect, "phrase"),
    (SheetForm, "secuelas_temporales"): SECUELA_MAX,
    (SheetForm, "secuelas_permanentes"): SECUELA_MAX,
    **{(vaesen_forms.SheetForm, name): vaesen_forms.LINE_MAX for name in vaesen_forms.LIST_FIELDS},
}

# Number fields the rules check (H29: 1 to 10), with the rules' message.
RULED_NUMBERS = {
    (form, name): f"{name.capitalize()} debe estar entre 1 y 10, no {{value}}."
    for form in (SheetForm, NpcForm)
    for name in ("fortaleza", "reflejos", "voluntad", "intelecto")
}

# Number fields the page sends in a hidden input, never typed: as a
# malformed seed, another value only comes from a script, and its refusal may
# be a 400 (still in Spanish, nothing saved).
HIDDEN_NUMBERS = {
    (aventuras_roll_forms.ChachiForm, "position"): "each button of the card sends its die in a hidden input",
}

# Integer fields that are ids looked up, never stored as typed.
IDS = {
    (PostForm, "quote_of"),
    (TablePostForm, "quote_of"),
    (TablePostForm, "answers"),
    (vaesen_combat.ReactForm, "reactor"),
}


def _email(w: World, length: int) -> str:
    # A valid address of ``length`` characters: labels of at most 63.
    return "a" * 64 + "@" + "b" * 63 + "." + "c" * 63 + "." + "d" * (length - 196) + ".es"


def _notation(w: World, length: int) -> str:
    # Dice notation of ``length`` characters: 1d6+1+1…+1 or 1d6+1+1…+10.
    if length % 2:
        return "1d6" + "+1" * ((length - 3) // 2)
    return "1d6" + "+1" * ((length - 6) // 2) + "+10"


def _injury_table(w: World, length: int) -> str:
    """A valid table of ``length`` characters: at the form's limit, the 36
    rows «11-11 | name | effect | time limit» with each part at its column's
    limit and a browser's line break after each; over the limit, one more
    row that is not one (the length is refused before the rows are read)."""
    rows = [
        f"{value}-{value} | {'n' * max_length_of(VaesenInjury, 'name')} | {'e' * max_length_of(VaesenInjury, 'effect')}"
        f" | {'p' * max_length_of(VaesenInjury, 'time_limit')}"
        for value in vaesen_tables.D66_VALUES
    ]
    text = "".join(f"{row}\r\n" for row in rows)
    assert len(rows) == vaesen_tables.MAX_ROWS and len(text) == vaesen_options_forms.TABLE_MAX_LENGTH <= length
    return text + "x" * (length - len(text))


def _code(w: World, length: int) -> str:
    # A constant damage code, zero-padded: "0…05".
    return "5".rjust(length, "0")


# Values that are not free text: a generator of a valid one of that length.
VALUES: dict[tuple[type, str], Callable[[World, int], str]] = {
    (SignUpForm, "email"): _email,
    (BackgroundPasswordResetForm, "email"): _email,
    (FreeRollForm, "notation"): _notation,
    (SecretRollForm, "notation"): _notation,
    (SecretRollForm, "seen"): lambda w, length: (w.head + "0" * length)[:length],
    (FreeRollForm, "seen"): lambda w, length: (w.head + "0" * length)[:length],
    (NpcForm, "damage_code"): _code,
    (WeaponForm, "damage_code"): _code,
    (RollRequestForm, "skill"): lambda w, length: w.skill_named(length),
    (SecretRollForm, "skill"): lambda w, length: w.skill_named(length),
    (vaesen_options_forms.VaesenOptionsForm, "injuries_physical"): _injury_table,
    (vaesen_options_forms.VaesenOptionsForm, "injuries_mental"): _injury_table,
}

# Fields sent at their limit whose text is not stored as typed.
NOT_STORED_WHOLE = {
    (TablePostForm, "answer_seed"): "it only seeds the answer to a GM's request",
    (OpposedStartForm, "client_seed"): "each round's seed is made from its first 56 characters",
    (SearchForm, "q"): "a search stores nothing",
    (SettleForm, "client_seed"): "only an option that rolls stores it, in its roll (the scene's does not roll)",
    # See test_a_vaesen_injury_table_of_36_rows_at_their_limits_is_saved.
    (vaesen_options_forms.VaesenOptionsForm, "injuries_physical"): "read into rows, each stored as a JSON list",
    (vaesen_options_forms.VaesenOptionsForm, "injuries_mental"): "read into rows, each stored as a JSON list",
}
# Fields not sent at their limit.
NOT_AT_LIMIT = {
    (LoginForm, "username"): "a log-in stores nothing typed (and no user has a name that long)",
    (BackgroundPasswordResetForm, "email"): "a reset request stores nothing typed: it mails an account, if one has it",
    (PostRollForm, "difficulty"): "read as a number or a word of the scale: no text of 40 characters is one",
    (RollRequestForm, "difficulty"): "read as a number or a word of the scale: no text of 40 characters is one",
    (vaesen_forms.ConditionForm, "do"): "a button's value, «marcar:Herido» and the like: none is 40 characters long",
}


# --- helpers ------------------------------------------------------------------------------------


def _tables() -> list[tuple[str, str]]:
    """Our apps' tables (many-to-many ones too) and their primary keys."""
    return [
        (model._meta.db_table, model._meta.pk.column)
        for config in apps.get_app_configs()
        if config.name.split(".")[0] in APPS
        for model in config.get_models(include_auto_created=True)
        # Showing a scene marks it read for the viewer: a visit, not input.
        if model is not SceneRead
    ]


def _snapshot() -> dict[str, list[tuple]]:
    """Every row of our apps' tables (plain SQL: the ORM is ten times slower here)."""
    quote = connection.ops.quote_name
    rows = {}
    with connection.cursor() as cursor:
        for table, pk in _tables():
            cursor.execute(f"SELECT * FROM {quote(table)} ORDER BY {quote(pk)}")
            rows[table] = [
                tuple(bytes(v) if isinstance(v, memoryview) else v for v in row) for row in cursor.fetchall()
            ]
    return rows


def _holds(value, text: str) -> bool:
    if isinstance(value, str):
        # A JSON column may hold the text with its non-ASCII letters escaped.
        return text in value or json.dumps(text)[1:-1] in value
    if isinstance(value, bytes | memoryview):
        return text in bytes(value).decode("utf-8", "replace")
    if isinstance(value, dict):
        return any(_holds(k, text) or _holds(v, text) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_holds(v, text) for v in value)
    return False


def _stored(snapshot: dict[str, list[tuple]], text: str) -> bool:
    return any(_holds(row, text) for rows in snapshot.values() for row in rows)


def _problems(response) -> list[str]:
    """The errors of the forms a response shows, and its messages (for a
    failing assertion to say why)."""
    found = [str(m) for m in response.context.get("messages", [])] if response.context else []
    for context in response.context or []:
        for value in context.values() if hasattr(context, "values") else []:
            errors = getattr(value, "errors", None)
            if isinstance(value, forms.BaseForm | forms.BaseFormSet) and errors:
                found.append(str(errors))
    return found


def _send(client: Client, target: Target, url: str, data: dict[str, str], *, follow: bool = True):
    if target.method == "get":
        return client.get(url, data)
    return client.post(url, data, follow=follow)


def _is_seed(field: forms.Field) -> bool:
    return any(getattr(v, "message", None) == CLIENT_SEED_MESSAGE for v in field.validators)


def _limit(form_class, form: forms.BaseForm, name: str) -> tuple[str, int]:
    """How a text field is limited: ("lines" | "seed" | "text", the limit)."""
    field = form.fields[name]
    if (form_class, name) in LINES:
        return "lines", LINES[form_class, name]
    if _is_seed(field):
        return "seed", CLIENT_SEED_MAX_LENGTH
    assert field.max_length, f"{form_class.__name__}.{name} is a text field without a limit"
    return "text", field.max_length


def _value(form_class, w: World, name: str, kind: str, length: int) -> str:
    make = VALUES.get((form_class, name))
    if make is not None:
        return make(w, length)
    # Non-ASCII: PostgreSQL's varchar counts characters, not bytes.
    return "s" * length if kind == "seed" else "ñ" * length


def _too_long(form_class, name: str, kind: str, limit: int) -> str:
    if kind == "seed":
        return "La semilla del navegador no es válida: de 1 a 64 letras, cifras, guiones o guiones bajos."
    if kind == "lines":
        return f"La línea 2 es demasiado larga: como mucho {limit} caracteres (tiene {limit + 1})."
    if name == "body" and form_class in (PostForm, TablePostForm, PostEditForm):
        return f"El mensaje es demasiado largo: como mucho {limit} caracteres (tiene {limit + 1})."
    return f"Demasiado largo: como mucho {limit} caracteres (has escrito {limit + 1})."


def _visible(field: forms.Field) -> bool:
    return not isinstance(field.widget, forms.HiddenInput)


def _label(form_class) -> str:
    """A form's name in the test ids: a system other than HITOS names its
    package and feature (Vaesen has a SheetForm and two InjuryForms too)."""
    module = form_class.__module__
    if module.startswith("systems.") and not module.startswith("systems.hitos."):
        return f"{module.removeprefix('systems.').removesuffix('.forms')}.{form_class.__name__}"
    return form_class.__name__


def _cases(attribute: str, *, refused: bool = True, skip=()) -> list:
    """One case per (form, target, field); over the limit, a target's known
    gap is a strict xfail (once fixed, the case fails until the note goes)."""
    return [
        pytest.param(
            form_class,
            target,
            name,
            id=f"{_label(form_class)}-{target.view.split(':')[1]}-{name}",
            marks=[pytest.mark.xfail(reason=target.gap, strict=True)] if refused and target.gap else [],
        )
        for form_class, targets in FORMS.items()
        for target in targets
        for name in getattr(target, attribute)
        if (form_class, name) not in skip
    ]


# --- the registry is complete ------------------------------------------------------------------


def _form_modules() -> list[str]:
    """Every forms module of our apps, in any of their packages (``forms`` and
    ``forms_*``; the game systems keep one per feature)."""
    names = []
    for label in APPS:
        package = import_module(label)
        names += [
            info.name
            for info in pkgutil.walk_packages(package.__path__, prefix=f"{label}.")
            if info.name.rsplit(".", 1)[-1] == "forms" or info.name.rsplit(".", 1)[-1].startswith("forms_")
        ]
    return names


def _our_forms() -> set[type]:
    found = set()
    for module_name in _form_modules():
        for value in vars(import_module(module_name)).values():
            if (
                isinstance(value, type)
                and issubclass(value, forms.BaseForm)
                and value.__module__.split(".")[0] in APPS
                and not value.__name__.startswith("_")
            ):
                found.add(value)
    return found


def test_every_form_of_our_apps_is_in_the_registry():
    missing = sorted(f"{f.__module__}.{f.__name__}" for f in _our_forms() - set(FORMS) - set(NOT_TYPED))
    assert not missing, f"add these forms to FORMS (or NOT_TYPED) in {__name__}: {missing}"
    assert set(FORMS).isdisjoint(NOT_TYPED)
    assert len(_form_modules()) >= 7


def test_forms_without_typed_fields_have_none():
    for form_class in NOT_TYPED:
        typed = [
            name
            for name, field in form_class.base_fields.items()
            if isinstance(field, forms.CharField | forms.IntegerField)
        ]
        assert not typed, f"{form_class.__name__} has typed fields {typed}: move it from NOT_TYPED to FORMS"


def _typed_fields(form_class, form: forms.BaseForm) -> tuple[set[str], set[str]]:
    text = {
        name
        for name, field in form.fields.items()
        # A password is hashed, never stored as typed.
        if isinstance(field, forms.CharField) and not isinstance(field.widget, forms.PasswordInput)
    }
    numbers = {
        name
        for name, field in form.fields.items()
        if isinstance(field, forms.IntegerField) and (form_class, name) not in IDS
    }
    return text, numbers


@pytest.mark.parametrize("form_class", [pytest.param(f, id=_label(f)) for f in FORMS])
def test_the_registry_lists_every_text_and_number_field(world, form_class):
    """Between them, a form's targets name each of its text and number fields
    (one target may be the GM's view of a form with GM-only fields)."""
    text, numbers, listed_text, listed_numbers = set(), set(), set(), set()
    for target in FORMS[form_class]:
        form = target.form(world)
        found_text, found_numbers = _typed_fields(form_class, form)
        text |= found_text
        numbers |= found_numbers
        listed_text |= {name.format(**world.ids) for name in target.text}
        listed_numbers |= {name.format(**world.ids) for name in target.numbers}
        for name in found_numbers:
            field = form.fields[name]
            assert field.max_value is not None or (form_class, name) in RULED_NUMBERS, f"{name} has no maximum"
    assert listed_text == text
    assert listed_numbers == numbers


# --- over the limit --------------------------------------------------------------------------


@pytest.mark.parametrize(("form_class", "target", "name"), _cases("text"))
def test_text_one_character_over_its_limit_is_refused_in_spanish_and_nothing_is_saved(world, form_class, target, name):
    field_name = name.format(**world.ids)
    form = target.form(world)
    kind, limit = _limit(form_class, form, field_name)
    url, data, client = target.url(world), target.data(world), world.client(target.user)
    typed = _value(form_class, world, field_name, kind, limit + 1)
    data[target.key(name, world)] = f"Primera línea\n{typed}" if kind == "lines" else typed
    before = _snapshot()

    response = _send(client, target, url, data)

    assert response.status_code in (200, 400), response.status_code
    assert response.status_code == 200 or kind == "seed", "only a script sends a malformed hidden field"
    html = response.content.decode()
    assert escape(_too_long(form_class, field_name, kind, limit)) in html
    if target.echoes and _visible(form.fields[field_name]):
        assert escape(typed) in html, "the text typed comes back in the form"
    assert _snapshot() == before


@pytest.mark.parametrize(("form_class", "target", "name"), _cases("numbers"))
def test_a_huge_number_is_refused_in_spanish_and_nothing_is_saved(world, form_class, target, name):
    field_name = name.format(**world.ids)
    field = target.form(world).fields[field_name]
    url, data, client = target.url(world), target.data(world), world.client(target.user)
    huge = "9" * 30
    data[target.key(name, world)] = huge
    before = _snapshot()

    response = _send(client, target, url, data)

    assert response.status_code == 200 or (
        response.status_code == 400 and (form_class, field_name) in HIDDEN_NUMBERS
    ), response.status_code
    if (form_class, field_name) in RULED_NUMBERS:
        message = RULED_NUMBERS[form_class, field_name].format(value=huge)
    else:
        message = f"Escribe un número de {field.max_value} o menos."
    assert escape(message) in response.content.decode()
    assert _snapshot() == before


# --- at the limit ---------------------------------------------------------------------------


@pytest.mark.parametrize(("form_class", "target", "name"), _cases("text", refused=False, skip=NOT_AT_LIMIT))
def test_text_exactly_at_its_limit_is_saved_whole(world, form_class, target, name):
    field_name = name.format(**world.ids)
    form = target.form(world)
    kind, limit = _limit(form_class, form, field_name)
    url, data, client = target.url(world), target.data(world), world.client(target.user)
    typed = _value(form_class, world, field_name, kind, limit)
    data[target.key(name, world)] = f"Primera línea\n{typed}" if kind == "lines" else typed
    before = _snapshot()

    response = _send(client, target, url, data, follow=False)

    assert response.status_code in (200, 302), response.content.decode()[:300]
    html = response.content.decode()
    for refusal in ("Demasiado largo", "demasiado larga", "La semilla del navegador no es válida"):
        assert refusal not in html
    after = _snapshot()
    if (form_class, field_name) == (SearchForm, "q"):
        assert after == before
        return
    assert after != before, f"a valid submission saves something: {_problems(response)}"
    if (form_class, field_name) not in NOT_STORED_WHOLE:
        assert _stored(after, typed), "the text is stored whole"


# --- the complication line of issue #11 --------------------------------------------------------


def test_a_complication_line_is_limited_by_the_length_of_an_aspect(world):
    """The line that was a server error on PostgreSQL: 200 characters is an
    aspect's phrase, saved; 201 is a Spanish error on the sheet form."""
    limit = max_length_of(Aspect, "phrase")
    assert limit == 200
    client = world.client("ana")
    url = world.url("sheets:sheet-create")

    refused = client.post(url, _sheet_data(world, complications="Debe dinero\n" + "c" * (limit + 1)))
    assert refused.status_code == 200
    assert refused.context["form"].errors["complications"] == [
        "La línea 2 es demasiado larga: como mucho 200 caracteres (tiene 201)."
    ]
    assert not Character.objects.filter(name="Rosa Quiroga").exists()

    accepted = client.post(url, _sheet_data(world, complications="Debe dinero\n" + "c" * limit))
    rosa = Character.objects.get(name="Rosa Quiroga")
    assert accepted.status_code == 302
    assert list(rosa.aspects.filter(kind=Aspect.Kind.COMPLICATION).values_list("phrase", flat=True)) == [
        "Debe dinero",
        "c" * 200,
    ]


def _export_file(world: World, **changes) -> SimpleUploadedFile:
    sheet = sheet_services.sheet_export(world.ines, include_gm_notes=False)
    sheet.update(concept="La heredera", **changes)
    return SimpleUploadedFile("ines.json", json.dumps(sheet).encode(), content_type="application/json")


def test_an_imported_sheet_with_an_over_long_complication_is_refused(world):
    client = world.client("bruno")
    url = world.url("sheets:sheet-import")
    before = _snapshot()

    refused = client.post(url, {"file": _export_file(world, complications=["x" * 201])})

    assert refused.status_code == 200
    assert "La línea 1 es demasiado larga: como mucho 200 caracteres (tiene 201)." in refused.content.decode()
    assert _snapshot() == before

    client.post(url, {"file": _export_file(world, complications=["x" * 200])})
    imported = Character.objects.filter(owner=world.bruno, name=world.ines.name).get()
    assert imported.aspects.get(kind=Aspect.Kind.COMPLICATION).phrase == "x" * 200


def test_a_vaesen_list_is_limited_in_all_as_well_as_by_line(world):
    """The sheet keeps a "one per line" list in a JSON list, which has no
    length of its own: lines of 200 characters at most, 4000 in all."""
    assert (vaesen_forms.LINE_MAX, vaesen_forms.LINES_MAX) == (200, 4000)
    lines = ["t" * 200] + ["t" * 199] * 19
    at_limit = "\n".join(lines)
    assert len(at_limit) == 4000
    client = world.client("ana")
    url = world.vaesen_url("sheets:sheet-create")
    before = _snapshot()

    refused = client.post(url, _vaesen_sheet_data(world, talents=at_limit + "t"))

    assert refused.status_code == 200
    assert escape("Demasiado largo: como mucho 4000 caracteres (has escrito 4001).") in refused.content.decode()
    assert _snapshot() == before

    accepted = client.post(url, _vaesen_sheet_data(world, talents=at_limit))
    assert accepted.status_code == 302
    assert Character.objects.get(name="Gustav Lind").vaesen.talents == lines


def _vaesen_export_file(world: World, **changes) -> SimpleUploadedFile:
    sheet = vaesen_sheet_services.sheet_export(world.vaesen.pc, include_gm_notes=False)
    sheet.update(**changes)
    return SimpleUploadedFile("elsa.json", json.dumps(sheet).encode(), content_type="application/json")


def _vaesen_weapon(name: str) -> list[dict]:
    return [{"name": name, "skill": "Fuerza", "damage": 1, "bonus": 0, "range": ""}]


def _vaesen_injury(name: str) -> list[dict]:
    return [{"kind": "físico", "roll": 36, "name": name, "effect": "", "time_limit": ""}]


@pytest.mark.parametrize(
    ("field", "over", "message", "fits", "stored"),
    [
        pytest.param(
            "talents",
            ["x" * 201],
            "Talentos: La línea 1 es demasiado larga: como mucho 200 caracteres (tiene 201).",
            ["x" * 200],
            lambda sheet: sheet.talents,
            id="talent",
        ),
        pytest.param(
            "weapons",
            _vaesen_weapon("x" * 81),
            "Demasiado largo: como mucho 80 caracteres (has escrito 81).",
            _vaesen_weapon("x" * 80),
            lambda sheet: [
                {"name": w.name, "skill": w.skill, "damage": 1, "bonus": 0, "range": ""} for w in sheet.weapons.all()
            ],
            id="weapon",
        ),
        pytest.param(
            "injuries",
            _vaesen_injury("x" * 121),
            "Herida crítica 1: Demasiado largo: como mucho 120 caracteres (has escrito 121).",
            _vaesen_injury("x" * 120),
            lambda sheet: [
                {"kind": i.kind, "roll": i.roll, "name": i.name, "effect": "", "time_limit": ""}
                for i in sheet.injuries.all()
            ],
            id="injury",
        ),
    ],
)
def test_an_imported_vaesen_sheet_with_an_over_long_text_is_refused(world, field, over, message, fits, stored):
    """An import goes through the sheet form, its formsets and the injury
    form: an over-long text in the file is a Spanish error and nothing is
    saved; at the limit it is imported whole."""
    client = world.client("bruno")
    url = world.vaesen_url("sheets:sheet-import")
    before = _snapshot()

    refused = client.post(url, {"file": _vaesen_export_file(world, **{field: over})})

    assert refused.status_code == 200
    assert escape(message) in refused.content.decode()
    assert _snapshot() == before

    assert client.post(url, {"file": _vaesen_export_file(world, **{field: fits})}).status_code == 302
    assert stored(Character.objects.get(owner=world.bruno, name="Elsa").vaesen) == fits


def test_a_vaesen_injury_table_of_36_rows_at_their_limits_is_saved(world):
    """V13 — the options' length limit lets through the longest table the
    page reads: 36 rows with a name, effect and time limit each as long as
    its column, every one stored; one character more is a Spanish error."""
    client = world.client("gm")
    url = world.vaesen_url("vaesen:campaign-options")
    limit = vaesen_options_forms.TABLE_MAX_LENGTH
    assert limit == 36 * (len("11-66 | ") + 120 + len(" | ") + 2000 + len(" | ") + 80 + len("\r\n"))
    table = _injury_table(world, limit)

    response = client.post(url, {**_vaesen_options_data(world), "injuries_mental": table})

    assert response.status_code == 302, _problems(response)
    world.vaesen.campaign.refresh_from_db()
    rows = vaesen_tables.injury_table(world.vaesen.campaign, "mental")
    assert [(row.low, row.high) for row in rows] == [(value, value) for value in vaesen_tables.D66_VALUES]
    assert {(row.name, row.effect, row.time_limit) for row in rows} == {("n" * 120, "e" * 2000, "p" * 80)}

    before = _snapshot()
    response = client.post(url, {**_vaesen_options_data(world), "injuries_mental": _injury_table(world, limit + 1)})
    assert response.status_code == 200
    assert escape(f"Demasiado largo: como mucho {limit} caracteres (has escrito {limit + 1}).") in (
        response.content.decode()
    )
    assert _snapshot() == before


def test_a_huge_vaesen_reactor_id_is_a_spanish_refusal(world):
    """V21 — the reactor is a combatant's id, looked up in the action's
    combat: a number no row has is «not in this combat», not a server error."""
    action = world.vaesen_action
    url = _vaesen_scene_url(world, "vaesen:combat-react", action.pk)
    client = world.client("gm")
    before = _snapshot()

    response = client.post(url, {"reaction": VaesenAction.Reaction.NONE, "reactor": "9" * 30}, follow=True)

    assert response.status_code == 200
    assert "Ese personaje no está en este combate." in response.content.decode()
    assert _snapshot() == before


def test_an_exposure_rolls_with_the_longest_description_and_name(world):
    """Each exposure's roll says «Prueba de horror de <name> (<level>):
    <description>»: the longest of each still fits a roll's purpose."""
    world.ines.name = "n" * max_length_of(Character, "name")
    world.ines.save()
    client = world.client("gm")
    description = "d" * HorrorStartForm.base_fields["description"].max_length
    client.post(
        world.scene_url("hitos:horror-start"),
        {"level": "desasosiego", "description": description, f"expuesto_{world.ines.pk}": "on"},
    )
    exposure = HorrorExposure.objects.get(test__description=description)

    response = client.post(world.scene_url("hitos:horror-roll", exposure.pk), {"client_seed": client_seed()})

    assert response.status_code == 302
    exposure.refresh_from_db()
    assert exposure.resolved_at is not None


def test_the_log_in_form_refuses_an_over_long_name_before_trying_it(db):
    """Nothing is authenticated, so nothing reaches the throttle's table."""
    tried = []

    def failed(sender, **kwargs):
        tried.append(kwargs)

    user_login_failed.connect(failed, dispatch_uid="form-limits")
    try:
        form = LoginForm(data={"username": "u" * 151, "password": "x"})
        assert form.errors["username"] == ["Demasiado largo: como mucho 150 caracteres (has escrito 151)."]
    finally:
        user_login_failed.disconnect(dispatch_uid="form-limits")
    assert tried == []


# --- malformed input ----------------------------------------------------------------------------


@pytest.mark.parametrize("membership", ["²", "9" * 5000, "-1", " 1"])
def test_a_malformed_member_id_for_the_hand_over_is_not_found(world, membership):
    response = world.client("gm").post(world.url("campaigns:campaign-hand-over"), {"membership": membership})
    assert response.status_code == 404


@pytest.mark.parametrize("value", ["²", "9" * 5000])
def test_the_sheet_preview_ignores_a_malformed_skill_value(world, value):
    data = _skill_row(world)
    data["skills-0-value"] = value
    data["preview"] = "1"
    response = world.client("ana").post(world.url("sheets:sheet-create"), data, headers={"HX-Request": "true"})
    assert response.status_code == 200


def test_a_huge_post_number_is_a_spanish_error_on_the_sheet(world):
    prefix = sheet_services.HEALTH
    response = world.client("gm").post(
        world.sheet_url("hitos:meter-update", world.ines, prefix),
        {f"{prefix}-action": "damage", f"{prefix}-amount": "1", f"{prefix}-post": "9" * 30},
    )
    assert response.status_code == 200
    assert "No hay ningún mensaje con ese número en esta partida." in response.content.decode()


def test_a_huge_quoted_post_number_is_ignored(world):
    data = _post_data(world, quote_of="9" * 30)
    response = world.client("gm").post(world.scene_url("table:post-create"), data)
    assert response.status_code == 302


def test_a_malformed_die_position_is_a_bad_request(world):
    response = world.client("gm").post(
        reverse("hitos:activation-negative", args=[world.table_roll.pk]),
        {"aspect": "libre", "aspect_text": "Suelo mojado", "dice": "²"},
    )
    assert response.status_code == 400
