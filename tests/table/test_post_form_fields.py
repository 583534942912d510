"""The scene's post form shows what applies to its writer (issue 14): the NPC
name only to who may speak as an NPC, the chosen members only with those
recipients (static/js/forms.js; without JavaScript they show and what they
hold is ignored), and the server checks everything whatever the form showed.
An empty scene says what to do; the roll rows ask for a modifier, then its
reason."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from pytest_django.asserts import assertContains, assertNotContains

from campaigns.models import Post
from tests.conftest import World, client_for
from tests.factories import add_member, client_seed, make_scene


def _create_url(play: World, scene=None) -> str:
    return reverse("table:post-create", args=[play.campaign.slug, (scene or play.scene).pk])


def _form(play: World, **extra) -> dict[str, str]:
    data = {"voice": "ooc", "body": "Pregunto por la llave.", "recipients": "all", "submission_key": client_seed()}
    data.update(extra)
    return data


def _page(client, scene) -> str:
    response = client.get(scene.get_absolute_url())
    assert response.status_code == 200
    return response.content.decode()


def _form_part(html: str) -> str:
    start = html.index('<section id="escribir"')
    return html[start : html.index("</section>", start)]


def _options(html: str, name: str) -> list[str]:
    select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', html, re.S)
    assert select is not None, name
    return re.findall(r'<option value="([^"]*)"', select.group(1))


def _wrapper(html: str, field_id: str) -> str:
    """The element that holds a field's block (crispy's ``div_<id>``)."""
    at = html.index(f'id="div_{field_id}"')
    return html[html.rindex("<div", 0, at - 5) : at]


# --- What the form shows ------------------------------------------------------------------------


def test_a_player_is_offered_no_npc_voice_nor_npc_name(play):
    form = _form_part(_page(client_for(play.ana), play.scene))
    assert _options(form, "voice") == [f"character:{play.ines.pk}", "ooc"]
    assert "Nombre del PNJ" not in form and 'name="npc_name"' not in form
    assert "PNJ (escribe su nombre)" not in form


def test_the_gm_names_an_npc_only_with_the_npc_voice(play):
    form = _form_part(_page(client_for(play.gm), play.scene))
    assert _options(form, "voice") == ["npc", "ooc"]
    assert 'name="npc_name"' in form
    assert 'data-shown-when="id_voice=npc"' in _wrapper(form, "id_npc_name")


@pytest.mark.parametrize("role", ["ana", "gm"])
def test_the_chosen_members_show_only_with_those_recipients(play, role):
    html = _page(client_for(getattr(play, role)), play.scene)
    form = _form_part(html)
    assert _options(form, "recipients") == ["all", "gm", "chosen"]
    assert 'data-shown-when="id_recipients=chosen"' in _wrapper(form, "id_chosen")
    # The script that hides and shows them is the site's own file (no inline script).
    assert re.search(r'<script src="/static/js/forms\.js" defer></script>', html)


@pytest.mark.parametrize("first, second", [("gm", "ana"), ("ana", "gm")])
def test_a_writer_never_gets_another_writers_cached_form(play, first, second):
    """The empty form is kept rendered (``table.views._post_form_html``): the
    GM's, with the NPC voice and name, never reaches a player, nor the
    player's the GM, whichever reads first."""
    forms = {}
    for role in (first, second, first, second):
        forms[role] = _form_part(_page(client_for(getattr(play, role)), play.scene))
    assert 'name="npc_name"' in forms["gm"] and "El mayordomo" in forms["gm"]
    assert _options(forms["gm"], "voice") == ["npc", "ooc"]
    assert 'name="npc_name"' not in forms["ana"] and "El mayordomo" not in forms["ana"]
    assert _options(forms["ana"], "voice") == [f"character:{play.ines.pk}", "ooc"]


def test_in_a_scene_for_chosen_members_only_its_readers_may_be_chosen(play):
    scene = make_scene(play.campaign, title="La cripta", everyone=False, participants=[play.ana, play.reader])
    form = _form_part(_page(client_for(play.ana), scene))
    chosen = re.findall(r'name="chosen" value="(\d+)"', form)
    assert sorted(int(pk) for pk in chosen) == sorted([play.gm.pk, play.reader.pk])
    # Bruno does not read the scene: he is not offered, and is refused if sent.
    response = client_for(play.ana).post(
        _create_url(play, scene), _form(play, recipients="chosen", chosen=[str(play.bruno.pk)])
    )
    assert response.status_code == 200
    assertContains(response, "Solo puedes elegir a miembros que leen esta escena.")
    assert not Post.objects.filter(scene=scene).exists()


def test_a_co_gm_reads_every_scene_so_may_be_chosen_in_one_for_chosen_members(play):
    cogm = add_member(play.campaign, "cogm", display_name="Codirectora")
    scene = make_scene(play.campaign, title="La cripta", everyone=False, participants=[play.ana])
    response = client_for(play.ana).post(
        _create_url(play, scene), _form(play, recipients="chosen", chosen=[str(cogm.pk)])
    )
    post = Post.objects.get(scene=scene)
    assert response.status_code == 302
    assert list(post.chosen_recipients.all()) == [cogm]


# --- What the server takes ----------------------------------------------------------------------


def test_a_player_posting_as_an_npc_gets_a_clear_error_and_nothing_is_published(play):
    response = client_for(play.ana).post(_create_url(play), _form(play, voice="npc", npc_name="El mayordomo"))
    assert response.status_code == 200
    assertContains(response, "No puedes escribir así: elige una de las voces que te ofrece la lista.")
    assertContains(response, "Pregunto por la llave.")  # what was typed comes back
    assertNotContains(response, 'name="npc_name"')
    assert Post.objects.count() == 1


