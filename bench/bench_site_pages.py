"""Benchmark of the other pages people live on: `python bench/bench_site_pages.py`.

Builds, through the project's own services, a public HITOS campaign as it is
played: a GM, four players with approved characters (skills, weapons,
aspects), three scenes with 20 posts between them, 50 rolls in the log (table
checks, an aspect re-roll, free rolls, a secret roll of the GM), and an open
combat of six with initiative rolled and a few attacks; beside it a few other
public campaigns for the home page's list. Then it serves, in this one
process and through Django's WSGI handler (the whole middleware stack, no
test client), for a logged-in player and, where the page is public, for a
reader without an account:

- the home page (``/``);
- the campaign page;
- a character sheet (the player's own; a stranger sees its public part);
- a roll permalink (a table check with its post and a re-roll);
- the campaign's roll log;
- the scene's combat page;
- a bare view defined here: one query and a 2 KB template, the floor any
  Django page stands on.

Each is timed in alternated rounds after a warm-up (the caches filled, as
on a site that is being read); the best round counts. It prints one line per
page, ``<page>: N req/s, ratio R`` (R = page/bare), and beside it the page's
figure before issue 13 item 2 and its target, three times that figure.

Today's figures (before item 2's work: that commit's tree measured with this
script on SQLite, wall clock, four runs made in turn with runs of the new
code; for each page the best of the four; bare view 470-710 req/s):

    page                    req/s   ratio   target (3x)
    home player              42.7   0.084     128
    home anonymous          101.0   0.202     303
    campaign player          39.5   0.083     119
    campaign anonymous       75.9   0.147     228
    sheet player             38.5   0.082     116
    sheet anonymous          64.6   0.120     194
    permalink player         20.4   0.039      61
    permalink anonymous      30.6   0.060      92
    roll log player          15.9   0.031      48
    roll log anonymous       13.3   0.027      40
    combat player            17.8   0.032      53
    combat anonymous         24.6   0.046      74

On a shared machine the figures move with the load: the ratio to the bare
view, measured in the same run, moves less; ``--clock cpu`` times this
process's CPU time instead of the wall clock. Since 2026-12-02 the bare view
compiles its template once, as Django's cached loader keeps a template file
(it compiled it on every request before: about a third as fast), so today's
ratios above are to that slower floor: compare requests per second, or read
"by ratio" as about 2.5 times too low.

Uses DATABASE_URL when set (a PostgreSQL database kept for benchmarks: each
run adds its campaigns), else a temporary SQLite file.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
import types
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# The set-up, the bare view and the session cookie are bench_pages' own.
from bench_pages import bare_view, session_cookie, setup_django  # noqa: E402

# Requests per second and ratio to the bare view before issue 13 item 2
# (the module's docstring); the target is TARGET_FACTOR times each.
TODAY: dict[str, tuple[float, float]] = {
    "home player": (42.7, 0.084),
    "home anonymous": (101.0, 0.202),
    "campaign player": (39.5, 0.083),
    "campaign anonymous": (75.9, 0.147),
    "sheet player": (38.5, 0.082),
    "sheet anonymous": (64.6, 0.120),
    "permalink player": (20.4, 0.039),
    "permalink anonymous": (30.6, 0.060),
    "roll log player": (15.9, 0.031),
    "roll log anonymous": (13.3, 0.027),
    "combat player": (17.8, 0.032),
    "combat anonymous": (24.6, 0.046),
}
TARGET_FACTOR = 3
PLAYERS = ("Inés Albarrán", "Tomás Quiroga", "Lucía Ferrán", "Mateo Robles")
SCENES = ("1. La verja oxidada", "2. El vestíbulo", "3. El sótano")
POSTS = 20
ROLLS = 50
OTHER_CAMPAIGNS = 8
BODY = (
    "La puerta del sótano cede con un gemido largo. **%(name)s** baja el primer escalón con el candil en alto y "
    "la luz apenas alcanza la pared del fondo, cubierta de *musgo negro* y de marcas de uñas.\n\n"
    "- Huele a tierra mojada y a algo más dulce.\n"
    "- Al fondo, el brocal de un pozo tapado con tablones.\n\n"
    "Nada responde, salvo el goteo constante que llega desde el pozo. (Mensaje %(n)s.)"
)


def install_urls() -> None:
    """The site's URLs plus the bare view, served by the same handler."""
    from django.conf import settings
    from django.urls import clear_url_caches, include, path

    urls = types.ModuleType("bench_site_pages_urls")
    urls.urlpatterns = [path("bench/bare/", bare_view), path("", include("hitos_site.urls"))]
    urls.handler500 = "hitos_site.errors.server_error"
    sys.modules[urls.__name__] = urls
    settings.ROOT_URLCONF = urls.__name__
    clear_url_caches()


@dataclass
class Table:
    campaign: object
    player: object
    character: object
    scene: object
    permalink: str


