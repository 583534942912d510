"""Campaign pages: create, page, edit, options, dashboard, moderation log, search, export."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.urls import reverse
from pytest_django.asserts import assertContains

from campaigns import services
from campaigns.models import Campaign, Membership, ModerationAction, ModerationLog, Post, Role
from tests.conftest import client_for
from tests.factories import add_member, write

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}
needs_postgres = pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL full-text search")


def _u(name, t, *args):
    # The rules options are the game's (HITOS), the rest the forum's.
    namespace = "hitos" if name == "campaign-options" else "campaigns"
    return reverse(f"{namespace}:{name}", args=[t.campaign.slug, *args])


# --- create, page, edit, options -------------------------------------------------


def test_signed_in_user_creates_a_campaign_with_its_offgame_scene(user_client, user):
    response = user_client.post(
        reverse("campaigns:campaign-create"),
        {
            "title": "  Niebla   en Toledo ",
            "system": "hitos",
            "visibility": "private",
            "status": "recruiting",
            "description": "**Terror** rural.",
        },
    )
    campaign = Campaign.objects.get(gm=user)
    assert response.status_code == 302
    assert response.url == campaign.get_absolute_url()
    assert (campaign.title, campaign.slug, campaign.system) == ("Niebla en Toledo", "niebla-en-toledo", "hitos")
    assert campaign.description_html == "<p><strong>Terror</strong> rural.</p>\n"
    assert [(s.title, s.is_offgame) for s in campaign.scenes.all()] == [("Fuera de juego", True)]


def test_the_campaign_form_offers_only_the_installed_game_systems(user_client, user):
    """Issue 12: the systems come from the registry (HITOS and, since issues 15
    and 16, Vaesen and Hora de Aventuras); one not installed is refused in
    Spanish and the typed title stays."""
    page = user_client.get(reverse("campaigns:campaign-create"))
    assert [value for value, _label in page.context["form"].fields["system"].choices] == [
        "hitos",
        "vaesen",
        "aventuras",
    ]
    response = user_client.post(
        reverse("campaigns:campaign-create"),
        {"title": "Niebla en Toledo", "system": "pasapalabra", "visibility": "private", "status": "recruiting"},
    )
    assert response.status_code == 200
    assert not Campaign.objects.filter(gm=user).exists()
    assert "pasapalabra" in response.context["form"].errors["system"][0]
    assertContains(response, 'value="Niebla en Toledo"')


def test_campaign_slugs_stay_unique(user_client, user):
    for _ in range(2):
        user_client.post(
            reverse("campaigns:campaign-create"),
            {"title": "Niebla", "system": "hitos", "visibility": "public", "status": "recruiting"},
        )
    assert sorted(Campaign.objects.values_list("slug", flat=True)) == ["niebla", "niebla-2"]


def test_campaign_needs_a_title(user_client):
    response = user_client.post(
        reverse("campaigns:campaign-create"),
        {"title": "   ", "system": "hitos", "visibility": "public", "status": "recruiting"},
    )
    assert response.status_code == 200
    assert response.context["form"].errors["title"] == ["Este campo es obligatorio."]


def test_campaign_create_needs_a_login_and_refuses_put(client, user_client):
    response = client.get(reverse("campaigns:campaign-create"))
    assert response.url == f"{reverse('accounts:login')}?next={reverse('campaigns:campaign-create')}"
    assert user_client.put(reverse("campaigns:campaign-create")).status_code == 405


def test_campaign_page_lists_scenes_members_and_links_for_the_gm(table):
    response = client_for(table.gm).get(table.campaign.get_absolute_url())
    assert response.status_code == 200
    assert [s.title for s in response.context["scenes"]] == ["Fuera de juego", "El vestíbulo"]
    assert [m.user for m in response.context["memberships"]] == [table.cogm, table.reader, table.player, table.other]
    assert _u("dashboard", table) in response.text
    assert "Panel de dirección" in response.text


def test_campaign_page_hides_gm_links_from_players(table):
    response = client_for(table.player).get(table.campaign.get_absolute_url())
    assert _u("dashboard", table) not in response.text
    assert response.context["can_leave"] is True


def test_private_campaign_page_is_a_404_for_outsiders_and_refuses_post(private_table):
    assert client_for(private_table.outsider).get(private_table.campaign.get_absolute_url()).status_code == 404
    assert client_for(private_table.player).post(private_table.campaign.get_absolute_url()).status_code == 405


def test_split_party_scene_is_not_listed_for_members_left_out(table):
    services.scene_create(campaign=table.campaign, title="Solo Ana", everyone=False, participants=[table.player])
    titles = lambda user: [s.title for s in client_for(user).get(table.campaign.get_absolute_url()).context["scenes"]]  # noqa: E731
    assert "Solo Ana" in titles(table.player)
    assert "Solo Ana" in titles(table.gm)
    assert "Solo Ana" not in titles(table.other)
    assert "Solo Ana" not in titles(None)


def test_new_post_counts_show_on_the_campaign_and_home_pages(table):
    write(table.scene, table.gm, "Primero.")
    write(table.scene, table.gm, "Segundo.")
    write(table.scene, table.gm, "Solo Bruno.", recipients=Post.Recipients.CHOSEN, chosen=[table.other])
    client = client_for(table.player)
    page = client.get(table.campaign.get_absolute_url())
    assert page.context["unread_total"] == 2
    assert "2 nuevos" in page.text
    home = client.get(reverse("home"))
    assert [c.unread for c in home.context["my_campaigns"]] == [2]
    client.get(table.scene.get_absolute_url())
    assert client.get(table.campaign.get_absolute_url()).context["unread_total"] == 0
    assert client_for(table.other).get(table.campaign.get_absolute_url()).context["unread_total"] == 4


def test_gm_edits_the_campaign(table):
    response = client_for(table.cogm).post(
        _u("campaign-edit", table),
        {
            "title": "La mansión maldita",
            "system": "hitos",
            "visibility": "private",
            "status": "playing",
            "description": "_Nueva_",
        },
    )
    assert response.status_code == 302
    table.campaign.refresh_from_db()
    assert (table.campaign.title, table.campaign.visibility, table.campaign.description_html) == (
        "La mansión maldita",
        "private",
        "<p><em>Nueva</em></p>\n",
    )


def test_the_game_system_is_chosen_once(table):
    """The game's sheets, rolls and state are its own: an edit keeps it."""
    table.campaign.game_state = {"kept": True}
    table.campaign.save(update_fields=["game_state"])
    form_page = client_for(table.gm).get(_u("campaign-edit", table))
    assert "El sistema de juego se elige al crear la partida." in form_page.text
    client_for(table.gm).post(
        _u("campaign-edit", table),
        {"title": "Otra", "system": "otro", "visibility": "public", "status": "playing", "description": ""},
    )
    table.campaign.refresh_from_db()
    assert (table.campaign.title, table.campaign.system, table.campaign.game_state) == ("Otra", "hitos", {"kept": True})


