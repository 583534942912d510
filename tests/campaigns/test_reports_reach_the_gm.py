"""Reports reach the direction, and the member who reported hears the outcome
(issue 14: «a reported post appears only inside the Panel de dirección;
nothing in the GM's notices, the digest or the campaign page, and the
reporter is never told the outcome»).

The ``table`` fixture (tests/campaigns/conftest.py) already holds one
report, made through the service: Bruno (``other``) reported Ana's
(``player``) post «Abro la puerta del sótano.» in «El vestíbulo».
"""

from __future__ import annotations

import pytest
from django.core import mail
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.urls import reverse

from accounts.models import User
from campaigns import fragments, notify, services
from campaigns.models import Membership, ModerationLog, Notification, PostReport, Role
from tests.conftest import client_for
from tests.factories import add_member, write

pytestmark = pytest.mark.django_db

Choice = User.EmailChoice
REPORT = Notification.Kind.REPORT


@pytest.fixture(autouse=True)
def _site_url(settings):
    settings.SITE_URL = "https://hitos.example"


def reports_url(table) -> str:
    return f"/partidas/{table.campaign.slug}/direccion/#denuncias"


def report_notices(user) -> list[Notification]:
    return list(Notification.objects.filter(user=user, kind=REPORT).order_by("pk"))


def page(table, standing: str) -> str:
    response = table.client(standing).get(table.campaign.get_absolute_url())
    assert response.status_code == 200
    return response.content.decode()


# --- the direction hears of a report --------------------------------------------


def test_a_report_notifies_the_gm_and_the_co_gm_and_nobody_else(table):
    told = set(Notification.objects.filter(kind=REPORT).values_list("user__username", flat=True))
    assert told == {table.gm.username, table.cogm.username}


def test_the_notice_names_reporter_post_author_scene_campaign_and_reason_and_links_to_the_reports(table):
    (notice,) = report_notices(table.gm)
    assert notice.text == (
        f"Bruno ha denunciado el mensaje #{table.post.pk} de Ana en «El vestíbulo» (La mansión). "
        "Motivo: Se adelanta a la escena."
    )
    assert notice.url == reports_url(table)
    assert notice.campaign == table.campaign
    assert notice.post == table.post
    assert notice.get_kind_display() == "Mensaje denunciado"


def test_removed_and_departed_co_gms_and_inactive_gms_are_not_notified(table):
    removed = add_member(table.campaign, Role.COGM, status=Membership.Status.REMOVED)
    departed = add_member(table.campaign, Role.COGM, status=Membership.Status.LEFT)
    User.objects.filter(pk=table.gm.pk).update(is_active=False)
    Notification.objects.all().delete()
    services.post_report(post=table.post, reporter=table.reader, reason="Spoiler.")
    assert set(Notification.objects.filter(kind=REPORT).values_list("user", flat=True)) == {table.cogm.pk}
    assert not Notification.objects.filter(user__in=[removed, departed, table.reader]).exists()


def test_the_reporter_is_never_notified_of_their_own_report(table):
    assert report_notices(table.other) == []
    assert report_notices(table.player) == []


def test_a_refused_report_notifies_nobody(table):
    Notification.objects.all().delete()
    with pytest.raises(ValidationError, match="reason"):
        services.post_report(post=table.post, reporter=table.reader, reason="")
    assert not Notification.objects.exists()
    assert PostReport.objects.filter(reporter=table.reader).count() == 0


def test_a_report_is_e_mailed_at_once_to_a_gm_who_wants_only_the_gms_news(table, django_capture_on_commit_callbacks):
    User.objects.filter(pk=table.gm.pk).update(email_notifications=Choice.GM_ONLY)
    User.objects.filter(pk=table.cogm.pk).update(email_notifications=Choice.NEVER)
    with django_capture_on_commit_callbacks(execute=True):
        services.post_report(post=table.post, reporter=table.reader, reason="Spoiler de la escena.")
    assert [message.to for message in mail.outbox] == [[table.gm.email]]
    message = mail.outbox[0]
    assert message.subject == (
        f"[Hitos] La Lectora ha denunciado el mensaje #{table.post.pk} de Ana en «El vestíbulo» (La mansión). "
        "Motivo: Spoiler de la escena."
    )
    assert f"https://hitos.example{reports_url(table)}" in message.body
    assert report_notices(table.gm)[-1].emailed_at is not None


def test_a_report_goes_to_the_digest_of_a_gm_who_chose_it(table, django_capture_on_commit_callbacks):
    # The fixture's GM and co-GM keep the default preference: the digest.
    assert table.gm.email_notifications == Choice.DIGEST
    assert mail.outbox == []
    assert notify.digest_send(user=table.gm)
    (message,) = mail.outbox
    assert f"Bruno ha denunciado el mensaje #{table.post.pk} de Ana" in message.body
    assert f"https://hitos.example{reports_url(table)}" in message.body
    assert report_notices(table.gm)[0].emailed_at is not None