def build_campaign() -> Table:
    """The campaign described in the module's docstring, built through the services."""
    from accounts.models import User
    from campaigns import services as forum
    from campaigns.models import CampaignStatus, Membership, Post, Role, Visibility
    from campaigns.permissions import campaign_access
    from rolls import services as roll_services
    from sheets.models import CampaignSheetOptions, Character
    from systems.hitos.activations import services as activations
    from systems.hitos.checks.services import check_setup, owner_for, table_check
    from systems.hitos.combat import services as combat
    from systems.hitos.models import Aspect
    from systems.hitos.secret import services as secret
    from systems.hitos.sheet import services as sheet_services

    stamp = time.time_ns()

    def user(name: str) -> User:
        return User.objects.create_user(
            username=f"{name}-{stamp}", email=f"{name}-{stamp}@example.org", password=None, display_name=name.title()
        )

    gm = user("directora")
    campaign = forum.campaign_create(
        gm=gm,
        title=f"La mansión {stamp}",
        system="hitos",
        visibility=Visibility.PUBLIC,
        status=CampaignStatus.PLAYING,
        description="Una partida de **HITOS** en el Madrid de los años veinte.",
    )
    CampaignSheetOptions.objects.update_or_create(
        campaign=campaign, defaults={"visibility": CampaignSheetOptions.Visibility.PUBLIC}
    )
    players, characters = [], []
    for n, name in enumerate(PLAYERS):
        player = user(f"jugador{n}")
        Membership.objects.create(campaign=campaign, user=player, role=Role.PLAYER)
        data = sheet_services.SheetData(
            fields={"name": name, "fortaleza": 5, "reflejos": 6, "voluntad": 5, "intelecto": 5, "drama": 5},
            concept="Archivera curiosa" if n % 2 == 0 else "Veterano de Marruecos",
            traits={"reflejos": "Rápida de manos"},
            hitos=["Vio al monstruo del pozo", "Se crió entre los libros del abuelo"],
            complications=["Miedo a la oscuridad"],
            skills=[
                ("Sigilo", "subterfugio", 3),
                ("Pelea", "combate", 2),
                ("Armas de fuego", "combate", 3),
                ("Percepción", "percepcion", 4),
                ("Investigar", "cultura", 3),
                ("Atletismo", "forma_fisica", 2),
            ],
            weapons=[("Revólver", "M", False, "Seis balas"), ("Cuchillo", "C", True, "")],
        )
        character = sheet_services.sheet_create(campaign=campaign, owner=player, actor=player, data=data)
        character.status = Character.Status.APPROVED
        character.save(update_fields=["status"])
        players.append(player)
        characters.append(character)
    npcs = []
    for name in ("La cosa del pozo", "El mayordomo"):
        data = sheet_services.SheetData(
            fields={"name": name, "fortaleza": 7, "reflejos": 5, "voluntad": 3, "intelecto": 2, "drama": 0},
            skills=[("Garras", "combate", 4)],
        )
        npcs.append(
            sheet_services.sheet_create(campaign=campaign, owner=gm, actor=gm, data=data, kind=Character.Kind.NPC)
        )

    scenes = [
        forum.scene_create(campaign=campaign, title=title, game_values={"aspects": ["Oscuridad casi total"]})
        for title in SCENES
    ]
    accesses = [campaign_access(p, campaign) for p in players]
    rolls = 0
    first_check = None
    for n in range(POSTS):
        who = n % len(players)
        scene = scenes[min(n * len(scenes) // POSTS, len(scenes) - 1)]
        post = forum.post_create(
            access=accesses[who],
            scene=scene,
            voice=Post.Voice.CHARACTER,
            character=characters[who],
            body=BODY % {"name": characters[who].name, "n": n + 1},
        )
        if n % 2 == 0:
            table_roll = table_check(
                campaign=campaign,
                user=players[who],
                setup=check_setup(characters[who], characteristic="reflejos", skill="Sigilo"),
                purpose="Bajar sin hacer ruido",
                difficulty=15,
                character=characters[who],
                scene=scene,
                post=post,
                owner=owner_for(characters[who], players[who]),
            )
            rolls += 1
            if first_check is None:
                first_check = table_roll
                hito = characters[who].aspects.get(kind=Aspect.Kind.HITO, position=0)
                activations.activate_positive(
                    table_roll=table_roll,
                    user=players[who],
                    aspect_choice=f"a{hito.pk}",
                    positions=[0],
                    payment="point",
                )
                rolls += 1
    scene = scenes[-1]
    gm_access = campaign_access(gm, campaign)
    fight = combat.combat_start(scene=scene, access=gm_access, characters=[*characters, *npcs])
    combat.initiative_roll(combat=fight, access=gm_access)
    rolls += len(characters) + len(npcs)
    fighters = {c.character_id: c for c in fight.combatants.all()}
    for n in range(6):
        attacker = characters[n % len(characters)]
        combat.attack_make(
            combat=fight,
            access=gm_access,
            attacker=fighters[attacker.pk],
            target=fighters[npcs[0].pk],
            weapon=attacker.weapons.get(name="Revólver"),
        )
        rolls += 1
    secret.secret_check_roll(scene=scene, user=gm, purpose="Percepción oculta", free_modifier=8, difficulty=15)
    rolls += 1
    while rolls < ROLLS:
        who = rolls % len(players)
        roll_services.free_roll(campaign=campaign, user=players[who], text="2d6+1", purpose="Monedas del cochero")
        rolls += 1

    for n in range(OTHER_CAMPAIGNS):
        other = forum.campaign_create(
            gm=gm if n % 3 else players[0],
            title=f"Otra partida {n} {stamp}",
            system="hitos",
            visibility=Visibility.PUBLIC,
            description="Terror en un pueblo de Soria.",
        )
        if n % 2 == 0:
            Membership.objects.create(campaign=other, user=players[1], role=Role.PLAYER)
    return Table(
        campaign=campaign,
        player=players[0],
        character=characters[0],
        scene=scene,
        permalink=first_check.first.permalink,
    )


def wsgi_getter(path: str, cookie: str = "", expect: int = 200):
    """A function that serves ``path`` once through the WSGI handler."""
    from django.core.handlers.wsgi import WSGIHandler

    handler = WSGIHandler()
    statuses = []

    def start_response(status, headers, exc_info=None):
        statuses.append(status)

    def get() -> None:
        environ = {
            "REQUEST_METHOD": "GET",
            "PATH_INFO": path,
            "QUERY_STRING": "",
            "SERVER_NAME": "testserver",
            "SERVER_PORT": "80",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "HTTP_HOST": "testserver",
            "HTTP_ACCEPT": "text/html",
            "wsgi.input": io.BytesIO(b""),
            "wsgi.url_scheme": "http",
            "wsgi.errors": sys.stderr,
        }
        if cookie:
            environ["HTTP_COOKIE"] = cookie
        body = b"".join(handler(environ, start_response))
        status = statuses.pop()
        if not status.startswith(str(expect)):
            raise SystemExit(f"{path} answered {status}")
        if expect == 200 and len(body) < 500:
            raise SystemExit(f"{path} answered a suspiciously short page ({len(body)} bytes)")

    return get


def rate(get, seconds: float, clock=time.perf_counter) -> float:
    """Requests per second of ``get`` over about ``seconds`` of ``clock``."""
    count, start = 0, clock()
    while (elapsed := clock() - start) < seconds:
        get()
        count += 1
    return count / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.5, help="length of one timed round per page")
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds (the best counts)")
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="time by the wall clock (default) or by this process's CPU time, steadier on a busy machine "
        "(on PostgreSQL it leaves out the server's share)",
    )
    args = parser.parse_args()

    setup_django()
    install_urls()
    from django.urls import reverse

    table = build_campaign()
    cookie = session_cookie(table.player)
    slug = table.campaign.slug
    urls = {
        "home": reverse("home"),
        "campaign": reverse("campaigns:campaign-detail", args=[slug]),
        "sheet": reverse("sheets:sheet-detail", args=[slug, table.character.pk]),
        "permalink": reverse("rolls:roll-permalink", args=[table.permalink]),
        "roll log": reverse("rolls:roll-log", args=[slug]),
        "combat": reverse("hitos:combat", args=[slug, table.scene.pk]),
    }
    pages = {"bare": wsgi_getter("/bench/bare/")}
    for name, url in urls.items():
        pages[f"{name} player"] = wsgi_getter(url, cookie)
        pages[f"{name} anonymous"] = wsgi_getter(url)
    for get in pages.values():  # warm up: templates compiled, connections open, caches filled
        for _ in range(20):
            get()
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    best = dict.fromkeys(pages, 0.0)
    for _ in range(args.rounds):
        for name, get in pages.items():
            best[name] = max(best[name], rate(get, args.seconds, clock))

    from django.db import connection

    print(
        f"database: {connection.vendor}; {POSTS} posts in {len(SCENES)} scenes, {ROLLS} rolls, a combat of six; "
        f"{args.clock} clock"
    )
    print(f"bare: {best['bare']:.1f} req/s")
    for name, value in best.items():
        if name == "bare":
            continue
        ratio = value / best["bare"]
        line = f"{name}: {value:.1f} req/s, ratio {ratio:.3f}"
        if name in TODAY:
            today, today_ratio = TODAY[name]
            line += (
                f" (today {today:.1f} req/s, ratio {today_ratio:.3f}; target ≥ {TARGET_FACTOR * today:.1f} req/s;"
                f" ×{value / today:.1f} by req/s, ×{ratio / today_ratio:.1f} by ratio)"
            )
        print(line)


if __name__ == "__main__":
    main()