def test_players_cannot_edit_the_campaign_and_outsiders_get_404(table, private_table):
    assert client_for(table.player).get(_u("campaign-edit", table)).status_code == 403
    assert client_for(private_table.outsider).get(_u("campaign-edit", private_table)).status_code == 404
    assert client_for(table.gm).put(_u("campaign-edit", table)).status_code == 405


def test_gm_chooses_rules_options(table):
    response = client_for(table.gm).post(
        _u("campaign-options", table),
        {
            "strict_success": "on",
            "unprepared_penalty": 3,
            "critical_damage": "total",
            "npc_drama": "gm_pool",
            "stabilise_difficulty": 15,
            "alterado_boundary": "more_than",
            "players_mark_own_meters": "on",
            "activation_deadline_hours": 24,
        },
    )
    assert response.url == _u("campaign-options", table)
    table.campaign.refresh_from_db()
    options = table.campaign.rules_options
    assert (options["strict_success"], options["unprepared_penalty"], options["stabilise_difficulty"]) == (True, 3, 15)
    assert (options["players_mark_own_meters"], options["activation_deadline_hours"]) == (True, 24)


def test_players_cannot_change_options_and_outsiders_get_404(table, private_table):
    assert client_for(table.player).get(_u("campaign-options", table)).status_code == 403
    assert client_for(private_table.outsider).get(_u("campaign-options", private_table)).status_code == 404
    assert client_for(table.gm).delete(_u("campaign-options", table)).status_code == 405


# --- dashboard and moderation log ------------------------------------------------------------


def test_dashboard_lists_pending_applications_hidden_and_reported_posts(table):
    hidden = write(table.scene, table.other, "Algo feo.")
    services.post_hide(post=hidden, actor=table.gm, reason="Feo")
    response = client_for(table.gm).get(_u("dashboard", table))
    assert response.status_code == 200
    assert list(response.context["applications"]) == [table.application]
    assert list(response.context["hidden_posts"]) == [hidden]
    assert list(response.context["reports"]) == [table.report]
    assert list(response.context["invitations"]) == [table.invitation]
    assert "Quiero jugar." in response.text
    assert "Se adelanta a la escena." in response.text


def test_dashboard_is_for_gms_only(table, private_table):
    assert client_for(table.player).get(_u("dashboard", table)).status_code == 403
    assert client_for(private_table.outsider).get(_u("dashboard", private_table)).status_code == 404
    assert client_for(table.gm).post(_u("dashboard", table)).status_code == 405


