"""Log-in and password-reset throttling (issue 11, item 5).

Log-ins: django-axes counts failures per username and, separately, per client
address; the 5th failure within 15 minutes locks that username or that address
until 15 minutes after the last counted failure. Password-reset requests:
django-ratelimit allows 3 an hour per e-mail address and 10 an hour per client
address. These tests run with the site's own settings for both (the test
settings leave them half off for the rest of the suite, see
hitos_site/settings_test.py).
"""

import math
import os
import re
import subprocess
import sys
import time
import types
from datetime import timedelta
from pathlib import Path

import django_ratelimit.core
import pytest
from axes.models import AccessAttempt
from django.core import mail
from django.core.cache import cache
from django.db.models import F
from django.test import Client, RequestFactory
from django.urls import reverse
from django.utils import timezone

from accounts.views import client_ip
from hitos_site import settings as site_settings
from hitos_site import settings_test
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "clave-de-prueba-123"
HOME = "203.0.113.10"
ELSEWHERE = "198.51.100.20"


@pytest.fixture(autouse=True)
def _throttling_as_deployed(settings):
    settings.AUTHENTICATION_BACKENDS = site_settings.AUTHENTICATION_BACKENDS
    settings.RATELIMIT_ENABLE = True
    settings.AXES_FAILURE_LIMIT = 5
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)
    settings.PASSWORD_RESET_RATE_PER_EMAIL = "3/60m"
    settings.PASSWORD_RESET_RATE_PER_IP = "10/60m"
    settings.TRUSTED_PROXY_COUNT = 0
    cache.clear()
    yield
    cache.clear()


def _log_in(client, username, password, ip=HOME, **extra):
    return client.post(reverse("accounts:login"), {"username": username, "password": password}, REMOTE_ADDR=ip, **extra)


def _fail(client, username, ip=HOME, **extra):
    return _log_in(client, username, "no-es-esta", ip, **extra)


def _text(response) -> str:
    """The page's text with its runs of white space as single spaces."""
    return " ".join(response.text.split())


def _let_time_pass(delta: timedelta) -> None:
    """Age every recorded failure by ``delta``, as if that much time had passed."""
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - delta)


def _hh_mm(moment) -> str:
    return timezone.localtime(moment).strftime("%H:%M")


def _lock_ends() -> str:
    return _hh_mm(AccessAttempt.objects.latest("attempt_time").attempt_time + timedelta(minutes=15))


def _csrf_free(text: str) -> str:
    return re.sub(r'(csrfmiddlewaretoken" value=|"X-CSRFToken": )"[^"]+"', r"\1", text)


# Log-in: the limit, the lockout page, the time it names.


def test_four_failures_are_allowed_and_each_says_how_many_attempts_remain(client):
    UserFactory(username="mario")
    for remaining in (4, 3, 2):
        response = _fail(client, "mario")
        assert response.status_code == 200
        assert "Por favor, introduzca un nombre de usuario y clave correctos" in _text(response)
        assert f"Te quedan {remaining} intentos; después bloquearemos el acceso. El bloqueo dura 15 minutos." in _text(
            response
        )
    response = _fail(client, "mario")
    assert response.status_code == 200
    assert "Te queda 1 intento; después bloquearemos el acceso. El bloqueo dura 15 minutos." in _text(response)


def test_the_login_page_shows_no_warning_before_any_failure(client):
    response = client.get(reverse("accounts:login"))
    assert response.status_code == 200
    assert "bloquearemos" not in _text(response)


def test_the_fifth_failure_locks_with_a_spanish_page_that_says_until_when(client):
    UserFactory(username="mario")
    for _ in range(4):
        _fail(client, "mario")
    response = _fail(client, "mario")
    assert response.status_code == 429
    assert "<title>Demasiados intentos fallidos · Hitos</title>" in _text(response)
    assert '<h1 class="h3 mb-3">Demasiados intentos fallidos</h1>' in _text(response)
    assert "ni siquiera con la contraseña correcta" in _text(response)
    assert f"Podrás volver a intentarlo a partir de las {_lock_ends()} (dentro de 15 minutos)." in _text(response)
    assert f'href="{reverse("accounts:password-reset")}"' in _text(response)
    assert 895 <= int(response.headers["Retry-After"]) <= 900
    assert "no-store" in response.headers["Cache-Control"]
    # The page is the site's own, chrome and all.
    assert 'class="navbar-brand fw-bold"' in _text(response)