def test_the_report_view_notifies_the_direction(table):
    Notification.objects.all().delete()
    response = table.client("reader").post(
        reverse("campaigns:post-report", args=[table.post.pk]), {"reason": "Insulta a otro jugador."}
    )
    assert response.status_code == 302
    assert {n.user_id for n in Notification.objects.filter(kind=REPORT)} == {table.gm.pk, table.cogm.pk}


def test_the_notice_is_listed_escaped_on_the_gms_notification_page_and_in_its_htmx_fragment(table):
    services.post_report(post=table.post, reporter=table.reader, reason="<script>alert(1)</script>")
    client = table.client("gm")
    full = client.get(reverse("campaigns:notifications"))
    fragment = client.get(reverse("campaigns:notifications"), headers={"HX-Request": "true"})
    for response in (full, fragment):
        html = response.content.decode()
        assert "Mensaje denunciado" in html
        assert "Motivo: &lt;script&gt;alert(1)&lt;/script&gt;" in html
        assert "<script>alert(1)" not in html
    assert "<html" in full.content.decode()
    assert "<html" not in fragment.content.decode()
    assert fragment.content.decode().lstrip().startswith('<div id="notification-list"')


def test_opening_the_notice_leads_to_the_dashboards_reports(table):
    (notice,) = report_notices(table.gm)
    response = table.client("gm").get(reverse("campaigns:notification-open", args=[notice.pk]))
    assert response.status_code == 302
    assert response["Location"] == reports_url(table)
    dashboard = table.client("gm").get(response["Location"]).content.decode()
    assert 'id="denuncias"' in dashboard and "Se adelanta a la escena." in dashboard


# --- the reporter hears the outcome ---------------------------------------------


def test_a_dismissed_report_tells_the_reporter_without_the_directions_reason(table):
    services.report_resolve(report=table.report, actor=table.gm, reason="Es parte de su trasfondo.")
    (notice,) = report_notices(table.other)
    assert notice.text == (
        f"La dirección ha revisado tu denuncia del mensaje #{table.post.pk} en «El vestíbulo» (La mansión) "
        "y ha decidido no ocultarlo."
    )
    assert "trasfondo" not in notice.text
    assert notice.url == f"/mensajes/{table.post.pk}/"
    # The reason stays in the moderation log.
    assert ModerationLog.objects.get(action="report_resolved").reason == "Es parte de su trasfondo."
    # Nobody else hears of the decision: the author never learns who reported them.
    assert report_notices(table.player) == []
    assert len(report_notices(table.gm)) == len(report_notices(table.cogm)) == 1


def test_a_report_closed_after_its_post_was_hidden_tells_the_reporter_it_was_hidden(table):
    table.post.hidden = True
    table.post.save(update_fields=["hidden"])
    services.report_resolve(report=table.report, actor=table.cogm)
    (notice,) = report_notices(table.other)
    assert notice.text == (
        f"La dirección ha ocultado el mensaje #{table.post.pk} que denunciaste en «El vestíbulo» (La mansión)."
    )


def test_hiding_a_post_closes_its_reports_and_tells_each_reporter_once(table):
    services.post_report(post=table.post, reporter=table.other, reason="Otra vez.")
    services.post_report(post=table.post, reporter=table.reader, reason="Spoiler.")
    closed = services.reports_resolve_by_hiding(post=table.post, actor=table.gm)
    assert len(closed) == 3
    assert not PostReport.objects.pending_in(table.campaign).exists()
    assert set(PostReport.objects.values_list("resolved_by", flat=True)) == {table.gm.pk}
    hidden_text = (
        f"La dirección ha ocultado el mensaje #{table.post.pk} que denunciaste en «El vestíbulo» (La mansión)."
    )
    assert [n.text for n in report_notices(table.other)] == [hidden_text]
    assert [n.text for n in report_notices(table.reader)] == [hidden_text]


def test_the_hide_service_tells_the_reporter(table):
    services.post_hide(post=table.post, actor=table.gm, reason="Fuera de tono.")
    (notice,) = report_notices(table.other)
    assert notice.text.startswith("La dirección ha ocultado el mensaje")
    assert "Fuera de tono" not in notice.text
    assert not PostReport.objects.pending_in(table.campaign).exists()


@pytest.mark.parametrize("status", [Membership.Status.LEFT, Membership.Status.REMOVED])
def test_a_reporter_who_left_or_was_removed_is_not_told_even_in_a_public_campaign(table, status):
    Membership.objects.filter(campaign=table.campaign, user=table.other).update(status=status)
    services.report_resolve(report=table.report, actor=table.gm)
    assert report_notices(table.other) == []