def test_gm_resolves_a_report_without_hiding(table):
    response = client_for(table.gm).post(_u("report-resolve", table, table.report.pk), {"reason": "Nada grave"})
    assert response.url == _u("dashboard", table)
    table.report.refresh_from_db()
    assert table.report.resolved_by == table.gm
    assert list(client_for(table.gm).get(_u("dashboard", table)).context["reports"]) == []
    entry = ModerationLog.objects.get(action=ModerationAction.REPORT_RESOLVED)
    assert (entry.reason, entry.post) == ("Nada grave", table.post)


def test_moderation_log_shows_everything_to_the_gm_and_own_entries_to_a_member(table):
    services.post_hide(post=table.post, actor=table.gm, reason="Spoiler")
    services.member_set_role(membership=table.membership(table.other), actor=table.gm, role=Role.READER)
    gm_page = client_for(table.gm).get(_u("moderation-log", table))
    assert [e.action for e in gm_page.context["page_obj"]] == [
        ModerationAction.MEMBER_ROLE,
        ModerationAction.POST_HIDDEN,
    ]
    player_page = client_for(table.player).get(_u("moderation-log", table))
    assert [e.action for e in player_page.context["page_obj"]] == [ModerationAction.POST_HIDDEN]
    assert "Spoiler" in player_page.text
    assert "Lector" not in player_page.text.split("<tbody>")[1]
    reader_page = client_for(table.reader).get(_u("moderation-log", table))
    assert list(reader_page.context["page_obj"]) == []
    assert "No hay acciones registradas." in reader_page.text


def test_moderation_log_htmx_request_gets_the_entries_without_the_page_chrome(table):
    services.post_hide(post=table.post, actor=table.gm, reason="Spoiler")
    response = client_for(table.gm).get(_u("moderation-log", table), headers=HX)
    assert response.status_code == 200
    assert response.text.lstrip().startswith('<div id="log-entries"')
    assert "<html" not in response.text
    assert "Spoiler" in response.text


def test_moderation_log_pages_load_older_entries_with_htmx(table):
    for i in range(51):
        services.post_hide(post=table.post, actor=table.gm, reason=f"Motivo {i}")
    first = client_for(table.gm).get(_u("moderation-log", table))
    assert 'hx-get="?pagina=2"' in first.text
    second = client_for(table.gm).get(_u("moderation-log", table), {"pagina": 2}, headers=HX)
    assert [e.reason for e in second.context["page_obj"]] == ["Motivo 0"]


def test_moderation_log_is_for_members_only(table, private_table):
    assert client_for(table.outsider).get(_u("moderation-log", table)).status_code == 403
    assert client_for(private_table.outsider).get(_u("moderation-log", private_table)).status_code == 404
    assert client_for(table.gm).post(_u("moderation-log", table)).status_code == 405


# --- search ----------------------------------------------------------------------


def test_search_finds_posts_the_user_can_read(table):
    write(table.scene, table.gm, "La puerta cruje.", recipients=Post.Recipients.CHOSEN, chosen=[table.other])
    response = client_for(table.player).get(_u("campaign-search", table), {"q": "puerta"})
    assert response.status_code == 200
    assert [p.pk for p in response.context["results"]] == [table.post.pk]
    assert "<html" in response.text
    assert "1 resultado" in response.text
    other = client_for(table.other).get(_u("campaign-search", table), {"q": "puerta"})
    assert len(other.context["results"]) == 2


def test_search_htmx_request_gets_the_results_without_the_page_chrome(table):
    response = client_for(table.player).get(_u("campaign-search", table), {"q": "puerta"}, headers=HX)
    assert response.text.lstrip().startswith('<div id="search-results"')
    assert "<html" not in response.text
    assert "Abro la puerta del sótano." in response.text


def test_search_leaves_out_hidden_posts_except_for_their_author_and_the_gm(table):
    services.post_hide(post=table.post, actor=table.gm, reason="Spoiler")
    found = lambda user: len(client_for(user).get(_u("campaign-search", table), {"q": "puerta"}).context["results"])  # noqa: E731
    assert (found(table.other), found(table.player), found(table.gm), found(None)) == (0, 1, 1, 0)


def test_search_without_a_query_shows_only_the_form(table):
    response = client_for(table.player).get(_u("campaign-search", table))
    assert response.context["results"] is None
    assert "Nada coincide" not in response.text


def test_search_says_when_nothing_matches(table):
    response = client_for(table.player).get(_u("campaign-search", table), {"q": "dragón"})
    assert response.context["results"] == []
    assert "Nada coincide con tu búsqueda." in response.text


def test_search_of_a_private_campaign_is_a_404_for_outsiders_and_refuses_post(private_table):
    assert (
        client_for(private_table.outsider).get(_u("campaign-search", private_table), {"q": "puerta"}).status_code == 404
    )
    assert client_for(private_table.player).post(_u("campaign-search", private_table)).status_code == 405