def test_a_locked_account_cannot_log_in_even_with_the_right_password(client):
    UserFactory(username="mario")
    for _ in range(5):
        _fail(client, "mario")
    response = _log_in(client, "mario", PASSWORD, ip=ELSEWHERE)
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session
    assert f"Podrás volver a intentarlo a partir de las {_lock_ends()} (dentro de 15 minutos)." in _text(response)


def test_another_account_from_another_address_is_not_affected(client):
    UserFactory(username="mario")
    lucia = UserFactory(username="lucia")
    for _ in range(5):
        _fail(client, "mario")
    response = _log_in(client, "lucia", PASSWORD, ip=ELSEWHERE)
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(lucia.pk)


def test_an_account_is_locked_whatever_address_the_failures_come_from(client):
    UserFactory(username="mario")
    for n in range(5):
        _fail(client, "mario", ip=f"192.0.2.{n + 1}")
    assert _log_in(client, "mario", PASSWORD, ip="192.0.2.99").status_code == 429


def test_an_address_is_locked_across_usernames_even_unknown_ones(client):
    lucia = UserFactory(username="lucia")
    for name in ("ana", "bruno", "carla", "nadie", "admin"):
        _fail(client, name)
    # Every account from that address is refused, the right password too…
    assert _log_in(client, "lucia", PASSWORD).status_code == 429
    # …and the same account from elsewhere is not.
    response = _log_in(client, "lucia", PASSWORD, ip=ELSEWHERE)
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(lucia.pk)


def test_an_unknown_username_is_locked_exactly_like_a_real_one(client):
    UserFactory(username="mario")
    for _ in range(5):
        real = _fail(client, "mario")
    for _ in range(5):
        unknown = _fail(client, "nadie", ip=ELSEWHERE)
    assert real.status_code == unknown.status_code == 429
    strip = re.compile(r"a partir de las \d\d:\d\d")
    assert strip.sub("", _csrf_free(real.text)) == strip.sub("", _csrf_free(unknown.text))


def test_the_lock_ends_after_the_cool_off(client):
    mario = UserFactory(username="mario")
    for _ in range(5):
        _fail(client, "mario")
    _let_time_pass(timedelta(minutes=14, seconds=59))
    assert _log_in(client, "mario", PASSWORD).status_code == 429
    _let_time_pass(timedelta(seconds=2))
    response = _log_in(client, "mario", PASSWORD)
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(mario.pk)


def test_attempts_while_locked_do_not_push_the_end_of_the_lock_back(client):
    UserFactory(username="mario")
    for _ in range(5):
        _fail(client, "mario")
    _let_time_pass(timedelta(minutes=10))
    response = _fail(client, "mario")
    assert response.status_code == 429
    # The lock's end read from the record, not from the clock: a minute may
    # turn between the last failure and this line on a slow machine.
    assert f"Podrás volver a intentarlo a partir de las {_lock_ends()}" in _text(response)
    # The refused attempt was not counted, so the lock still ends 5 minutes on.
    assert AccessAttempt.objects.get().failures_since_start == 5
    _let_time_pass(timedelta(minutes=5, seconds=1))
    assert _log_in(client, "mario", PASSWORD).status_code == 302


def test_failures_older_than_the_cool_off_are_forgotten(client):
    UserFactory(username="mario")
    for _ in range(4):
        _fail(client, "mario")
    _let_time_pass(timedelta(minutes=15, seconds=1))
    response = _fail(client, "mario")
    assert response.status_code == 200
    assert "Te quedan 4 intentos" in _text(response)