def test_a_reporter_who_can_no_longer_see_the_scene_is_not_told(table):
    table.scene.participants.set([table.player])
    table.scene.everyone = False
    table.scene.save(update_fields=["everyone"])
    services.report_resolve(report=table.report, actor=table.gm)
    assert report_notices(table.other) == []


def test_the_resolve_view_tells_the_reporter(table):
    response = table.client("gm").post(
        reverse("campaigns:report-resolve", args=[table.campaign.slug, table.report.pk]), {"reason": ""}
    )
    assert response.status_code == 302
    assert len(report_notices(table.other)) == 1


def test_the_outcome_is_e_mailed_at_once_to_a_reporter_who_wants_only_the_gms_news(
    table, django_capture_on_commit_callbacks
):
    User.objects.filter(pk=table.other.pk).update(email_notifications=Choice.GM_ONLY)
    table.report.reporter.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        services.report_resolve(report=table.report, actor=table.gm)
    assert [message.to for message in mail.outbox] == [[table.other.email]]
    assert f"https://hitos.example/mensajes/{table.post.pk}/" in mail.outbox[0].body


# --- the campaign page's callout ------------------------------------------------


def test_the_direction_sees_the_pending_reports_on_the_campaign_page_and_nobody_else_does(table):
    dashboard = reverse("campaigns:dashboard", args=[table.campaign.slug])
    for standing in ("gm", "cogm"):
        html = page(table, standing)
        assert "1 denuncia pendiente</a>: revísala en el panel de dirección." in html, standing
        assert f'href="{dashboard}#denuncias"' in html, standing
    for standing in ("player", "other", "reader", "outsider", "anonymous"):
        html = page(table, standing)
        assert "denuncia" not in html, standing
        assert 'id="denuncias-pendientes"' not in html, standing


def test_the_access_rules_are_unchanged(private_table):
    t = private_table
    assert t.client("outsider").get(t.campaign.get_absolute_url()).status_code == 404
    assert t.client("anonymous").get(t.campaign.get_absolute_url()).status_code == 404
    dashboard = reverse("campaigns:dashboard", args=[t.campaign.slug])
    assert t.client("outsider").get(dashboard).status_code == 404
    assert t.client("player").get(dashboard).status_code == 403
    assert t.client("reader").get(dashboard).status_code == 403
    assert "1 denuncia pendiente" in t.client("gm").get(t.campaign.get_absolute_url()).content.decode()


def test_the_count_moves_at_once_when_a_report_is_made_resolved_or_its_post_hidden(table):
    assert "1 denuncia pendiente" in page(table, "gm")  # now kept in the cache
    services.post_report(post=table.post, reporter=table.reader, reason="Spoiler.")
    assert "2 denuncias pendientes</a>: revísalas en el panel de dirección." in page(table, "gm")
    assert "2 denuncias pendientes" in page(table, "cogm")
    services.report_resolve(report=table.report, actor=table.gm)
    assert "1 denuncia pendiente</a>" in page(table, "gm")
    services.post_hide(post=table.post, actor=table.gm, reason="Fuera de tono.")
    assert 'id="denuncias-pendientes"' not in page(table, "gm")


def test_a_report_of_a_post_in_another_campaign_does_not_count(table, private_table):
    services.post_report(post=private_table.post, reporter=private_table.reader, reason="Spoiler.")
    assert "1 denuncia pendiente" in page(table, "gm")
    assert (
        "2 denuncias pendientes"
        in private_table.client("gm").get(private_table.campaign.get_absolute_url()).content.decode()
    )


def test_a_report_saved_without_its_post_loaded_still_moves_the_campaigns_version(table):
    (before,) = fragments.versions(fragments.campaign_scope(table.campaign.pk))
    PostReport.objects.create(post_id=table.post.pk, reporter=table.reader, reason="Spoiler.")
    (after,) = fragments.versions(fragments.campaign_scope(table.campaign.pk))
    assert after != before


def test_the_gms_campaign_page_query_count_with_the_callout(table, django_assert_max_num_queries):
    for i in range(3):
        scene = services.scene_create(campaign=table.campaign, title=f"Escena {i}")
        services.post_report(post=write(scene, table.player, "Hola."), reporter=table.other, reason="Spoiler.")
    # Made also: the table's status around the page (issue 17).
    for standing, made in (("gm", 25), ("cogm", 26)):
        cache.clear()
        client = client_for(table.user(standing))
        # Made: the page's queries and the count of pending reports. Kept:
        # session, user, campaign and the read markers.
        with django_assert_max_num_queries(made):
            html = client.get(table.campaign.get_absolute_url()).content.decode()
        assert "4 denuncias pendientes" in html
        with django_assert_max_num_queries(4):
            assert "4 denuncias pendientes" in client.get(table.campaign.get_absolute_url()).content.decode()
