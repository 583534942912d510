"""Scene pages: reading, the new-posts bar, writing, creating and editing scenes."""

from __future__ import annotations

import pytest
from django.urls import reverse

from campaigns.models import ModerationAction, ModerationLog, Post, Scene, SceneRead
from tests.conftest import client_for
from tests.factories import CharacterFactory, write

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


# The scene page and its posting are the table's; editing a scene is the forum's.
_TABLE = {"scene-detail", "scene-poll", "post-create", "post-roll-chance"}


def _scene_url(t, name="scene-detail", scene=None):
    namespace = "table" if name in _TABLE else "campaigns"
    return reverse(f"{namespace}:{name}", args=[t.campaign.slug, (scene or t.scene).pk])


# --- scene_detail ---------------------------------------------------------------


def test_scene_page_shows_posts_aspects_and_the_form_to_a_player(table):
    table.scene.aspects.create(phrase="Oscuridad total")
    response = client_for(table.player).get(_scene_url(table))
    assert response.status_code == 200
    assert [p.pk for p in response.context["posts"]] == [table.post.pk]
    assert "<html" in response.text
    assert "Abro la puerta del sótano." in response.text
    assert "Oscuridad total" in response.text
    assert 'id="escribir"' in response.text
    assert response.context["can_post"] is True


def test_scene_page_htmx_request_gets_the_post_list_without_the_page_chrome(table):
    response = client_for(table.player).get(_scene_url(table), headers=HX)
    assert response.status_code == 200
    assert response.text.lstrip().startswith('<div id="post-list"')
    assert "<html" not in response.text
    assert "Abro la puerta del sótano." in response.text
    assert 'id="escribir"' not in response.text


def test_scene_page_history_restore_request_gets_the_full_page(table):
    response = client_for(table.player).get(_scene_url(table), headers={**HX, "HX-History-Restore-Request": "true"})
    assert "<html" in response.text
    assert "HX-Request" in response["Vary"]


def test_scene_page_of_a_private_campaign_is_a_404_for_an_outsider(private_table):
    assert client_for(private_table.outsider).get(_scene_url(private_table)).status_code == 404


def test_split_party_scene_is_a_404_for_a_member_not_chosen(table):
    from campaigns import services

    scene = services.scene_create(
        campaign=table.campaign, title="Solo Ana", everyone=False, participants=[table.player]
    )
    assert client_for(table.other).get(_scene_url(table, scene=scene)).status_code == 404
    assert client_for(table.player).get(_scene_url(table, scene=scene)).status_code == 200


def test_scene_page_refuses_post(table):
    assert client_for(table.player).post(_scene_url(table)).status_code == 405


def test_reader_sees_the_scene_but_no_form(table):
    response = client_for(table.reader).get(_scene_url(table))
    assert response.context["form"] is None
    assert "Como lector puedes leer, pero no escribir." in response.text


def test_whisper_to_the_gm_is_invisible_to_another_player_and_to_anonymous(table, client):
    whisper = write(table.scene, table.player, "Traiciono al grupo.", recipients=Post.Recipients.GM)
    for c in (client_for(table.other), client, client_for(table.reader)):
        response = c.get(_scene_url(table))
        assert whisper.pk not in [p.pk for p in response.context["posts"]]
        assert "Traiciono al grupo." not in response.text
    for c in (client_for(table.gm), client_for(table.cogm), client_for(table.player)):
        response = c.get(_scene_url(table))
        assert "Traiciono al grupo." in response.text
        assert "Solo para la dirección" in response.text


def test_whisper_to_chosen_members_names_them_and_reaches_only_them(table):
    write(table.scene, table.gm, "Oís un ruido.", recipients=Post.Recipients.CHOSEN, chosen=[table.other])
    assert "Oís un ruido." in client_for(table.other).get(_scene_url(table)).text
    assert "Oís un ruido." not in client_for(table.reader).get(_scene_url(table)).text
    text = client_for(table.other).get(_scene_url(table)).text
    assert "Para: Bruno y la dirección" in " ".join(text.split())


