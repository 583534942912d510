"""Issue 17's gates, in a real Chromium, on every page and part that
absences, deadlines, whose turn, the pace chart and takeovers add.

The same gates as issue 14's (tests/browser/test_gates.py), at 1280 px and
at 360 px wide:

- axe-core finds no violation of any impact (``AXE_TAGS`` in conftest.py);
- the page is no wider than the window (nothing to scroll sideways);
- the page loaded as itself (200, no redirect) without a console error, an
  uncaught exception or a Content Security Policy violation, and shows what
  the gate is about (``shows``: the part really is on the page checked);

and the HTML each page was served has no error for the Nu HTML Checker.

One world is built for the module (``tests.conftest.make_world``, «La
mansión», plus a third player and an Hora de Aventuras campaign with the same
GM) and every page visited in one go by a module fixture
(tests/browser/gates.py), one browser context per person:

- the GM has asked «¿Qué hacéis?» in «El vestíbulo», which has a deadline:
  Ana and Bruno are awaited; Bruno is away («de viaje hasta el 12»,
  allowing the GM to take Tomás, which the GM does); Carla is away too,
  allowing nobody; a roll request to Tomás has a deadline that passed;
  a HITOS combat in «El vestíbulo» has a round deadline;
- in the Aventuras campaign, Ana's hero has an open reaction with a deadline;
- in another HITOS campaign, a negative activation against Inés waits for
  Ana, with the deadline the rules give it.

The deadlines typed in a form are whole minutes, and so are this world's;
the activation's is not (its page checks that a deadline with seconds and
microseconds is still written as valid HTML).

Two pages are a refused form, posted the way a browser without JavaScript
does (a plain form submission, so the page checked is the one the server
sent): an absence that ends before it starts, and taking Carla's character,
which she does not allow. Each page and width is a test of its own.

Locally these tests skip without Chromium, node_modules or Java; under
CI=true they fail instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import Locator, Page

from accounts.models import TakeoverConsent, User
from campaigns import absences, deadlines
from campaigns.models import Absence, Deadline, Membership, Role
from campaigns.permissions import campaign_access
from rolls import services as roll_services
from systems.hitos.activations import services as activations
from systems.hitos.checks.services import check_setup, table_check
from systems.hitos.combat import services as combat_services
from systems.hitos.combat import turns
from systems.hitos.system import request_facts
from table import takeover as takeovers
from table.roll_requests import services as roll_requests
from tests.browser.gates import Crawl, Gate, crawl_fixture, gate_tests
from tests.conftest import make_world
from tests.factories import CampaignFactory, UserFactory, client_seed, make_scene, play_character, write

# Not transactional: the tests only read what the crawl kept (tests/browser/gates.py).
pytestmark = [pytest.mark.browser, pytest.mark.django_db]

ABSENCE_NOTE = "de viaje hasta el 12"


def _at_minute(delta: timedelta):
    """A deadline as the forms give one: a whole minute (``plazo`` is a
    datetime-local field) — a deadline with fractions of a second is
    ``ACTIVATION_GATE``'s case."""
    return (timezone.now() + delta).replace(second=0, microsecond=0)


