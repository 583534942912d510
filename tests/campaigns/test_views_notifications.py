from datetime import timedelta

import pytest
from django.test import RequestFactory
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from campaigns.context_processors import notifications as notifications_context
from campaigns.models import Notification
from tests.factories import CampaignFactory, UserFactory

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def _notify(user, text="Ana ha escrito en «El faro».", url="/mensajes/1/", kind=Notification.Kind.POST, **fields):
    return Notification.objects.create(user=user, kind=kind, text=text, url=url, **fields)


def _many(user, count: int) -> list[Notification]:
    """``count`` notifications, one a minute apart, the last one the newest."""
    start = timezone.now() - timedelta(hours=1)
    created = []
    for i in range(count):
        notification = _notify(user, text=f"Aviso {i}")
        Notification.objects.filter(pk=notification.pk).update(created_at=start + timedelta(minutes=i))
        created.append(notification)
    return created


# --- the list ----------------------------------------------------------------


def test_the_list_requires_signing_in(client):
    url = reverse("campaigns:notifications")
    assert url == "/cuenta/avisos/"
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('accounts:login')}?next={url}"


def test_the_list_shows_the_users_notifications_newest_first_and_marks_unread_ones(user_client, user):
    read, unread = _notify(user, text="Leído", read_at=timezone.now()), _notify(user, text="Sin leer")
    _notify(UserFactory(), text="De otra persona")
    response = user_client.get(reverse("campaigns:notifications"))
    assert response.status_code == 200
    assert list(response.context["notifications"]) == [unread, read]
    html = response.text
    assert "<html" in html and 'id="notification-list"' in html
    assert "De otra persona" not in html
    assert html.index("Sin leer") < html.index("Leído")
    unread_item = html[html.rindex("<li", 0, html.index(f'id="notification-{unread.pk}"')) : html.index("Sin leer")]
    read_item = html[html.rindex("<li", 0, html.index(f'id="notification-{read.pk}"')) : html.index("Leído")]
    assert "Nuevo" in unread_item and "fw-semibold" in unread_item
    assert "Nuevo" not in read_item
    assert f'href="/cuenta/avisos/{unread.pk}/"' in html


def test_the_list_escapes_user_text(user_client, user):
    _notify(user, text="<script>alert(1)</script> ha escrito en «<b>x</b>».")
    html = user_client.get(reverse("campaigns:notifications")).text
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; ha escrito en «&lt;b&gt;x&lt;/b&gt;»." in html


def test_an_empty_list_says_so(user_client):
    response = user_client.get(reverse("campaigns:notifications"))
    assert "No tienes avisos." in response.text
    assert "Marcar todo como leído" not in response.text


def test_the_list_shows_thirty_a_page(user_client, user):
    created = _many(user, 35)
    first = user_client.get(reverse("campaigns:notifications"))
    assert list(first.context["notifications"]) == created[::-1][:30]
    assert 'href="?pagina=2"' in first.text
    second = user_client.get(reverse("campaigns:notifications"), {"pagina": 2})
    assert list(second.context["notifications"]) == created[4::-1]
    assert "Página 2 de 2" in second.text


def test_the_htmx_list_returns_only_the_fragment(user_client, user):
    _many(user, 31)
    response = user_client.get(reverse("campaigns:notifications"), {"pagina": 2}, headers=HTMX)
    assert response.status_code == 200
    html = response.text
    assert html.lstrip().startswith('<div id="notification-list" aria-live="polite">')
    assert "<html" not in html and '<nav class="navbar' not in html and "<h1" not in html
    assert "Aviso 0" in html and "Aviso 1<" not in html
    assert "HX-Request" in response["Vary"]


def test_a_history_restore_gets_the_whole_page(user_client, user):
    _notify(user)
    headers = {**HTMX, "HX-History-Restore-Request": "true"}
    response = user_client.get(reverse("campaigns:notifications"), headers=headers)
    assert "<html" in response.text


def test_the_list_refuses_post(user_client):
    assert user_client.post(reverse("campaigns:notifications")).status_code == 405


# --- opening one -------------------------------------------------------------


def test_opening_a_notification_marks_it_read_and_goes_to_its_page(user_client, user):
    notification = _notify(user, url="/mensajes/7/")
    response = user_client.get(reverse("campaigns:notification-open", args=[notification.pk]))
    assert response.status_code == 302
    assert response["Location"] == "/mensajes/7/"
    notification.refresh_from_db()
    assert notification.read_at is not None


def test_opening_a_read_notification_keeps_the_first_read_time(user_client, user):
    read_at = timezone.now() - timedelta(days=1)
    notification = _notify(user, read_at=read_at)
    user_client.get(reverse("campaigns:notification-open", args=[notification.pk]))
    notification.refresh_from_db()
    assert notification.read_at == read_at