def test_unread_posts_are_marked_and_the_first_unread_is_linked(table):
    client = client_for(table.other)
    client.get(_scene_url(table))  # Bruno has read Ana's first post.
    newer = write(table.scene, table.player, "Bajo las escaleras.")
    write(table.scene, table.player, "Enciendo una vela.")
    response = client.get(_scene_url(table))
    assert response.context["first_unread"] == newer.pk
    assert "Primer mensaje sin leer" in response.text
    assert reverse("campaigns:post-permalink", args=[newer.pk]) in response.text
    assert response.text.count(">nuevo</span>") == 2
    # Having seen the page, nothing is unread any more.
    again = client.get(_scene_url(table))
    assert again.context["first_unread"] is None
    assert SceneRead.objects.get(user=table.other, scene=table.scene).last_post_id > newer.pk


def test_edited_post_shows_editado_and_only_author_and_gm_get_the_history_link(table):
    from campaigns import services
    from campaigns.permissions import campaign_access

    services.post_edit(
        access=campaign_access(table.player, table.campaign), post=table.post, body="Abro la puerta.", note=""
    )
    history = reverse("campaigns:post-history", args=[table.post.pk])
    for user, sees_link in ((table.player, True), (table.gm, True), (table.other, False)):
        text = client_for(user).get(_scene_url(table)).text
        assert "editado" in text
        assert (history in text) is sees_link


# --- scene_poll ---------------------------------------------------------------


def test_poll_announces_new_posts_from_others_and_links_the_first_one(table):
    first = write(table.scene, table.other, "Uno.")
    write(table.scene, table.other, "Dos.")
    response = client_for(table.player).get(_scene_url(table, "scene-poll"), {"despues": table.post.pk}, headers=HX)
    assert response.status_code == 200
    assert response.context["new_count"] == 2
    assert response.text.lstrip().startswith('<div id="new-posts-bar"')
    assert "<html" not in response.text
    assert "Hay 2 mensajes nuevos." in response.text
    assert reverse("campaigns:post-permalink", args=[first.pk]) in response.text


def test_poll_without_htmx_also_answers_the_bar_only(table):
    response = client_for(table.player).get(_scene_url(table, "scene-poll"), {"despues": table.post.pk})
    assert response.context["new_count"] == 0
    assert "<html" not in response.text
    assert 'hx-trigger="every 30s"' in response.text


def test_poll_does_not_count_whispers_to_others_or_own_posts(table):
    write(table.scene, table.gm, "Secreto.", recipients=Post.Recipients.CHOSEN, chosen=[table.other])
    write(table.scene, table.player, "Mío.")
    response = client_for(table.player).get(_scene_url(table, "scene-poll"), {"despues": table.post.pk})
    assert response.context["new_count"] == 0


def test_poll_ignores_a_garbled_marker(table):
    response = client_for(table.other).get(_scene_url(table, "scene-poll"), {"despues": "x"})
    assert response.context["new_count"] == 1


def test_poll_of_a_private_campaign_is_a_404_for_an_outsider_and_refuses_post(private_table):
    url = _scene_url(private_table, "scene-poll")
    assert client_for(private_table.outsider).get(url).status_code == 404
    assert client_for(private_table.player).post(url).status_code == 405


def test_scene_page_polls_no_more_often_than_every_30_seconds_on_its_last_page_only(table):
    for i in range(21):
        write(table.scene, table.other, f"Mensaje {i}.")
    first_page = client_for(table.player).get(_scene_url(table)).text
    last_page = client_for(table.player).get(_scene_url(table), {"pagina": 2}).text
    assert 'id="new-posts-bar"' not in first_page
    assert 'hx-trigger="every 30s"' in last_page


# --- post_create ------------------------------------------------------------------


def _post_url(t):
    return _scene_url(t, "post-create")


def test_player_posts_as_their_approved_character_with_a_note(table):
    character = CharacterFactory(campaign=table.campaign, owner=table.player, name="Inés Albarrán")
    response = client_for(table.player).post(
        _post_url(table),
        {
            "voice": f"character:{character.pk}",
            "body": "*Bajo* al sótano.",
            "note": "Tiro Reflejos luego.",
            "recipients": "all",
        },
    )
    post = Post.objects.latest("pk")
    assert response.status_code == 302
    assert response.url == reverse("campaigns:post-permalink", args=[post.pk])
    assert (post.voice, post.character, post.author) == (Post.Voice.CHARACTER, character, table.player)
    assert post.body_html == "<p><em>Bajo</em> al sótano.</p>\n"
    assert post.note_html == "<p>Tiro Reflejos luego.</p>\n"
    page = client_for(table.other).get(_scene_url(table)).text
    assert "Inés Albarrán" in page
    assert "Notas de juego" in page


