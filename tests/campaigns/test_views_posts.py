"""Post pages: permalink, editing and its history, hiding, reporting."""

from __future__ import annotations

import pytest
from django.urls import reverse

from campaigns import services
from campaigns.models import ModerationAction, ModerationLog, Notification, Post, PostReport, PostRevision, Scene
from campaigns.permissions import campaign_access
from tests.conftest import client_for
from tests.factories import write

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


def _url(name, post):
    return reverse(f"campaigns:{name}", args=[post.pk])


# --- permalink --------------------------------------------------------------------


def test_permalink_of_post_45_of_60_opens_page_3_at_the_post(table):
    posts = [table.post] + [write(table.scene, table.other, f"Mensaje {i}.") for i in range(59)]
    target = posts[44]
    response = client_for(table.reader).get(_url("post-permalink", target))
    assert response.status_code == 302
    assert response.url == f"{table.scene.get_absolute_url()}?pagina=3#mensaje-{target.pk}"
    page = client_for(table.reader).get(response.url)
    assert f'id="mensaje-{target.pk}"' in page.text


def test_permalink_counts_only_the_posts_the_viewer_can_see(table):
    # 40 posts, 25 of them whispers to the GM: Bruno sees 15 + his own post.
    for i in range(40):
        write(table.scene, table.player, f"Mensaje {i}.", recipients=Post.Recipients.GM if i % 8 < 5 else "all")
    mine = write(table.scene, table.other, "El mío.")
    assert client_for(table.other).get(_url("post-permalink", mine)).url.endswith(f"?pagina=1#mensaje-{mine.pk}")
    assert client_for(table.gm).get(_url("post-permalink", mine)).url.endswith(f"?pagina=3#mensaje-{mine.pk}")


def test_permalink_of_a_whisper_is_a_404_for_those_it_is_not_for(table, client):
    whisper = write(table.scene, table.player, "Solo DJ.", recipients=Post.Recipients.GM)
    assert client_for(table.other).get(_url("post-permalink", whisper)).status_code == 404
    assert client.get(_url("post-permalink", whisper)).status_code == 404
    assert client_for(table.cogm).get(_url("post-permalink", whisper)).status_code == 302


def test_permalink_of_a_private_campaign_is_a_404_for_outsiders_and_refuses_post(private_table):
    assert client_for(private_table.outsider).get(_url("post-permalink", private_table.post)).status_code == 404
    assert client_for(private_table.player).post(_url("post-permalink", private_table.post)).status_code == 405


# --- editing and history ----------------------------------------------------------------


def test_author_edits_their_post_and_a_revision_keeps_the_old_text(table):
    response = client_for(table.player).post(
        _url("post-edit", table.post), {"body": "Abro la puerta **despacio**.", "note": "", "reason": "Matiz"}
    )
    table.post.refresh_from_db()
    assert response.status_code == 302
    assert response.url == _url("post-permalink", table.post)
    assert table.post.body_html == "<p>Abro la puerta <strong>despacio</strong>.</p>\n"
    assert (table.post.edited_by, table.post.edited_at is not None) == (table.player, True)
    revision = PostRevision.objects.get(post=table.post)
    assert (revision.editor, revision.body, revision.reason) == (table.player, "Abro la puerta del sótano.", "Matiz")
    # An author's own edit is not a GM action.
    assert not ModerationLog.objects.filter(action=ModerationAction.POST_EDITED).exists()


def test_edit_form_starts_with_the_current_text(table):
    response = client_for(table.player).get(_url("post-edit", table.post))
    assert response.status_code == 200
    assert response.context["form"].initial == {"body": "Abro la puerta del sótano.", "note": ""}


def test_gm_edit_of_a_players_post_is_logged_and_the_player_told(table):
    client_for(table.gm).post(_url("post-edit", table.post), {"body": "Abro la puerta.", "note": "", "reason": "Tono"})
    entry = ModerationLog.objects.get(action=ModerationAction.POST_EDITED)
    assert (entry.actor, entry.target_user, entry.post, entry.reason) == (table.gm, table.player, table.post, "Tono")
    assert Notification.objects.filter(user=table.player, kind=Notification.Kind.MODERATION, post=table.post).exists()


def test_another_player_cannot_edit_and_an_outsider_gets_404(table, private_table):
    assert client_for(table.other).post(_url("post-edit", table.post), {"body": "X"}).status_code == 403
    assert client_for(private_table.outsider).get(_url("post-edit", private_table.post)).status_code == 404
    assert client_for(table.player).put(_url("post-edit", table.post)).status_code == 405
    table.post.refresh_from_db()
    assert table.post.body == "Abro la puerta del sótano."


def test_edit_refuses_a_body_over_50000_characters_and_keeps_it(table):
    response = client_for(table.player).post(_url("post-edit", table.post), {"body": "b" * 50001, "note": ""})
    assert response.status_code == 200
    assert response.context["form"].errors["body"] == [
        "El mensaje es demasiado largo: como mucho 50000 caracteres (tiene 50001)."
    ]
    assert "b" * 50001 in response.text