@needs_postgres
def test_search_on_postgresql_uses_spanish_stemming(table):
    write(table.scene, table.other, "Volvemos a la casa del párroco.")
    response = client_for(table.player).get(_u("campaign-search", table), {"q": "casas"})
    assert [p.body for p in response.context["results"]] == ["Volvemos a la casa del párroco."]


@pytest.mark.skipif(connection.vendor == "postgresql", reason="the contains search of SQLite")
def test_search_on_sqlite_is_a_plain_contains_search(table):
    write(table.scene, table.other, "Volvemos a la casa del párroco.")
    assert client_for(table.player).get(_u("campaign-search", table), {"q": "casas"}).context["results"] == []
    assert len(client_for(table.player).get(_u("campaign-search", table), {"q": "CASA"}).context["results"]) == 1


# --- export ---------------------------------------------------------------------------


def _export(user, t):
    response = client_for(user).get(_u("campaign-export", t))
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="{t.campaign.slug}.json"'
    return json.loads(response.content)


def test_export_gives_the_gm_everything_and_a_player_only_what_they_can_read(table):
    whisper = write(table.scene, table.other, "Solo para la DJ.", recipients=Post.Recipients.GM)
    hidden = write(table.scene, table.other, "Texto ocultado.")
    services.post_hide(post=hidden, actor=table.gm, reason="Spoiler")
    secret = services.scene_create(
        campaign=table.campaign, title="Solo Bruno", everyone=False, participants=[table.other]
    )
    write(secret, table.gm, "Bruno ve algo.")

    gm = _export(table.gm, table)
    assert gm["format"] == "hitos-campaign-export/2"
    assert gm["campaign"]["gm"] == table.gm.username
    assert [s["title"] for s in gm["scenes"]] == ["Fuera de juego", "El vestíbulo", "Solo Bruno"]
    vestibulo = gm["scenes"][1]["posts"]
    assert [p["id"] for p in vestibulo] == [table.post.pk, whisper.pk, hidden.pk]
    assert vestibulo[2]["body"] == "Texto ocultado."
    assert vestibulo[2]["hidden_reason"] == "Spoiler"

    player = _export(table.player, table)
    assert player["exported_by"] == table.player.username
    assert [s["title"] for s in player["scenes"]] == ["Fuera de juego", "El vestíbulo"]
    assert [p["id"] for p in player["scenes"][1]["posts"]] == [table.post.pk]
    assert "Solo para la DJ." not in json.dumps(player, ensure_ascii=False)
    assert "Texto ocultado." not in json.dumps(player, ensure_ascii=False)

    author = _export(table.other, table)
    assert [p["id"] for p in author["scenes"][1]["posts"]] == [table.post.pk, whisper.pk, hidden.pk]


def test_export_is_for_members_only(table, private_table):
    assert client_for(table.outsider).get(_u("campaign-export", table)).status_code == 403
    assert client_for(private_table.outsider).get(_u("campaign-export", private_table)).status_code == 404
    assert client_for(table.player).post(_u("campaign-export", table)).status_code == 405


def test_a_removed_member_can_no_longer_export(table):
    membership = table.membership(table.player)
    services.member_remove(membership=membership, actor=table.gm, reason="Inactivo")
    assert client_for(table.player).get(_u("campaign-export", table)).status_code == 403
    assert Membership.objects.get(pk=membership.pk).status == Membership.Status.REMOVED


def test_a_reader_exports_what_members_see(table):
    reader = add_member(table.campaign, Role.READER)
    data = _export(reader, table)
    assert [p["id"] for p in data["scenes"][1]["posts"]] == [table.post.pk]


@pytest.mark.parametrize("name", ["campaign-search", "moderation-log"])
def test_history_restore_requests_get_the_whole_page_and_answers_vary_on_htmx(table, name):
    client = client_for(table.gm)
    restore = client.get(_u(name, table), {"q": "puerta"}, headers={**HX, "HX-History-Restore-Request": "true"})
    assert "<html" in restore.text
    assert restore["Vary"].split(", ").count("HX-Request") == 1
    assert "HX-Request" in client.get(_u(name, table), {"q": "puerta"})["Vary"]


def test_a_refused_campaign_edit_leaves_the_page_title_alone(table):
    response = client_for(table.gm).post(
        _u("campaign-edit", table),
        {"title": "x" * 121, "system": "hitos", "visibility": "public", "status": "recruiting"},
    )
    assert response.status_code == 200
    assert response.context["form"].errors["title"] == ["Demasiado largo: como mucho 120 caracteres (has escrito 121)."]
    assert response.context["campaign"].title == "La mansión"
    table.campaign.refresh_from_db()
    assert table.campaign.title == "La mansión"
