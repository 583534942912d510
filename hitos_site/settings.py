"""Settings for the Hitos site, read from the environment.

Every variable is documented in the README. Development needs none of them:
``make run`` sets ``DEBUG=1`` and the rest falls back to safe local defaults
(a SQLite file and generated keys under the untracked ``var/`` folder).
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP
from django.utils.translation import gettext_lazy as _

from hitos_site.env import env_bool, env_int, env_list, env_secret, env_str
from hitos_site.release import fingerprint

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("HITOS_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("DEBUG", False)

SECRET_KEY = env_secret(
    "SECRET_KEY",
    dev_file=VAR_DIR / "secret_key.txt" if DEBUG else None,
    generate=lambda: secrets.token_urlsafe(50),
)

# The roll log's signing and seed-encryption keys (rolls/keys.py).
from rolls.keys import load_keys  # noqa: E402

ROLLOG_KEYS = load_keys(dev_dir=VAR_DIR if DEBUG else None)

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "crispy_forms",
    "crispy_bootstrap5",
    "axes",
    "django_tasks_db",
    "accounts",
    "campaigns",
    "sheets",
    "rolls",
    "table",
    "systems.hitos",
    "systems.vaesen",
    "systems.aventuras",
    "demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Compresses HTML and JSON (with Django's length randomisation against
    # BREACH); static files come compressed from WhiteNoise (gzip and brotli).
    "django.middleware.gzip.GZipMiddleware",
    # ETag on every GET/HEAD answer and 304 for a conditional request that
    # matches it or the answer's Last-Modified (feeds, permalinks, pages).
    "django.middleware.http.ConditionalGetMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "accounts.middleware.UserLanguageMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # A campaign whose roll log head does not name its last entry: the page that explains it (503), never a 500.
    "rolls.middleware.LogHeadMismatchMiddleware",
    # Last, as django-axes asks: it turns a locked-out log-in into our lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "hitos_site.urls"
WSGI_APPLICATION = "hitos_site.wsgi.application"
ASGI_APPLICATION = "hitos_site.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "campaigns.context_processors.notifications",
            ],
        },
    },
]

# Database: DATABASE_URL, or a SQLite file under var/ so a fresh checkout runs.
_default_db = f"sqlite:///{VAR_DIR / 'hitos.sqlite3'}"
try:
    DATABASES = {
        "default": dj_database_url.parse(
            env_str("DATABASE_URL", _default_db),
            conn_max_age=env_int("CONN_MAX_AGE", 60, minimum=0),
            conn_health_checks=True,
        )
    }
except ValueError as exc:
    raise ImproperlyConfigured(f"DATABASE_URL is not a database URL this site understands: {exc}") from None
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    # Writers take SQLite's lock when their transaction starts, so two rolls
    # appended at once under runserver wait for each other instead of failing.
    DATABASES["default"].setdefault("OPTIONS", {})["transaction_mode"] = "IMMEDIATE"

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "accounts.User"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# django-axes' backend comes first so that a locked-out account or address
# cannot log in even with the right password; it authenticates no one itself.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

# Cache: Redis when REDIS_URL is set, else per-process memory. The shared
# cache's keys carry the release (RELEASE, else a hash of the code: see
# hitos_site/release.py), so a new release never serves HTML the old one cached.
REDIS_URL = env_str("REDIS_URL", "")
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": env_str("RELEASE", "") or fingerprint(BASE_DIR),
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Background tasks (Django's tasks framework): e-mails, the notification
# fan-out of a post and the daily jobs are rows in the database, committed
# with the change that asked for them, and `manage.py db_worker` runs them
# (docs/deploy.md). Any number of workers may run: each claims a task with a
# row lock (SKIP LOCKED on PostgreSQL).
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}

# E-mail: printed on the console unless an SMTP host is configured.
EMAIL_HOST = env_str("EMAIL_HOST", "")
if EMAIL_HOST:
    _mailer = {
        "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "OPTIONS": {
            "host": EMAIL_HOST,
            "port": env_int("EMAIL_PORT", 587, minimum=1),
            "username": env_str("EMAIL_HOST_USER", ""),
            "password": env_str("EMAIL_HOST_PASSWORD", ""),
            "use_tls": env_bool("EMAIL_USE_TLS", True),
            "timeout": 10,
        },
    }
else:
    _mailer = {"BACKEND": "django.core.mail.backends.console.EmailBackend"}
MAILERS = {"default": _mailer}
del EMAIL_HOST
# The site's public address, for links in e-mails and feeds.
SITE_URL = env_str("SITE_URL", "http://127.0.0.1:8000").rstrip("/")
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Hitos <noreply@localhost>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL

# Internationalisation: Spanish first, English as the second language.
LANGUAGE_CODE = "es"
LANGUAGES = [("es", _("Español")), ("en", _("English"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env_str("TIME_ZONE", "Europe/Madrid")
USE_I18N = True
USE_TZ = True

# Static files, served by WhiteNoise from one process.
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

# In development files come straight from static/ (no collectstatic needed).
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG

CRISPY_ALLOWED_TEMPLATE_PACKS = "bootstrap5"
CRISPY_TEMPLATE_PACK = "bootstrap5"

# Content Security Policy: only this site, no inline script or style.
# Bootstrap draws its form icons from data: URIs, hence img-src data:.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "object-src": [CSP.NONE],
}

# Security headers. HTTPS settings are on whenever DEBUG is off; a deployment
# behind a TLS-terminating proxy sets SECURE_PROXY_SSL_HEADER=1.
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
SESSION_COOKIE_HTTPONLY = True
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
LANGUAGE_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", not DEBUG)
_behind_proxy = env_bool("SECURE_PROXY_SSL_HEADER", False)
if _behind_proxy:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# The client's address, for throttling (accounts.views.client_ip): the
# connection's own address, or, behind this many reverse proxies that each
# append to X-Forwarded-For, the address the outermost of them saw. Behind a
# proxy the connection's address is the proxy's, shared by every visitor, so
# the default follows SECURE_PROXY_SSL_HEADER.
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 1 if _behind_proxy else 0, minimum=0)

# Log-in throttling (django-axes). Failed log-ins are counted per username and,
# separately, per client address, in the database so that every server
# process sees the same count. The LOGIN_FAILURE_LIMIT-th failure within
# LOGIN_LOCKOUT_MINUTES locks that username, or that address, until
# LOGIN_LOCKOUT_MINUTES after the last counted failure. Attempts made while
# locked are refused without being counted, so the time the lockout page
# announces holds. A successful log-in does not wipe the count: with it, an
# attacker with an account of their own could reset the address's count
# between guesses.
AXES_HANDLER = "axes.handlers.database.AxesDatabaseHandler"
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15, minimum=1))
AXES_RESET_ON_SUCCESS = False
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_LOCKOUT_CALLABLE = "accounts.views.login_locked_out"
AXES_CLIENT_IP_CALLABLE = "accounts.views.client_ip"
AXES_HTTP_RESPONSE_CODE = 429
# No record of every successful log-in (who, from where): we never read it.
AXES_DISABLE_ACCESS_LOG = True

# Password-reset requests (django-ratelimit, counting in the cache): at most
# PASSWORD_RESET_EMAIL_LIMIT per e-mail address and PASSWORD_RESET_IP_LIMIT
# per client address in each window of PASSWORD_RESET_WINDOW_MINUTES. With
# the per-process memory cache each server process counts on its own;
# REDIS_URL makes the count site-wide.
_reset_window = env_int("PASSWORD_RESET_WINDOW_MINUTES", 60, minimum=1)
PASSWORD_RESET_RATE_PER_EMAIL = f"{env_int('PASSWORD_RESET_EMAIL_LIMIT', 3, minimum=1)}/{_reset_window}m"
PASSWORD_RESET_RATE_PER_IP = f"{env_int('PASSWORD_RESET_IP_LIMIT', 10, minimum=1)}/{_reset_window}m"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "WARNING")},
    # Django's own loggers would otherwise print twice (theirs and ours).
    "loggers": {"django": {"handlers": ["console"], "level": "INFO", "propagate": False}},
}