def test_a_successful_log_in_does_not_wipe_earlier_failures(client):
    # Wiping them would let an attacker with an account of their own reset
    # their address's count between guesses at someone else's password.
    UserFactory(username="mario")
    for _ in range(4):
        _fail(client, "mario")
    assert _log_in(client, "mario", PASSWORD).status_code == 302
    client.post(reverse("accounts:logout"))
    assert _fail(client, "mario").status_code == 429


def test_the_admin_log_in_is_throttled_and_shares_the_count(client):
    UserFactory(username="jefa", is_staff=True, is_superuser=True)
    admin_login = reverse("admin:login")
    for _ in range(4):
        response = client.post(admin_login, {"username": "jefa", "password": "no-es-esta"}, REMOTE_ADDR=HOME)
        assert response.status_code == 200
    response = client.post(admin_login, {"username": "jefa", "password": "no-es-esta"}, REMOTE_ADDR=HOME)
    assert response.status_code == 429
    assert "Demasiados intentos fallidos" in _text(response)
    assert _log_in(client, "jefa", PASSWORD, ip=ELSEWHERE).status_code == 429
    response = client.post(admin_login, {"username": "jefa", "password": PASSWORD}, REMOTE_ADDR=ELSEWHERE)
    assert response.status_code == 429


def test_an_administrator_can_lift_a_lock_in_the_admin(client):
    UserFactory(username="mario")
    for _ in range(5):
        _fail(client, "mario")
    attempt = AccessAttempt.objects.get()
    admin = Client()
    admin.force_login(UserFactory(is_staff=True, is_superuser=True))
    listing = admin.get(reverse("admin:axes_accessattempt_changelist"))
    assert listing.status_code == 200
    assert reverse("admin:axes_accessattempt_change", args=[attempt.pk]) in listing.text
    response = admin.post(
        reverse("admin:axes_accessattempt_changelist"),
        {"action": "delete_selected", "_selected_action": [attempt.pk], "post": "yes"},
    )
    assert response.status_code == 302
    assert not AccessAttempt.objects.exists()
    assert _log_in(client, "mario", PASSWORD).status_code == 302


def test_the_log_in_page_refuses_other_methods(client):
    assert client.put(reverse("accounts:login")).status_code == 405


def test_an_htmx_request_that_hits_the_lock_gets_the_same_page(client):
    # The log-in form is a plain form; a request marked as htmx (a boosted
    # link, a future partial) still gets the whole lockout page and its 429.
    UserFactory(username="mario")
    for _ in range(4):
        _fail(client, "mario")
    response = _fail(client, "mario", headers={"HX-Request": "true"})
    assert response.status_code == 429
    assert "Podrás volver a intentarlo" in _text(response)


# The client's address.


def _request(remote_addr="203.0.113.5", forwarded=None):
    headers = {"X-Forwarded-For": forwarded} if forwarded is not None else {}
    return RequestFactory().get("/", REMOTE_ADDR=remote_addr, headers=headers)


def test_the_client_address_is_the_connections_unless_proxies_are_trusted(settings):
    settings.TRUSTED_PROXY_COUNT = 0
    assert client_ip(_request(forwarded="198.51.100.7")) == "203.0.113.5"


@pytest.mark.parametrize(
    ("proxies", "forwarded", "expected"),
    [
        (1, "198.51.100.7", "198.51.100.7"),
        # Entries left of the ones our proxies wrote are the client's own say.
        (1, "10.0.0.1, 192.0.2.66 ,198.51.100.7", "198.51.100.7"),
        (2, "1.2.3.4, 198.51.100.7, 10.1.1.1", "198.51.100.7"),
        # A shorter chain than expected: its first entry.
        (3, "198.51.100.7, 10.1.1.1", "198.51.100.7"),
        # No header: a request that did not come through the proxies.
        (1, None, "203.0.113.5"),
        (1, "no-soy-una-ip", None),
        (1, "2001:db8:aa:bb:1:2:3:4", "2001:db8:aa:bb::"),
        (1, "::ffff:198.51.100.7", "198.51.100.7"),
    ],
)
def test_behind_trusted_proxies_the_client_is_read_from_x_forwarded_for(settings, proxies, forwarded, expected):
    settings.TRUSTED_PROXY_COUNT = proxies
    assert client_ip(_request(forwarded=forwarded)) == expected


