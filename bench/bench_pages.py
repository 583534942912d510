"""Benchmark of the pages people live on: `python bench/bench_pages.py`.

Builds, through the project's own services, a public HITOS campaign with a
scene of 20 posts (about 600 characters of Markdown each, 10 of them with a
HITOS roll card), then serves, in this one process and through Django's WSGI
handler (the whole middleware stack, no test client):

- the scene page, read anonymously and by a player (whose page carries the
  post form and the cards' actions);
- the campaign page, read by the player;
- the "new posts" poll of a player when nothing was published (answered
  from the scene's cached version, without reading posts);
- a bare view defined here: one query and a 2 KB template, the floor any
  Django page stands on.

Each is timed in alternated rounds after a warm-up; the best round counts.
It prints requests per second for each and the ratio page/bare; the last two
lines read ``scene/bare anonymous: 0.NNN`` and ``scene/bare player: 0.NNN``
(issue 13's targets: at least 0.10 and 0.07).

Uses DATABASE_URL when set (a PostgreSQL database kept for benchmarks: each
run adds a campaign), else a temporary SQLite file.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_ANONYMOUS = 0.10
TARGET_PLAYER = 0.07
POSTS = 20
POSTS_WITH_ROLLS = 10
BODY = (
    "La puerta del sótano cede con un gemido largo. **Inés** baja el primer escalón con el candil en alto y "
    "la luz apenas alcanza la pared del fondo, cubierta de *musgo negro* y de marcas de uñas.\n\n"
    "- Huele a tierra mojada y a algo más dulce.\n"
    "- Al fondo, el brocal de un pozo tapado con tablones.\n\n"
    "Tomás se queda arriba, vigilando el pasillo. «Si oyes algo, grita», le dice ella, y sigue bajando "
    "mientras cuenta los escalones en voz baja. En el decimotercero la madera cruje y se detiene. "
    "Nada responde, salvo el goteo constante que llega desde el pozo. (Mensaje %(n)s.)"
)
BARE_TEMPLATE = (
    "<!doctype html><html lang='es'><head><meta charset='utf-8'><title>{{ user.username }}</title></head><body>"
    + "<p>{{ user.username }} · Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod.</p>" * 20
    + "</body></html>"
)


def setup_django() -> None:
    if not os.environ.get("DATABASE_URL"):
        folder = tempfile.mkdtemp(prefix="hitos-bench-")
        os.environ["DATABASE_URL"] = f"sqlite:///{folder}/bench.sqlite3"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hitos_site.settings")
    os.environ.setdefault("DEBUG", "1")  # development keys under var/ unless the environment has real ones
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    # As in production: with DEBUG on, Django records every query and renders debug pages.
    settings.DEBUG = False
    settings.ALLOWED_HOSTS = ["testserver"]
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


_bare_template = None


def bare_view(request):
    """One query and a 2 KB template (compiled once, as Django's cached
    template loader keeps a template file): the floor of a Django page."""
    global _bare_template
    from django.http import HttpResponse
    from django.template import engines

    from accounts.models import User

    if _bare_template is None:
        _bare_template = engines["django"].from_string(BARE_TEMPLATE)
    user = User.objects.only("username").order_by("pk").first()
    return HttpResponse(_bare_template.render({"user": user}))


def install_urls() -> None:
    """The site's URLs plus the bare view, served by the same handler."""
    from django.conf import settings
    from django.urls import clear_url_caches, include, path

    urls = types.ModuleType("bench_pages_urls")
    urls.urlpatterns = [path("bench/bare/", bare_view), path("", include("hitos_site.urls"))]
    urls.handler500 = "hitos_site.errors.server_error"
    sys.modules[urls.__name__] = urls
    settings.ROOT_URLCONF = urls.__name__
    clear_url_caches()


