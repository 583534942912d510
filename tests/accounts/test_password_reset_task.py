"""The password-reset e-mail is made and sent by the task worker: the page
answers at once whatever the mail server does, and no one-time link is ever
stored in the task queue."""

import pytest
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import translation
from django_tasks_db.models import DBTaskResult

from tests.conftest import run_worker
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_the_request_only_enqueues_and_the_worker_mails_the_link(client, database_tasks, settings):
    settings.SITE_URL = "https://mesa.example"
    UserFactory(email="lucia@example.org")
    with CaptureQueriesContext(connection) as queries:
        response = client.post(reverse("accounts:password-reset"), {"email": "lucia@example.org"})
    assert response.status_code == 302
    assert mail.outbox == []
    # The request never looked the address up (same work whether or not it has an account).
    assert not any("accounts_user" in query["sql"] for query in queries.captured_queries)
    task = DBTaskResult.objects.get()
    assert task.args_kwargs["kwargs"]["email"] == "lucia@example.org"
    run_worker()
    assert [m.to for m in mail.outbox] == [["lucia@example.org"]]
    assert mail.outbox[0].subject == "Recupera tu contraseña de Hitos"
    link = next(line for line in mail.outbox[0].body.splitlines() if "://" in line)
    # The public site's address, not the host the request came in on.
    assert link.startswith("https://mesa.example/")
    token = link.rstrip("/").rsplit("/", 1)[-1]
    assert token not in str(task.args_kwargs)
    assert client.get(link.removeprefix("https://mesa.example")).status_code == 302  # the link works


def test_the_e_mail_speaks_the_language_of_the_request(client, database_tasks):
    UserFactory(email="ann@example.org")
    with translation.override("en"):
        client.post(reverse("accounts:password-reset"), {"email": "ann@example.org"}, HTTP_ACCEPT_LANGUAGE="en")
    run_worker()
    assert DBTaskResult.objects.get().args_kwargs["kwargs"]["language"] == "en"
    assert mail.outbox[0].subject != "Recupera tu contraseña de Hitos"


def test_an_address_without_an_account_sends_nothing(client, database_tasks):
    client.post(reverse("accounts:password-reset"), {"email": "nadie@example.org"})
    run_worker()
    assert mail.outbox == []
