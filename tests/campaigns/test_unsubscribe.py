"""The one-click unsubscribe page (campaigns/unsubscribe.py): the signed token
is the only credential, a GET never changes anything, a POST (a mail client's
one-click one, the page's form, or htmx) turns the e-mails off."""

import pytest
from django.core import signing
from django.test import Client
from django.urls import reverse

from accounts.models import User
from campaigns import notify
from campaigns.models import Notification
from tests.factories import CampaignFactory, UserFactory

pytestmark = pytest.mark.django_db

Choice = User.EmailChoice
ONE_CLICK = "List-Unsubscribe=One-Click"
FORM = "application/x-www-form-urlencoded"


@pytest.fixture
def lucia():
    return UserFactory(display_name="Lucía", email_notifications=Choice.IMMEDIATE)


def _url(user) -> str:
    return reverse("campaigns:email-unsubscribe", args=[notify.unsubscribe_token(user)])


def _robot() -> Client:
    """A mail client, or anyone holding the link: no session, and CSRF checked as in production."""
    return Client(enforce_csrf_checks=True)


def _choice(user) -> str:
    return User.objects.get(pk=user.pk).email_notifications


# --- GET and HEAD: look, do not touch --------------------------------------------------------


def test_the_page_explains_and_offers_the_button_without_changing_anything(lucia, django_assert_max_num_queries):
    url = _url(lucia)
    with django_assert_max_num_queries(1):
        response = _robot().get(url)
    assert response.status_code == 200
    assert [t.name for t in response.templates][0] == "campaigns/unsubscribe.html"
    html = response.text
    assert "<html" in html
    assert "¿Quieres que la cuenta de Lucía deje de recibir avisos por correo?" in html
    assert f'<form method="post" action="{url}"' in html
    assert "Dejar de recibir avisos por correo</button>" in html
    assert lucia.email not in html
    assert response["X-Robots-Tag"] == "noindex"
    assert "no-store" in response["Cache-Control"]
    assert _choice(lucia) == Choice.IMMEDIATE


def test_the_htmx_request_gets_the_panel_alone(lucia):
    response = _robot().get(_url(lucia), headers={"HX-Request": "true"})
    assert response.status_code == 200
    html = response.text
    assert html.lstrip().startswith('<div id="unsubscribe-panel" aria-live="polite">')
    assert "<html" not in html and "<nav" not in html
    assert "Dejar de recibir avisos por correo</button>" in html
    assert "HX-Request" in response["Vary"]
    assert _choice(lucia) == Choice.IMMEDIATE


def test_a_head_request_answers_without_a_body_and_changes_nothing(lucia):
    response = _robot().head(_url(lucia))
    assert response.status_code == 200
    assert response.content == b""
    assert _choice(lucia) == Choice.IMMEDIATE


def test_the_page_says_when_the_e_mails_are_already_off(lucia):
    lucia.email_notifications = Choice.NEVER
    lucia.save()
    html = _robot().get(_url(lucia)).text
    assert "Hecho: la cuenta de Lucía ya no recibe avisos por correo." in html
    assert "<button" not in html.split('id="unsubscribe-panel"')[1].split("</main>")[0]


# --- POST: turn the e-mails off, without logging in --------------------------------------


def test_the_one_click_post_of_a_mail_client_turns_the_e_mails_off_at_once(lucia, django_assert_max_num_queries):
    client = _robot()
    with django_assert_max_num_queries(2):
        response = client.post(_url(lucia), ONE_CLICK, content_type=FORM)
    # RFC 8058: answered in place, no redirect for the mail client to follow.
    assert response.status_code == 200
    assert "Hecho: la cuenta de Lucía ya no recibe avisos por correo." in response.text
    assert _choice(lucia) == Choice.NEVER
    # No session was made for it.
    assert "sessionid" not in response.cookies


def test_the_page_form_posts_and_redirects_back_to_the_page(lucia):
    client = _robot()
    url = _url(lucia)
    response = client.post(url)
    assert response.status_code == 302
    assert response.url == url
    assert _choice(lucia) == Choice.NEVER
    assert "ya no recibe avisos por correo" in client.get(url).text


def test_the_htmx_post_swaps_the_panel(lucia):
    response = _robot().post(_url(lucia), headers={"HX-Request": "true"})
    assert response.status_code == 200
    html = response.text
    assert html.lstrip().startswith('<div id="unsubscribe-panel"')
    assert "<html" not in html
    assert "Hecho: la cuenta de Lucía ya no recibe avisos por correo." in html
    assert _choice(lucia) == Choice.NEVER