def test_behind_a_proxy_each_visitor_is_locked_on_their_own(client, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    lucia = UserFactory(username="lucia")
    for name in ("ana", "bruno", "carla", "dario", "elena"):
        _fail(client, name, ip="127.0.0.1", headers={"X-Forwarded-For": f"1.1.1.1, {HOME}"})
    assert _log_in(client, "lucia", PASSWORD, ip="127.0.0.1", headers={"X-Forwarded-For": HOME}).status_code == 429
    response = _log_in(client, "lucia", PASSWORD, ip="127.0.0.1", headers={"X-Forwarded-For": ELSEWHERE})
    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(lucia.pk)


# Password-reset requests.


def _ask_reset(client, email, ip=HOME):
    return client.post(reverse("accounts:password-reset"), {"email": email}, REMOTE_ADDR=ip)


def _refusal_time_candidates(response) -> set[str]:
    retry_after = int(response.headers["Retry-After"])
    now = timezone.now()
    return {_hh_mm(now + timedelta(seconds=retry_after - delta)) for delta in (0, 1)}


def test_three_reset_requests_for_one_address_pass_and_the_fourth_is_refused(client):
    UserFactory(email="olvido@example.org")
    for n in range(3):
        response = _ask_reset(client, "olvido@example.org", ip=f"192.0.2.{n + 1}")
        assert response.status_code == 302
        assert response.url == reverse("accounts:password-reset-done")
    assert len(mail.outbox) == 3
    response = _ask_reset(client, " Olvido@Example.org ", ip="192.0.2.99")
    assert response.status_code == 429
    assert len(mail.outbox) == 3
    assert "<title>Demasiadas solicitudes · Hitos</title>" in _text(response)
    assert "Se han pedido demasiados enlaces para recuperar la contraseña" in _text(response)
    retry_after = int(response.headers["Retry-After"])
    assert 0 < retry_after <= 3600
    minutes = math.ceil(retry_after / 60)
    unit = "minuto" if minutes == 1 else "minutos"
    shown = re.search(
        r"Podrás pedir otro enlace a partir de las (\d\d:\d\d) \(dentro de (\d+) (minutos?)\)\.", _text(response)
    )
    assert shown is not None
    assert shown.group(1) in _refusal_time_candidates(response)
    assert (int(shown.group(2)), shown.group(3)) == (minutes, unit)


def test_a_reset_refusal_looks_the_same_whether_or_not_the_address_has_an_account(client, monkeypatch):
    # Both addresses fall in windows that end at the same moment, so the
    # pages can be compared whole.
    monkeypatch.setattr(django_ratelimit.core, "zlib", types.SimpleNamespace(crc32=lambda value: 0))
    UserFactory(email="olvido@example.org")
    for _ in range(3):
        _ask_reset(client, "olvido@example.org", ip=ELSEWHERE)
        _ask_reset(client, "nadie@example.org", ip="192.0.2.1")
    known = _ask_reset(client, "olvido@example.org", ip="192.0.2.50")
    unknown = _ask_reset(client, "nadie@example.org", ip="192.0.2.51")
    assert known.status_code == unknown.status_code == 429
    assert _csrf_free(known.text) == _csrf_free(unknown.text)
    assert "olvido@example.org" not in known.text


def test_ten_reset_requests_from_one_address_pass_and_the_eleventh_is_refused(client):
    for n in range(10):
        assert _ask_reset(client, f"persona{n}@example.org").status_code == 302
    response = _ask_reset(client, "otra@example.org")
    assert response.status_code == 429
    assert "Podrás pedir otro enlace a partir de las" in _text(response)
    # Another address is still served.
    assert _ask_reset(client, "otra@example.org", ip=ELSEWHERE).status_code == 302


def test_reset_requests_are_served_again_once_the_window_has_passed(client, monkeypatch):
    for n in range(3):
        _ask_reset(client, "olvido@example.org", ip=f"192.0.2.{n + 1}")
    refused = _ask_reset(client, "olvido@example.org", ip="192.0.2.9")
    assert refused.status_code == 429
    later = time.time() + int(refused.headers["Retry-After"]) + 1
    monkeypatch.setattr(django_ratelimit.core, "time", types.SimpleNamespace(time=lambda: later))
    assert _ask_reset(client, "olvido@example.org", ip="192.0.2.10").status_code == 302


def test_showing_the_reset_form_is_never_counted(client):
    for _ in range(20):
        assert client.get(reverse("accounts:password-reset"), REMOTE_ADDR=HOME).status_code == 200
    assert _ask_reset(client, "olvido@example.org").status_code == 302


def test_the_reset_page_refuses_other_methods(client):
    assert client.put(reverse("accounts:password-reset")).status_code == 405


# The test settings and the environment.


def test_the_test_settings_leave_out_only_the_axes_backend_so_client_login_works(client, settings):
    assert site_settings.AUTHENTICATION_BACKENDS == [
        "axes.backends.AxesStandaloneBackend",
        "django.contrib.auth.backends.ModelBackend",
    ]
    assert settings_test.AUTHENTICATION_BACKENDS == ["django.contrib.auth.backends.ModelBackend"]
    settings.AUTHENTICATION_BACKENDS = settings_test.AUTHENTICATION_BACKENDS
    user = UserFactory()
    assert client.login(username=user.username, password=PASSWORD) is True
    assert client.session["_auth_user_id"] == str(user.pk)


OUR_VARIABLES = {
    "SECURE_PROXY_SSL_HEADER",
    "TRUSTED_PROXY_COUNT",
    "LOGIN_FAILURE_LIMIT",
    "LOGIN_LOCKOUT_MINUTES",
    "PASSWORD_RESET_EMAIL_LIMIT",
    "PASSWORD_RESET_IP_LIMIT",
    "PASSWORD_RESET_WINDOW_MINUTES",
}


def _manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "DJANGO_SETTINGS_MODULE", *OUR_VARIABLES}}
    clean.update({"DEBUG": "1", "DJANGO_SETTINGS_MODULE": "hitos_site.settings", **env})
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=120
    )