@dataclass(frozen=True)
class PaceWorld:
    """What the pages' addresses need from the module's world."""

    slug: str
    people: dict[str, User]  # "gm", "ana", "bruno", "carla"
    scene: int  # «El vestíbulo»: awaited players, a scene deadline, a combat with a round deadline
    bruno_absence: int
    passed_deadline: int  # the roll request's, passed unanswered
    aventuras_slug: str
    reaction: int  # Ana's hero's open reaction, with a deadline
    activation_slug: str  # another HITOS campaign, whose GM is "other-gm"
    activation_scene: int  # a pending negative activation against Inés there, with its deadline

    @classmethod
    def build(cls) -> PaceWorld:
        from systems.aventuras.contests import reactions
        from systems.aventuras.rolls import services as aventuras_rolls
        from tests.systems.aventuras.conftest import aventuras_character

        world = make_world()
        campaign, gm = world.campaign, world.gm
        gm_access = campaign_access(gm, campaign)
        today = absences.campaign_today(campaign)
        # A third player, away and allowing nobody: the takeover form's refusal.
        carla = UserFactory(username="carla", display_name="Carla")
        Membership.objects.create(campaign=campaign, user=carla, role=Role.PLAYER, takeover_consent="nobody")
        play_character(campaign, carla, "Lucía Vidal")
        Absence.objects.create(
            campaign=campaign, user=carla, starts_on=today, ends_on=today + timedelta(days=5), note="Exámenes"
        )
        # Bruno away from yesterday, allowing the GM to carry Tomás; a later trip announced too.
        Membership.objects.filter(campaign=campaign, user=world.bruno).update(takeover_consent=TakeoverConsent.GM)
        bruno_away = Absence.objects.create(
            campaign=campaign,
            user=world.bruno,
            starts_on=today - timedelta(days=1),
            ends_on=today + timedelta(days=3),
            note=ABSENCE_NOTE,
            hold_notifications=True,
        )
        Absence.objects.create(
            campaign=campaign,
            user=world.bruno,
            starts_on=today + timedelta(days=20),
            ends_on=today + timedelta(days=22),
        )
        # Posts over the weeks for the pace chart; the GM's last one awaits both players.
        write(world.scene, world.bruno, "Tomás sujeta el farol.")
        write(world.scene, gm, "¿Qué hacéis?")
        deadlines.set_deadline(
            campaign=campaign,
            scene=world.scene,
            kind=deadlines.SCENE,
            target_id=world.scene.pk,
            due_at=_at_minute(timedelta(days=2, hours=3)),
            actor=gm,
        )
        takeovers.takeover_start(access=gm_access, character=world.tomas, taken_by=gm, reason="Bruno está de viaje")
        # A request to Tomás whose deadline passed: the settle page, the dashboard's «vencidos».
        request = roll_requests.request_create(
            access=gm_access,
            scene=world.scene,
            character=world.tomas,
            facts=request_facts(characteristic="reflejos", skill="Sigilo"),
            difficulty=15,
            difficulty_hidden=False,
            purpose="Que no te oigan",
            due_at=_at_minute(timedelta(days=1)),
        )
        passed = Deadline.objects.get(kind=roll_requests.DEADLINE_KIND, target_id=request.pk)
        Deadline.objects.filter(pk=passed.pk).update(due_at=_at_minute(-timedelta(hours=1)))
        deadlines.sweep()
        # A HITOS combat in the scene, its round with a deadline.
        combat = combat_services.combat_start(
            scene=world.scene, access=gm_access, characters=[world.ines, world.tomas, world.npc]
        )
        combat.campaign, combat.scene = campaign, world.scene
        turns.round_deadline_set(
            combat=combat, access=gm_access, due_at=_at_minute(timedelta(days=1)), remind_before=timedelta(hours=2)
        )

        # The Hora de Aventuras campaign, with the same GM and Ana as a player.
        ooo = CampaignFactory(gm=gm, title="La tierra de Ooo", slug="tierra-de-ooo", system="aventuras")
        roll_services.log_open(campaign=ooo)
        Membership.objects.create(campaign=ooo, user=world.ana, role=Role.PLAYER)
        palomita = aventuras_character(ooo, world.ana, "Palomita", cachas=3, majo=4, highlighted=["cachas", "majo"])
        professor = aventuras_character(ooo, gm, "Profesor Cacahuete", kind="npc", cachas=2, espabilado=3)
        door = make_scene(ooo, title="La puerta del acertijo")
        action = aventuras_rolls.make_roll(
            campaign=ooo,
            user=gm,
            setup=aventuras_rolls.roll_setup(professor, attribute="cachas", difficulty=0),
            purpose="Atizar a los héroes",
            character=professor,
            scene=door,
        )
        (reaction,) = reactions.open_reactions(action, [palomita], by=gm)
        deadlines.set_deadline(
            campaign=ooo,
            scene=door,
            kind=reactions.DEADLINE_KIND,
            target_id=reaction.pk,
            due_at=_at_minute(timedelta(days=1)),
            actor=gm,
        )
        # Another HITOS campaign: a negative activation against Inés waits for
        # Ana, with the deadline the rules give it (``activation_deadline_hours``
        # from now, to the microsecond).
        elsewhere = make_world()
        roll = table_check(
            campaign=elsewhere.campaign,
            user=elsewhere.ana,
            setup=check_setup(elsewhere.ines, characteristic="reflejos", skill="Sigilo"),
            purpose="Cruzar el vestíbulo sin ruido",
            difficulty=15,
            character=elsewhere.ines,
            scene=elsewhere.scene,
            post=elsewhere.post,
            client_seed=client_seed(),
        )
        activations.activate_negative(
            table_roll=roll, user=elsewhere.gm, aspect_choice=f"a{elsewhere.ines_aspect.pk}", positions=[0]
        )
        return cls(
            slug=campaign.slug,
            people={"gm": gm, "ana": world.ana, "bruno": world.bruno, "carla": carla, "other-gm": elsewhere.gm},
            scene=world.scene.pk,
            bruno_absence=bruno_away.pk,
            passed_deadline=passed.pk,
            aventuras_slug=ooo.slug,
            reaction=reaction.pk,
            activation_slug=elsewhere.campaign.slug,
            activation_scene=elsewhere.scene.pk,
        )


def _refuse_absence(page: Page) -> Locator:
    form = page.locator("#ausencia-form")
    form.get_by_label("Desde").fill("2031-05-12")
    form.get_by_label("Hasta (incluido)").fill("2031-05-10")
    form.get_by_label("Nota (opcional)").fill("Vuelvo antes de irme")
    return form