def test_an_npc_name_sent_by_a_player_is_ignored(play):
    response = client_for(play.ana).post(_create_url(play), _form(play, npc_name="El mayordomo"))
    post = Post.objects.latest("pk")
    assert response.status_code == 302
    assert (post.author, post.voice, post.npc_name) == (play.ana, Post.Voice.OOC, "")


def test_an_npc_name_typed_before_choosing_another_voice_is_not_kept(play):
    response = client_for(play.gm).post(_create_url(play), _form(play, npc_name="El mayordomo"))
    post = Post.objects.latest("pk")
    assert response.status_code == 302
    assert (post.voice, post.npc_name) == (Post.Voice.OOC, "")


def test_the_gm_still_needs_the_npcs_name(play):
    response = client_for(play.gm).post(_create_url(play), _form(play, voice="npc", npc_name="  "))
    assertContains(response, "Escribe el nombre del PNJ.")
    response = client_for(play.gm).post(_create_url(play), _form(play, voice="npc", npc_name=" Don  Celso "))
    post = Post.objects.latest("pk")
    assert response.status_code == 302
    assert (post.voice, post.npc_name) == (Post.Voice.NPC, "Don Celso")


@pytest.mark.parametrize("recipients", ["everyone", "readers", ""])
def test_recipients_not_offered_are_refused_in_spanish(play, recipients):
    response = client_for(play.ana).post(_create_url(play), _form(play, recipients=recipients))
    assert response.status_code == 200
    expected = "Este campo es obligatorio." if not recipients else "Elige a quién va el mensaje"
    assertContains(response, expected)
    assert Post.objects.count() == 1


def test_members_ticked_before_choosing_everyone_are_not_kept(play):
    response = client_for(play.ana).post(_create_url(play), _form(play, recipients="all", chosen=[str(play.bruno.pk)]))
    post = Post.objects.latest("pk")
    assert response.status_code == 302
    assert post.recipients == Post.Recipients.ALL and not post.chosen_recipients.exists()


def test_chosen_recipients_still_need_someone(play):
    response = client_for(play.ana).post(_create_url(play), _form(play, recipients="chosen"))
    assertContains(response, "Elige al menos un destinatario.")
    response = client_for(play.ana).post(
        _create_url(play), _form(play, recipients="chosen", chosen=[str(play.bruno.pk)])
    )
    post = Post.objects.latest("pk")
    assert response.status_code == 302
    assert list(post.chosen_recipients.all()) == [play.bruno]


def test_an_error_comes_back_to_htmx_as_the_writers_own_form(play):
    response = client_for(play.ana).post(_create_url(play), _form(play, voice="npc"), headers={"HX-Request": "true"})
    html = response.content.decode()
    assert response.status_code == 200 and response["HX-Retarget"] == "#escribir"
    assert "<html" not in html and "No puedes escribir así" in html
    assert 'name="npc_name"' not in html
    assert 'data-shown-when="id_recipients=chosen"' in html


# --- The roll rows: the modifier, then its reason -----------------------------------------------


def test_each_modifier_comes_before_its_reason(play):
    form = _form_part(_page(client_for(play.ana), play.scene))
    for n in (1, 2):
        value = form.index(f'name="tirada-0-value_{n}"')
        reason = form.index(f'name="tirada-0-reason_{n}"')
        assert value < reason, n
    assert form.index('name="tirada-0-reason_1"') < form.index('name="tirada-0-value_2"')


# --- An empty scene -----------------------------------------------------------------------------


@pytest.fixture
def empty_scene(play):
    return make_scene(play.campaign, title="El jardín")


@pytest.mark.parametrize("role", ["ana", "gm"])
def test_an_empty_scene_asks_a_writer_for_the_first_post(play, empty_scene, role):
    html = _page(client_for(getattr(play, role)), empty_scene)
    assert (
        '<p class="scene-empty text-body-secondary">Aún no hay mensajes. <a href="#escribir">Escribe el primero abajo.</a></p>'
        in html
    )
    assert '<section id="escribir"' in html


@pytest.mark.parametrize("role", ["reader", "outsider", "anonymous"])
def test_an_empty_scene_tells_a_reader_that_posts_will_come(play, empty_scene, role):
    html = _page(client_for(play.user(role)), empty_scene)
    assert "Aún no hay mensajes en esta escena: aparecerán aquí en cuanto alguien escriba." in html
    assert "Escribe el primero abajo." not in html


def test_an_empty_closed_scene_asks_nobody_to_write(play, empty_scene):
    empty_scene.status = "locked"
    empty_scene.save(update_fields=["status"])
    html = _page(client_for(play.ana), empty_scene)
    assert "Escribe el primero abajo." not in html
    assert "aparecerán aquí en cuanto alguien escriba." in html


def test_the_post_list_fragment_of_an_empty_scene_says_what_to_do(play, empty_scene):
    response = client_for(play.ana).get(empty_scene.get_absolute_url(), headers={"HX-Request": "true"})
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert 'id="post-list"' in html and "Escribe el primero abajo." in html


def test_an_empty_scene_page_costs_pinned_queries(play, empty_scene, django_assert_max_num_queries):
    client = client_for(play.ana)
    _page(client, empty_scene)
    # As a scene with posts (tests/table/test_scene_fragments.py): the session
    # and its user, the campaign, the membership, the scene, the writer's
    # characters and their skills, the scene's aspects, the members to
    # choose, the unread notices.
    with django_assert_max_num_queries(10):
        _page(client, empty_scene)