def test_player_cannot_post_as_someone_elses_character_or_as_an_npc(table):
    character = CharacterFactory(campaign=table.campaign, owner=table.other, name="De Bruno")
    client = client_for(table.player)
    for voice in (f"character:{character.pk}", "npc"):
        response = client.post(
            _post_url(table), {"voice": voice, "npc_name": "Falso", "body": "Hola", "recipients": "all"}
        )
        assert response.status_code == 200
        assert "voice" in response.context["form"].errors
    assert Post.objects.count() == 1


def test_gm_posts_as_an_npc_with_a_free_name(table):
    client_for(table.gm).post(
        _post_url(table), {"voice": "npc", "npc_name": "  Don   Celso ", "body": "¿Quién va?", "recipients": "all"}
    )
    post = Post.objects.latest("pk")
    assert (post.voice, post.npc_name, post.speaker_name) == (Post.Voice.NPC, "Don Celso", "Don Celso")


def test_post_with_chosen_recipients_keeps_them(table):
    client_for(table.player).post(
        _post_url(table), {"voice": "ooc", "body": "Psst.", "recipients": "chosen", "chosen": [table.other.pk]}
    )
    post = Post.objects.latest("pk")
    assert list(post.chosen_recipients.all()) == [table.other]


def test_post_quoting_another_post_shows_the_quote(table):
    client_for(table.other).post(
        _post_url(table), {"voice": "ooc", "body": "Yo también.", "recipients": "all", "quote_of": table.post.pk}
    )
    post = Post.objects.latest("pk")
    assert post.quote_of == table.post
    page = client_for(table.reader).get(_scene_url(table)).text
    assert "Ana escribió:" in page


def test_a_post_cannot_quote_a_whisper_its_author_cannot_read(table):
    whisper = write(table.scene, table.gm, "Solo para Ana.", recipients=Post.Recipients.CHOSEN, chosen=[table.player])
    client_for(table.other).post(
        _post_url(table), {"voice": "ooc", "body": "Cito.", "recipients": "all", "quote_of": whisper.pk}
    )
    assert Post.objects.latest("pk").quote_of is None


def test_body_over_50000_characters_is_refused_in_spanish_and_the_text_stays(table):
    body = "a" * 50001
    response = client_for(table.player).post(_post_url(table), {"voice": "ooc", "body": body, "recipients": "all"})
    assert response.status_code == 200
    assert response.context["form"].errors["body"] == [
        "El mensaje es demasiado largo: como mucho 50000 caracteres (tiene 50001)."
    ]
    assert body in response.text
    assert "<html" in response.text
    assert Post.objects.count() == 1


def test_body_of_exactly_50000_characters_is_accepted(table):
    response = client_for(table.player).post(
        _post_url(table), {"voice": "ooc", "body": "a" * 50000, "recipients": "all"}
    )
    assert response.status_code == 302


def test_post_error_with_htmx_returns_the_form_fragment_retargeted(table):
    response = client_for(table.player).post(
        _post_url(table), {"voice": "ooc", "body": "   ", "note": "Mi nota", "recipients": "all"}, headers=HX
    )
    assert response.status_code == 200
    assert response.headers["HX-Retarget"] == "#escribir"
    assert response.headers["HX-Reswap"] == "outerHTML"
    assert response.text.lstrip().startswith('<section id="escribir"')
    assert "<html" not in response.text
    assert response.context["form"].errors["body"] == ["Este campo es obligatorio."]
    assert "Este campo es obligatorio." in response.text
    assert "Mi nota" in response.text


def test_post_with_htmx_redirects_the_client_to_the_new_post(table):
    response = client_for(table.player).post(
        _post_url(table), {"voice": "ooc", "body": "Hola.", "recipients": "all"}, headers=HX
    )
    post = Post.objects.latest("pk")
    assert response.status_code == 200
    assert response.headers["HX-Redirect"] == reverse("campaigns:post-permalink", args=[post.pk])


def test_posting_in_a_locked_scene_is_a_403_with_a_message(table):
    Scene.objects.filter(pk=table.scene.pk).update(status=Scene.Status.LOCKED)
    response = client_for(table.player).post(_post_url(table), {"voice": "ooc", "body": "Hola.", "recipients": "all"})
    assert response.status_code == 403
    assert "La escena está cerrada: no se pueden escribir mensajes." in response.text
    assert Post.objects.count() == 1