def _refuse_takeover(page: Page) -> Locator:
    form = page.locator("#llevar-personaje form")
    form.get_by_label("Personaje").select_option(label="Lucía Vidal, de Carla: Nadie lleva a mi personaje")
    form.get_by_label("Motivo").fill("Exámenes")
    return form


def _in(name: str, *args: str) -> Callable[[PaceWorld], str]:
    return lambda w: reverse(name, args=[w.slug, *(getattr(w, arg) for arg in args)])


PAGES = (
    Gate("absences-empty", "ana", _in("campaigns:absences"), ("No has anunciado ninguna ausencia.", "Si falto")),
    Gate("absences-away", "bruno", _in("campaigns:absences"), (ABSENCE_NOTE, "Ya he vuelto", "Anular")),
    Gate(
        "absences-refused",
        "ana",
        _in("campaigns:absences"),
        ("La vuelta no puede ser antes de la salida.",),
        refuse=_refuse_absence,
    ),
    Gate("absence-edit", "bruno", _in("campaigns:absence-edit", "bruno_absence"), ("Cambiar la ausencia",)),
    Gate("absentees", "ana", _in("campaigns:absentees"), ("Bruno", ABSENCE_NOTE, "Exámenes")),
    Gate(
        "scene-status-gm",
        "gm",
        _in("campaigns:scene-status", "scene"),
        ("Plazo de la escena.", "Dar un toque a Ana", "ausente hasta el", "Retirar el plazo"),
    ),
    Gate(
        "scene-status-player",
        "ana",
        _in("campaigns:scene-status", "scene"),
        ("Plazo de la escena.", "ausente hasta el", "Turno de Inés Salcedo"),
    ),
    # The scene page: its status region comes in through htmx once the page has loaded.
    Gate("scene-gm", "gm", _in("table:scene-detail", "scene"), ("Dar un toque a Ana", "Plazo de la escena.")),
    Gate("scene-player", "ana", _in("table:scene-detail", "scene"), ("A quién esperamos", "ausente hasta el")),
    Gate("deadline-settle", "gm", _in("campaigns:deadline-settle", "passed_deadline"), ("Cerrar sin respuesta",)),
    Gate("scene-deadline", "gm", _in("campaigns:scene-deadline", "scene"), ("Mover el plazo",)),
    Gate(
        "campaign-gm",
        "gm",
        _in("campaigns:campaign-detail"),
        ("Ritmo de la partida", "Esperando a", "Ausentes ahora", "Llevas a Tomás Ferrer, de Bruno"),
    ),
    Gate("campaign-owner", "bruno", _in("campaigns:campaign-detail"), ("Recuperar mi personaje",)),
    Gate("home-pending", "ana", lambda w: reverse("home"), ("Pendiente", "Escribir en «El vestíbulo»", "Plazo:")),
    Gate("home-away", "bruno", lambda w: reverse("home"), ("Estás ausente",)),
    Gate(
        "dashboard",
        "gm",
        _in("campaigns:dashboard"),
        ("Vencidos, por resolver", "Ausentes ahora", "Personajes de jugadores ausentes", "Lucía Vidal, de Carla"),
    ),
    Gate(
        "takeover-refused",
        "gm",
        _in("table:takeover-start"),
        ("Carla no ha dado permiso para que otro lleve a su personaje.",),
        refuse=_refuse_takeover,
    ),
    Gate("request-form", "gm", _in("table:request-create", "scene"), ("Europe/Madrid",)),
    Gate("combat", "gm", _in("hitos:combat", "scene"), ("Plazo:", "ausente hasta el")),
    Gate(
        "reaction-deadline",
        "gm",
        lambda w: reverse("aventuras:reaction-deadline", args=[w.aventuras_slug, w.reaction]),
        ("Plazo para la reacción de Palomita", "Mover el plazo"),
    ),
    # A deadline the rules set (not typed in a form), with microseconds.
    Gate(
        "activation-status",
        "other-gm",
        lambda w: reverse("campaigns:scene-status", args=[w.activation_slug, w.activation_scene]),
        ("Plazo:",),
    ),
)


class PaceCrawl(Crawl):
    """The gates' visit of ``PAGES`` in the module's world (its figures are
    not recorded: issue 14's crawl has its own file)."""

    pages = PAGES
    figures = None

    def build(self) -> tuple[PaceWorld, dict[str, User | None]]:
        world = PaceWorld.build()
        return world, world.people


crawl = crawl_fixture(PaceCrawl)
(
    test_pace_crawl_visits_every_page,
    test_pace_page_has_no_accessibility_violation,
    test_pace_page_fits_the_window_without_sideways_scroll,
    test_pace_page_html_has_no_error_for_the_nu_checker,
) = gate_tests(PAGES, count=21)