@pytest.mark.parametrize("choice", [Choice.DIGEST, Choice.GM_ONLY, Choice.NEVER])
def test_every_preference_ends_as_never_and_a_second_post_changes_nothing(choice):
    user = UserFactory(email_notifications=choice)
    url = _url(user)
    for _ in range(2):
        assert _robot().post(url, ONE_CLICK, content_type=FORM).status_code == 200
        assert _choice(user) == Choice.NEVER


def test_it_turns_off_the_token_owner_even_when_someone_else_is_logged_in(lucia):
    other = UserFactory(email_notifications=Choice.IMMEDIATE)
    client = Client(enforce_csrf_checks=True)
    client.force_login(other)
    assert client.post(_url(lucia), ONE_CLICK, content_type=FORM).status_code == 200
    assert (_choice(lucia), _choice(other)) == (Choice.NEVER, Choice.IMMEDIATE)


def test_e_mails_already_queued_are_not_sent_after_unsubscribing(lucia, mailoutbox):
    campaign = CampaignFactory()
    queued = Notification.objects.create(
        user=lucia, campaign=campaign, kind=Notification.Kind.POST, text="Algo pasó", url="/"
    )
    _robot().post(_url(lucia), ONE_CLICK, content_type=FORM)
    assert notify.send_notification_emails.call([queued.pk]) == 0
    assert mailoutbox == []
    queued.refresh_from_db()
    assert queued.emailed_at is None


@pytest.mark.parametrize("method", ["put", "patch", "delete"])
def test_other_methods_are_refused(lucia, method):
    assert getattr(_robot(), method)(_url(lucia)).status_code == 405
    assert _choice(lucia) == Choice.IMMEDIATE


# --- links that do not work ----------------------------------------------------------------


def _tampered(token: str) -> str:
    last = token[-1]
    return token[:-1] + ("A" if last != "A" else "B")


@pytest.mark.parametrize(
    "forge",
    [
        pytest.param(lambda user: _tampered(notify.unsubscribe_token(user)), id="tampered signature"),
        pytest.param(
            lambda user: signing.Signer(salt="otra-cosa").sign_object({"user": user.pk, "off": notify.UNSUBSCRIBE_ALL}),
            id="another salt",
        ),
        pytest.param(
            lambda user: signing.Signer(salt=notify.UNSUBSCRIBE_SALT).sign_object({"user": user.pk, "off": "otra"}),
            id="signed but not an unsubscribe",
        ),
        pytest.param(
            lambda user: signing.Signer(salt=notify.UNSUBSCRIBE_SALT).sign_object([user.pk]),
            id="signed but not a mapping",
        ),
        pytest.param(lambda user: f"{user.pk}", id="just the id"),
        pytest.param(lambda user: "a:b:c", id="garbage"),
    ],
)
@pytest.mark.parametrize("method", ["get", "post"])
def test_a_forged_or_tampered_token_is_a_bad_request_with_a_clear_page(lucia, forge, method):
    url = reverse("campaigns:email-unsubscribe", args=[forge(lucia)])
    response = getattr(_robot(), method)(url)
    assert response.status_code == 400
    assert "Este enlace para darte de baja no es válido" in response.text
    assert "No hemos cambiado nada." in response.text
    assert "Lucía" not in response.text
    assert _choice(lucia) == Choice.IMMEDIATE


def test_the_token_of_a_deleted_account_is_not_found(lucia):
    url = _url(lucia)
    lucia.delete()
    response = _robot().post(url, ONE_CLICK, content_type=FORM)
    assert response.status_code == 404
    assert "Este enlace para darte de baja no es válido" in response.text


def test_the_token_names_the_user_and_nothing_private(lucia):
    token = notify.unsubscribe_token(lucia)
    assert notify.unsubscribe_user_id(token) == lucia.pk
    assert lucia.email not in token and lucia.username not in token
    assert token == notify.unsubscribe_token(lucia)  # Stable: every e-mail's link works.


def test_the_notifications_page_shows_the_e_mail_preference_after_unsubscribing(lucia):
    client = Client()
    client.force_login(lucia)
    page = reverse("campaigns:notifications")
    assert "Avisos por correo: En el momento." in client.get(page).text
    _robot().post(_url(lucia), ONE_CLICK, content_type=FORM)
    assert "Avisos por correo: Nunca." in client.get(page).text
