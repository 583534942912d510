"""Two web processes and one task worker share PostgreSQL and Redis (issue 13).

The deployment of docs/deploy.md in miniature: two gunicorn processes (two
machines behind a load balancer, say) and one ``manage.py db_worker``, all on
this test's PostgreSQL database and one Redis. A post published through the
first process is on the second one's scene page at once, the second's "new
posts" poll sees it (the scene's version lives in Redis), and the
notification e-mail to the GM is sent by the worker, not by the request.

Needs PostgreSQL (SQLite is one file on one machine) and Redis; under CI both
are required, elsewhere the test skips without them.
"""

from __future__ import annotations

import http.client
import os
import random
import re
import socket
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.urls import reverse

from campaigns.models import Notification, Post
from tests.conftest import client_for, make_world
from tests.factories import client_seed

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL: processes on several machines"),
    pytest.mark.django_db(transaction=True),
]


def _redis_db() -> str:
    """A Redis database of its own for this run, emptied before and after."""
    import redis

    url = f"redis://127.0.0.1:6379/{random.randint(1, 15)}"
    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).flushdb()
    except redis.exceptions.ConnectionError:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip("needs Redis at 127.0.0.1:6379 (.ci/run starts it)")
    return url


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _database_url() -> str:
    db = connection.settings_dict
    host = urllib.parse.quote(db["HOST"] or "127.0.0.1", safe="")
    user = urllib.parse.quote(db["USER"] or "postgres", safe="")
    password = f":{urllib.parse.quote(db['PASSWORD'], safe='')}" if db["PASSWORD"] else ""
    return f"postgres://{user}{password}@{host}:{db['PORT'] or 5432}/{db['NAME']}"


class Server:
    """One process of the deployment, its output in a file."""

    def __init__(self, name: str, command: list[str], env: dict[str, str], folder: Path):
        self.name = name
        self.log = folder / f"{name}.log"
        self.sink = self.log.open("wb")
        self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=self.sink, stderr=subprocess.STDOUT)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.sink.close()


class Browser:
    """A player's browser against one web process: its session cookie, kept-alive."""

    def __init__(self, port: int, cookies: dict[str, str]):
        self.port = port
        self.cookies = dict(cookies)

    def request(self, method: str, path: str, body: dict[str, str] | None = None, headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=20)
        sent = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items()), **(headers or {})}
        data = None
        if body is not None:
            data = urllib.parse.urlencode(body)
            sent["Content-Type"] = "application/x-www-form-urlencoded"
            sent["Referer"] = f"http://127.0.0.1:{self.port}{path}"
        conn.request(method, path, body=data, headers=sent)
        response = conn.getresponse()
        text = response.read().decode()
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                self.cookies[name] = rest.split(";", 1)[0]
        conn.close()
        return response.status, text


def _wait_until_serving(server: Server, port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            pytest.fail(f"{server.name} stopped:\n{server.output()}")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        try:
            conn.request("GET", reverse("accounts:login"))
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.2)
        finally:
            conn.close()
    pytest.fail(f"{server.name} did not answer in 60 s:\n{server.output()}")


def _wait_for(predicate, what: str, seconds: float = 30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.2)
    pytest.fail(f"waited {seconds} s for {what}")


def test_a_post_made_on_one_web_process_is_on_the_other_at_once_and_the_worker_mails_it(tmp_path):
    redis_url = _redis_db()
    play = make_world()
    gm = play.gm
    gm.email_notifications = gm.EmailChoice.IMMEDIATE
    gm.email = "gm@example.org"
    gm.save(update_fields=["email_notifications", "email"])
    session = client_for(play.ana).cookies[settings.SESSION_COOKIE_NAME].value

    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "hitos_site.settings",
        "DATABASE_URL": _database_url(),
        "REDIS_URL": redis_url,
        "DEBUG": "1",  # the development keys under var/, which this test process signs with too
        "ALLOWED_HOSTS": "127.0.0.1",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("EMAIL_HOST", None)  # e-mails printed by the worker's console mailer
    ports = [_free_port(), _free_port()]
    # --no-control-socket: gunicorn 27's default socket path is one per user, shared by both.
    gunicorn = [sys.executable, "-m", "gunicorn", "hitos_site.wsgi", "--workers", "1", "--timeout", "60"]
    gunicorn.append("--no-control-socket")
    servers = [
        Server(f"web{n}", [*gunicorn, "--bind", f"127.0.0.1:{port}"], env, tmp_path) for n, port in enumerate(ports)
    ]
    worker = Server(
        "worker",
        [sys.executable, "manage.py", "db_worker", "--no-reload", "--no-startup-delay", "--interval", "0.2"],
        env,
        tmp_path,
    )
    try:
        for server, port in zip(servers, ports, strict=True):
            _wait_until_serving(server, port)
        first, second = (Browser(port, {settings.SESSION_COOKIE_NAME: session}) for port in ports)
        scene_path = play.scene.get_absolute_url()

        # The second process renders the scene (and caches it) before the post.
        status, before = second.request("GET", scene_path)
        assert status == 200
        version = re.search(r"[?&](?:amp;)?v=(\d+)", before).group(1)
        poll = reverse("table:scene-poll", args=[play.campaign.slug, play.scene.pk])
        poll_query = f"{poll}?despues={play.post.pk}&v={version}"
        assert second.request("GET", poll_query, headers={"HX-Request": "true"})[0] == 204

        # Published through the first process, as the page's form does.
        status, page = first.request("GET", scene_path)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        status, _answer = first.request(
            "POST",
            reverse("table:post-create", args=[play.campaign.slug, play.scene.pk]),
            {
                "csrfmiddlewaretoken": token,
                "voice": f"character:{play.ines.pk}",
                "body": "Desde la primera máquina: ¿lo veis?",
                "recipients": "all",
                "submission_key": client_seed(),
            },
            headers={"HX-Request": "true"},
        )
        assert status == 200
        assert Post.objects.filter(body="Desde la primera máquina: ¿lo veis?").count() == 1

        # At once on the second: its poll and its page.
        status, _fresh = second.request("GET", poll_query, headers={"HX-Request": "true"})
        assert status == 200
        status, after = second.request("GET", scene_path)
        assert "Desde la primera máquina: ¿lo veis?" in after

        # The worker, not the request, wrote the GM's notification and sent its e-mail.
        _wait_for(lambda: "To: gm@example.org" in worker.output(), "the worker's e-mail")
        assert "Subject: [Hitos]" in worker.output()
        notification = Notification.objects.get(user=gm, post__body__startswith="Desde la primera")
        _wait_for(lambda: Notification.objects.get(pk=notification.pk).emailed_at, "the e-mail to be marked sent")
    finally:
        for server in [*servers, worker]:
            server.stop()
        import redis

        redis.Redis.from_url(redis_url).flushdb()