def test_history_shows_every_version_to_author_and_gm_only(table):
    access = campaign_access(table.player, table.campaign)
    services.post_edit(access=access, post=table.post, body="Segunda versión.", note="", reason="")
    services.post_edit(
        access=campaign_access(table.gm, table.campaign), post=table.post, body="Tercera.", note="", reason="Spoiler"
    )
    for user in (table.player, table.gm, table.cogm):
        response = client_for(user).get(_url("post-history", table.post))
        assert response.status_code == 200
        assert [r.body for r in response.context["revisions"]] == ["Segunda versión.", "Abro la puerta del sótano."]
        assert "Tercera." in response.text
        assert "Spoiler" in response.text
    assert client_for(table.other).get(_url("post-history", table.post)).status_code == 403
    assert client_for(table.reader).get(_url("post-history", table.post)).status_code == 403


def test_history_of_a_private_campaign_is_a_404_for_outsiders_and_refuses_post(private_table):
    assert client_for(private_table.outsider).get(_url("post-history", private_table.post)).status_code == 404
    assert client_for(private_table.player).post(_url("post-history", private_table.post)).status_code == 405


def test_players_cannot_edit_in_an_archived_scene(table):
    Scene.objects.filter(pk=table.scene.pk).update(status=Scene.Status.ARCHIVED)
    assert client_for(table.player).get(_url("post-edit", table.post)).status_code == 403
    assert client_for(table.gm).get(_url("post-edit", table.post)).status_code == 200


# --- hiding -------------------------------------------------------------------------


def test_gm_hides_a_post_with_a_reason_others_see_the_placeholder(table):
    response = client_for(table.gm).post(_url("post-hide", table.post), {"reason": "Spoiler del módulo"})
    assert response.status_code == 302
    assert response.url == _url("post-permalink", table.post)
    table.post.refresh_from_db()
    assert (table.post.hidden, table.post.hidden_reason, table.post.hidden_by) == (True, "Spoiler del módulo", table.gm)
    entry = ModerationLog.objects.get(action=ModerationAction.POST_HIDDEN)
    assert (entry.target_user, entry.reason) == (table.player, "Spoiler del módulo")
    scene_url = table.scene.get_absolute_url()
    for user, sees_text in ((table.other, False), (table.reader, False), (table.player, True), (table.gm, True)):
        page = client_for(user).get(scene_url).text
        assert "Mensaje oculto por la dirección. Motivo: Spoiler del módulo" in page
        assert ("Abro la puerta del sótano." in page) is sees_text
    assert "Abro la puerta del sótano." not in client_for(None).get(scene_url).text


def test_hiding_resolves_the_posts_open_reports(table):
    client_for(table.gm).post(_url("post-hide", table.post), {"reason": "Denunciado"})
    table.report.refresh_from_db()
    assert (table.report.resolved_by, table.report.resolved_at is not None) == (table.gm, True)


def test_hiding_without_a_reason_is_refused_with_a_message(table):
    response = client_for(table.gm).post(_url("post-hide", table.post), {"reason": "  "}, follow=True)
    table.post.refresh_from_db()
    assert table.post.hidden is False
    assert "Para ocultar un mensaje hay que explicar el motivo." in response.text


def test_hiding_again_shows_the_post_and_logs_it(table):
    services.post_hide(post=table.post, actor=table.gm, reason="Spoiler")
    client_for(table.cogm).post(_url("post-hide", table.post))
    table.post.refresh_from_db()
    assert table.post.hidden is False
    assert ModerationLog.objects.filter(action=ModerationAction.POST_SHOWN, actor=table.cogm).count() == 1


def test_hiding_with_htmx_redirects_the_client(table):
    response = client_for(table.gm).post(_url("post-hide", table.post), {"reason": "Spoiler"}, headers=HX)
    assert response.status_code == 200
    assert response.headers["HX-Redirect"] == _url("post-permalink", table.post)
    assert response.text == ""


def test_players_cannot_hide_and_outsiders_get_404(table, private_table):
    assert client_for(table.other).post(_url("post-hide", table.post), {"reason": "x"}).status_code == 403
    assert (
        client_for(private_table.outsider).post(_url("post-hide", private_table.post), {"reason": "x"}).status_code
        == 404
    )
    assert client_for(table.gm).get(_url("post-hide", table.post)).status_code == 405
    table.post.refresh_from_db()
    assert table.post.hidden is False


# --- reporting ------------------------------------------------------------------------


def test_member_reports_a_post_and_the_dashboard_lists_it(table):
    response = client_for(table.reader).post(_url("post-report", table.post), {"reason": "  Lenguaje   ofensivo "})
    assert response.status_code == 302
    report = PostReport.objects.get(reporter=table.reader)
    assert (report.post, report.reason) == (table.post, "Lenguaje ofensivo")
    dashboard = client_for(table.gm).get(reverse("campaigns:dashboard", args=[table.campaign.slug]))
    assert list(dashboard.context["reports"]) == [report, table.report]
    assert "Lenguaje ofensivo" in dashboard.text


def test_report_form_renders_for_a_member(table):
    response = client_for(table.other).get(_url("post-report", table.post))
    assert response.status_code == 200
    assert "Denunciar un mensaje" in response.text


def test_report_needs_a_reason(table):
    response = client_for(table.other).post(_url("post-report", table.post), {"reason": ""})
    assert response.status_code == 200
    assert response.context["form"].errors["reason"] == ["Este campo es obligatorio."]


def test_author_and_gm_cannot_report_and_outsiders_get_404(table, private_table):
    assert client_for(table.player).get(_url("post-report", table.post)).status_code == 403
    assert client_for(table.gm).get(_url("post-report", table.post)).status_code == 403
    assert client_for(private_table.outsider).get(_url("post-report", private_table.post)).status_code == 404
    assert client_for(table.other).put(_url("post-report", table.post)).status_code == 405