def test_another_users_notification_is_404_and_stays_unread(user_client):
    notification = _notify(UserFactory())
    response = user_client.get(reverse("campaigns:notification-open", args=[notification.pk]))
    assert response.status_code == 404
    notification.refresh_from_db()
    assert notification.read_at is None


@pytest.mark.parametrize(
    "url", ["https://malo.example/", "//malo.example/", "/\\malo.example", "javascript:alert(1)", ""]
)
def test_a_notification_never_sends_the_user_to_another_site(user_client, user, url):
    notification = _notify(user, url=url)
    response = user_client.get(reverse("campaigns:notification-open", args=[notification.pk]))
    assert response.status_code == 302
    assert response["Location"] == reverse("campaigns:notifications")


def test_opening_requires_signing_in(client, user):
    notification = _notify(user)
    response = client.get(reverse("campaigns:notification-open", args=[notification.pk]))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("accounts:login"))
    notification.refresh_from_db()
    assert notification.read_at is None


def test_opening_refuses_post(user_client, user):
    notification = _notify(user)
    assert user_client.post(reverse("campaigns:notification-open", args=[notification.pk])).status_code == 405


# --- marking everything read -------------------------------------------------


def test_read_all_marks_only_the_users_notifications_and_redirects(user_client, user):
    mine = _many(user, 3)
    theirs = _notify(UserFactory())
    response = user_client.post(reverse("campaigns:notifications-read-all"), follow=True)
    assert response.redirect_chain == [(reverse("campaigns:notifications"), 302)]
    assert "Todos los avisos están marcados como leídos." in response.text
    assert not Notification.objects.filter(pk__in=[n.pk for n in mine], read_at__isnull=True).exists()
    theirs.refresh_from_db()
    assert theirs.read_at is None


def test_read_all_with_htmx_returns_the_refreshed_fragment(user_client, user):
    _many(user, 2)
    response = user_client.post(reverse("campaigns:notifications-read-all"), headers=HTMX)
    assert response.status_code == 200
    assert "<html" not in response.text
    assert 'id="notification-list"' in response.text
    assert "Nuevo" not in response.text


def test_read_all_refuses_get_and_anonymous_users(client, user_client):
    assert user_client.get(reverse("campaigns:notifications-read-all")).status_code == 405
    response = client.post(reverse("campaigns:notifications-read-all"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("accounts:login"))


# --- the unread count ----------------------------------------------------------


def test_the_context_processor_counts_unread_notifications_in_one_query(user, django_assert_num_queries):
    _many(user, 3)
    _notify(user, read_at=timezone.now())
    _notify(UserFactory())
    request = RequestFactory().get("/")
    request.user = user
    with django_assert_num_queries(1):
        assert notifications_context(request) == {"unread_notifications": 3}


def test_the_context_processor_gives_anonymous_visitors_nothing(django_assert_num_queries):
    from django.contrib.auth.models import AnonymousUser

    request = RequestFactory().get("/")
    request.user = AnonymousUser()
    with django_assert_num_queries(0):
        assert notifications_context(request) == {}


def test_every_page_gets_the_unread_count(user_client, user):
    _many(user, 2)
    response = user_client.get(reverse("accounts:profile"))
    assert response.context["unread_notifications"] == 2


# --- the e-mail preference ---------------------------------------------------


def test_the_profile_offers_the_e_mail_preference_in_spanish(user_client):
    html = user_client.get(reverse("accounts:profile")).text
    assert "Avisos por correo" in html
    for label in ("En el momento", "Un resumen diario", "Solo cuando escribe la dirección", "Nunca"):
        assert label in html


def test_the_profile_saves_the_e_mail_preference(user_client, user):
    data = {"display_name": "Lucía", "language": "es", "email_notifications": User.EmailChoice.GM_ONLY}
    response = user_client.post(reverse("accounts:profile"), data)
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.email_notifications == User.EmailChoice.GM_ONLY


def test_the_profile_refuses_an_unknown_e_mail_preference(user_client, user):
    response = user_client.post(reverse("accounts:profile"), {"display_name": "X", "email_notifications": "always"})
    assert response.status_code == 200
    assert "Escoja una opción válida" in response.text
    user.refresh_from_db()
    assert user.email_notifications == User.EmailChoice.DIGEST


def test_a_notification_about_a_campaign_shows_its_kind(user_client, user):
    _notify(user, campaign=CampaignFactory(), kind=Notification.Kind.APPLICATION, text="Carla quiere unirse.")
    html = user_client.get(reverse("campaigns:notifications")).text
    assert "Solicitud ·" in html