def test_gm_may_still_post_in_a_locked_scene(table):
    Scene.objects.filter(pk=table.scene.pk).update(status=Scene.Status.LOCKED)
    response = client_for(table.gm).post(_post_url(table), {"voice": "ooc", "body": "Cierro.", "recipients": "all"})
    assert response.status_code == 302


def test_reader_posting_gets_a_403_with_a_message(table):
    response = client_for(table.reader).post(_post_url(table), {"voice": "ooc", "body": "Hola.", "recipients": "all"})
    assert response.status_code == 403
    assert "No puedes escribir en esta escena." in response.text


def test_outsider_posting_in_a_private_campaign_gets_a_404(private_table):
    response = client_for(private_table.outsider).post(
        _post_url(private_table), {"voice": "ooc", "body": "Hola.", "recipients": "all"}
    )
    assert response.status_code == 404


def test_post_create_refuses_get(table):
    assert client_for(table.player).get(_post_url(table)).status_code == 405


# --- scene_create and scene_edit --------------------------------------------------


def test_gm_creates_a_split_party_scene_with_aspects(table):
    response = client_for(table.gm).post(
        reverse("campaigns:scene-create", args=[table.campaign.slug]),
        {
            "title": "El bosque",
            "description": "Niebla.",
            "participants": [table.player.pk],
            "aspects": "Niebla\n\n  Barro  ",
        },
    )
    scene = Scene.objects.get(title="El bosque")
    assert response.status_code == 302
    assert response.url == scene.get_absolute_url()
    assert (scene.everyone, list(scene.participants.all())) == (False, [table.player])
    assert list(scene.aspects.values_list("phrase", flat=True)) == ["Niebla", "Barro"]
    assert scene.position == 2


def test_scene_for_no_one_is_refused(table):
    response = client_for(table.gm).post(
        reverse("campaigns:scene-create", args=[table.campaign.slug]), {"title": "Nadie"}
    )
    assert response.context["form"].errors["participants"] == [
        "Elige al menos un miembro, o haz la escena visible para todos."
    ]


def test_player_cannot_create_a_scene(table, private_table):
    assert (
        client_for(table.player).get(reverse("campaigns:scene-create", args=[table.campaign.slug])).status_code == 403
    )
    url = reverse("campaigns:scene-create", args=[private_table.campaign.slug])
    assert client_for(private_table.outsider).get(url).status_code == 404
    assert client_for(table.gm).put(reverse("campaigns:scene-create", args=[table.campaign.slug])).status_code == 405


def test_gm_locks_a_scene_and_the_change_is_logged(table):
    response = client_for(table.cogm).post(
        _scene_url(table, "scene-edit"),
        {
            "title": "El vestíbulo",
            "description": "",
            "status": "locked",
            "everyone": "on",
            "position": 1,
            "aspects": "Polvo",
        },
    )
    table.scene.refresh_from_db()
    assert response.status_code == 302
    assert table.scene.status == Scene.Status.LOCKED
    assert list(table.scene.aspects.values_list("phrase", flat=True)) == ["Polvo"]
    entry = ModerationLog.objects.get(action=ModerationAction.SCENE_STATUS)
    assert (entry.actor, entry.scene, entry.reason) == (table.cogm, table.scene, "Cerrada")


def test_scene_edit_form_shows_the_current_aspects(table):
    table.scene.aspects.create(phrase="Polvo")
    response = client_for(table.gm).get(_scene_url(table, "scene-edit"))
    assert response.context["form"].initial["aspects"] == "Polvo"


def test_player_cannot_edit_a_scene_and_outsider_gets_404(table, private_table):
    assert client_for(table.player).get(_scene_url(table, "scene-edit")).status_code == 403
    assert client_for(private_table.outsider).get(_scene_url(private_table, "scene-edit")).status_code == 404
    assert client_for(table.gm).delete(_scene_url(table, "scene-edit")).status_code == 405


def test_a_refused_scene_edit_leaves_the_page_title_alone(table):
    response = client_for(table.gm).post(
        _scene_url(table, "scene-edit"), {"title": "", "status": "open", "everyone": "on", "position": 1}
    )
    assert response.status_code == 200
    assert response.context["form"].errors["title"] == ["Este campo es obligatorio."]
    assert response.context["scene"].title == "El vestíbulo"
    assert "← El vestíbulo" in response.text