def _settings_value(names: str, env: dict[str, str]) -> str:
    code = f"from django.conf import settings; print({names})"
    result = _manage("shell", "--no-imports", "-c", code, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_behind_a_tls_proxy_one_trusted_proxy_is_the_default():
    assert _settings_value("settings.TRUSTED_PROXY_COUNT", {}) == "0"
    assert _settings_value("settings.TRUSTED_PROXY_COUNT", {"SECURE_PROXY_SSL_HEADER": "1"}) == "1"
    both = {"SECURE_PROXY_SSL_HEADER": "1", "TRUSTED_PROXY_COUNT": "2"}
    assert _settings_value("settings.TRUSTED_PROXY_COUNT", both) == "2"


def test_the_limits_come_from_the_environment():
    env = {
        "LOGIN_FAILURE_LIMIT": "8",
        "LOGIN_LOCKOUT_MINUTES": "30",
        "PASSWORD_RESET_EMAIL_LIMIT": "2",
        "PASSWORD_RESET_IP_LIMIT": "20",
        "PASSWORD_RESET_WINDOW_MINUTES": "90",
    }
    names = (
        "settings.AXES_FAILURE_LIMIT, settings.AXES_COOLOFF_TIME,"
        " settings.PASSWORD_RESET_RATE_PER_EMAIL, settings.PASSWORD_RESET_RATE_PER_IP"
    )
    assert _settings_value(names, env) == "8 0:30:00 2/90m 20/90m"
    assert _settings_value(names, {}) == "5 0:15:00 3/60m 10/60m"


def test_a_zero_failure_limit_stops_start_up_with_one_line():
    result = _manage("check", env={"LOGIN_FAILURE_LIMIT": "0"})
    assert result.returncode == 1
    assert result.stderr.strip() == "Configuration error: LOGIN_FAILURE_LIMIT must be at least 1; got 0."