def build_scene():
    """A public campaign, a player with an approved character, a scene of
    20 posts, 10 of them with a HITOS check."""
    from accounts.models import User
    from campaigns import services as forum
    from campaigns.models import Membership, Post, Role, Visibility
    from campaigns.permissions import campaign_access
    from sheets.models import Character
    from systems.hitos.checks.services import check_setup, owner_for, table_check
    from systems.hitos.sheet import services as sheet_services

    stamp = time.time_ns()
    gm = User.objects.create_user(username=f"dj-{stamp}", email=f"dj-{stamp}@example.org", password=None)
    player = User.objects.create_user(username=f"jugadora-{stamp}", email=f"j-{stamp}@example.org", password=None)
    campaign = forum.campaign_create(gm=gm, title=f"Banco {stamp}", system="hitos", visibility=Visibility.PUBLIC)
    Membership.objects.create(campaign=campaign, user=player, role=Role.PLAYER)
    data = sheet_services.SheetData(
        fields={"name": "Inés", "fortaleza": 5, "reflejos": 6, "voluntad": 5, "intelecto": 5, "drama": 5},
        concept="Archivera curiosa",
        hitos=["Vio al monstruo del pozo"],
        skills=[("Sigilo", "subterfugio", 3), ("Pelea", "combate", 2)],
    )
    character = sheet_services.sheet_create(campaign=campaign, owner=player, actor=player, data=data)
    character.status = Character.Status.APPROVED
    character.save(update_fields=["status"])
    scene = forum.scene_create(campaign=campaign, title="El sótano", game_values={"aspects": ["Oscuridad casi total"]})
    access = campaign_access(player, campaign)
    for n in range(POSTS):
        post = forum.post_create(
            access=access, scene=scene, voice=Post.Voice.CHARACTER, character=character, body=BODY % {"n": n + 1}
        )
        if n % 2 == 0 and n // 2 < POSTS_WITH_ROLLS:
            table_check(
                campaign=campaign,
                user=player,
                setup=check_setup(character, characteristic="reflejos", skill="Sigilo"),
                purpose="Bajar sin hacer ruido",
                difficulty=15,
                character=character,
                scene=scene,
                post=post,
                owner=owner_for(character, player),
            )
    return campaign, scene, player


def session_cookie(user) -> str:
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


def wsgi_getter(path: str, cookie: str = "", query: str = "", expect: int = 200):
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
            "QUERY_STRING": query,
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


def rate(get, seconds: float) -> float:
    """Requests per second of ``get`` over about ``seconds``."""
    count, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        get()
        count += 1
    return count / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="length of one timed round per page")
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds (the best counts)")
    args = parser.parse_args()

    setup_django()
    install_urls()
    from django.urls import reverse

    from campaigns.versions import scene_version

    campaign, scene, player = build_scene()
    cookie = session_cookie(player)
    scene_url = reverse("table:scene-detail", args=[campaign.slug, scene.pk])
    pages = {
        "bare": wsgi_getter("/bench/bare/"),
        "scene anonymous": wsgi_getter(scene_url),
        "scene player": wsgi_getter(scene_url, cookie),
        "campaign player": wsgi_getter(reverse("campaigns:campaign-detail", args=[campaign.slug]), cookie),
        "poll player": wsgi_getter(
            reverse("table:scene-poll", args=[campaign.slug, scene.pk]),
            cookie,
            query=f"despues={scene.posts.order_by('-pk').values_list('pk', flat=True).first()}&v={scene_version(scene.pk)}",
            expect=204,
        ),
    }
    for get in pages.values():  # warm up: templates compiled, connections open
        for _ in range(20):
            get()
    best = dict.fromkeys(pages, 0.0)
    for _ in range(args.rounds):
        for name, get in pages.items():
            best[name] = max(best[name], rate(get, args.seconds))

    from django.db import connection

    print(f"database: {connection.vendor}; {POSTS} posts, {POSTS_WITH_ROLLS} with a roll card")
    for name, value in best.items():
        print(f"{name:>16}: {value:8.1f} requests/s")
    for name in ("campaign player", "poll player"):
        print(f"{name.split()[0]}/bare {name.split()[1]}: {best[name] / best['bare']:.3f}")
    anonymous, as_player = best["scene anonymous"] / best["bare"], best["scene player"] / best["bare"]
    print(f"targets: anonymous ≥ {TARGET_ANONYMOUS:.2f}, player ≥ {TARGET_PLAYER:.2f}")
    print(f"scene/bare anonymous: {anonymous:.3f}")
    print(f"scene/bare player: {as_player:.3f}")


if __name__ == "__main__":
    main()
