"""The test suite's settings: the development defaults, two changes for throttling, tasks at once.

Tests run with ``DEBUG=1`` semantics at import time (a generated secret key
under var/, no HTTPS redirects) unless the environment says otherwise;
``DATABASE_URL`` still chooses the database. pytest-django then turns DEBUG
off while tests run, as it always does.

Log-in and password-reset throttling stay on, with two exceptions that
tests/accounts/test_throttling.py undoes to test them as deployed:

- Django's test ``client.login()`` calls ``authenticate()`` without a request,
  which django-axes' backend refuses (it needs the client's address), so the
  axes backend is left out, as axes' documentation advises for tests. Axes
  still counts failed log-ins through the log-in pages and locks out there.
- django-ratelimit counts password-reset requests in the per-process cache,
  which no test empties, so counts would leak from one test to the next; it
  is switched off.
"""

import os

os.environ.setdefault("DEBUG", "1")

from hitos_site.settings import *  # noqa: E402, F403
from hitos_site.settings import AUTHENTICATION_BACKENDS as SITE_AUTHENTICATION_BACKENDS  # noqa: E402

AUTHENTICATION_BACKENDS = [backend for backend in SITE_AUTHENTICATION_BACKENDS if not backend.startswith("axes.")]
RATELIMIT_ENABLE = False
# Tasks run at once, inside the request that enqueues them (the
# ``database_tasks`` fixture of tests/conftest.py puts the site's database
# backend back for the tests of the worker itself).
TASKS = {"default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend"}}
# Axes warns when its backend is missing; here that is deliberate (see above).
SILENCED_SYSTEM_CHECKS = ["axes.W003"]
