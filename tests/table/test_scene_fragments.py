"""Signed-in readers get the scene page assembled from cached fragments
(issue 13): each post's article kept for one class of reader, each roll's
actions, the empty post form. Reading again costs neither the posts' queries
nor their rendering; every change the page shows is there at once; and a
fragment made for one reader never reaches a reader who may see less."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from campaigns import services as forum
from campaigns.models import Membership, Post, Role, Scene
from campaigns.permissions import campaign_access
from rolls.models import RollEntry
from sheets.models import Character
from systems.hitos.activations import services as activations
from systems.hitos.checks.services import check_setup, table_check
from systems.hitos.secret import services as secret
from systems.hitos.system import request_facts
from table.roll_requests import services as roll_requests
from tests.conftest import make_world
from tests.factories import CharacterFactory, SkillFactory, client_seed, write

# What a page shows of posts and their rolls comes from these tables.
POST_TABLES = {'"campaigns_post"', '"table_tableroll"', '"rolls_rollentry"', '"hitos_activation"'}


@pytest.fixture
def play(db):
    return make_world()


def _roll(play, *, post=None, hidden=False, purpose="Cruzar el vestíbulo sin ruido", user=None, character=None):
    return table_check(
        campaign=play.campaign,
        user=user or play.ana,
        setup=check_setup(character or play.ines, characteristic="reflejos", skill="Sigilo"),
        purpose=purpose,
        difficulty=17,
        difficulty_hidden=hidden,
        character=character or play.ines,
        scene=play.scene,
        post=post or play.post,
        client_seed=client_seed(),
    )


@pytest.fixture
def roll(play):
    return _roll(play)


def reader(play, role: str):
    """A client of ``role`` that reads the world's scene by default."""
    client = play.client(role)
    client.scene = play.scene
    return client


def page(client, scene=None) -> str:
    response = client.get((scene or client.scene).get_absolute_url())
    assert response.status_code == 200
    return response.content.decode()


def posts_part(html: str) -> str:
    return html[html.index('id="post-list"') : html.index('id="new-posts-bar"')]


def form_part(html: str) -> str:
    return html[html.index('<section id="escribir"') : html.index("</section>", html.index('<section id="escribir"'))]


def tables_read(queries) -> set[str]:
    """The tables the queries read from, but for the GM's list of secret
    rolls (the GM's own, not the posts')."""
    return {
        q["sql"].split(" FROM ", 1)[-1].split()[0]
        for q in queries.captured_queries
        if " FROM " in q["sql"] and """"rolls_rollentry"."audience" = 'gm'""" not in q["sql"]
    }


def _without_tokens(html: str) -> str:
    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", html)
    html = re.sub(r'"X-CSRFToken": "[^"]+"', "", html)
    return re.sub(r'name="submission_key" value="[^"]+"', "", html)


# --- Reading again ----------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["ana", "bruno", "gm", "reader", "anonymous"])
def test_reading_again_reads_no_post_and_renders_the_same_page(play, roll, role):
    # A roll waiting for its owner's answer, and an arcane one the GM may force (H92).
    activations.activate_negative(table_roll=roll, user=play.gm, aspect_choice=f"a{play.ines_aspect.pk}", positions=[1])
    SkillFactory(character=play.ines, name="Hechicería", category="arcana", value=2)
    arcane = table_check(
        campaign=play.campaign,
        user=play.ana,
        setup=check_setup(play.ines, characteristic="intelecto", skill="Hechicería"),
        purpose="Conjurar la niebla",
        difficulty=15,
        character=play.ines,
        scene=play.scene,
        post=write(play.scene, play.ana, "Conjuro.", voice=Post.Voice.CHARACTER, character=play.ines),
        client_seed=client_seed(),
    )
    activations.activate_positive(
        table_roll=arcane, user=play.ana, aspect_choice=f"a{play.ines_aspect.pk}", positions=[0], payment="point"
    )
    shown = {
        "ana": "Aceptar (+1 punto)",
        "bruno": "Esperando respuesta",
        "gm": "Forzar Degeneración",
        "reader": "Esperando respuesta",
        "anonymous": "Esperando respuesta",
    }
    client = reader(play, role)
    page(client)  # marks the posts read
    first = page(client)
    with CaptureQueriesContext(connection) as queries:
        again = page(client)
    assert _without_tokens(again) == _without_tokens(first)
    assert shown[role] in again and "Conjurar la niebla" in again
    assert not tables_read(queries) & POST_TABLES


# Measured, then pinned, the same whatever the number of posts and cards: a
# signed-in reader who read the page before pays for the session, the user,
# the unread notifications, the campaign and the scene; the GM also for the
# secret rolls. Their membership, a writer's characters, skills, the members
# the form offers and the GM's requests (the writer, kept under the
# campaign's content version), the posts with their rolls, activations and
# actions (kept for each reader under the scene's and the campaign's
# versions), the read marker and the situation aspects come from the cache;
# readers without an account get the whole list from it.
STEADY_QUERIES = {"ana": 5, "gm": 6, "reader": 5, "outsider": 5, "anonymous": 2}


@pytest.mark.parametrize("cards", [1, 6])
@pytest.mark.parametrize("role", list(STEADY_QUERIES))
def test_the_steady_scene_page_costs_pinned_queries(play, django_assert_max_num_queries, role, cards):
    for n in range(cards):
        post = write(
            play.scene, play.ana, f"Busco en los estantes {n}.", voice=Post.Voice.CHARACTER, character=play.ines
        )
        _roll(play, post=post, purpose=f"Buscar {n}")
    client = reader(play, role)
    page(client)
    with django_assert_max_num_queries(STEADY_QUERIES[role]):
        html = page(client)
    assert html.count('class="roll-card card') == cards


def test_the_first_reader_after_a_change_reads_the_page_in_few_queries(play, django_assert_max_num_queries):
    for n in range(6):
        post = write(
            play.scene, play.ana, f"Busco en los estantes {n}.", voice=Post.Voice.CHARACTER, character=play.ines
        )
        _roll(play, post=post, purpose=f"Buscar {n}")
    client = reader(play, "bruno")
    page(client)
    write(play.scene, play.gm, "El bibliotecario carraspea.", voice=Post.Voice.NPC, npc_name="Don Celso")
    # On top of the steady page, once per change to the scene: the scene's
    # posts, the page's posts' columns, the new post itself, their table
    # rolls and their activations, the open requests and revealed secret
    # rolls; and for this reader, their read marker (read, then moved: two
    # queries) and the first unread post.
    # The new post has no rolls: its card versions cost nothing. A post moves
    # the campaign's content version too, so the writer's rows are read again
    # (the membership, the characters and their skills, the members to
    # whisper to, the GM's requests) and the form is found rendered.
    with django_assert_max_num_queries(STEADY_QUERIES["ana"] + 16):
        html = page(client)
    assert "El bibliotecario carraspea." in html


# --- Nothing stale ----------------------------------------------------------------------------


def test_a_new_post_shows_at_once_marked_new(play):
    client = reader(play, "bruno")
    page(client)
    page(client)
    write(play.scene, play.ana, "Inés baja al sótano.", voice=Post.Voice.CHARACTER, character=play.ines)
    html = posts_part(page(client))
    assert "Inés baja al sótano." in html
    newest = Post.objects.latest("pk")
    article = html[html.index(f'id="mensaje-{newest.pk}"') :]
    assert "post-unread" in article[:400] and '<span class="badge text-bg-warning">nuevo</span>' in article
    # Read now: no longer new.
    assert "post-unread" not in posts_part(page(client))


def test_an_edit_shows_at_once(play):
    client = reader(play, "bruno")
    page(client)
    forum.post_edit(access=campaign_access(play.ana, play.campaign), post=play.post, body="Texto corregido.", note="")
    html = page(client)
    assert "Texto corregido." in html and "Abro la puerta del sótano." not in html


def test_an_edit_of_a_quoted_post_shows_in_the_quote_at_once(play):
    quoting = write(play.scene, play.bruno, "Respondo a Inés.", quote_of=play.post)
    client = reader(play, "gm")
    assert "Abro la puerta del sótano." in posts_part(page(client))
    forum.post_edit(access=campaign_access(play.ana, play.campaign), post=play.post, body="Abro la trampilla.", note="")
    html = posts_part(page(client))
    quote = html[html.index(f'id="mensaje-{quoting.pk}"') :]
    assert "Abro la trampilla." in quote and "Abro la puerta del sótano." not in html


def test_a_reroll_shows_its_new_version_at_once(play, roll):
    client = reader(play, "bruno")
    assert roll.latest.permalink in page(client)
    activations.activate_positive(
        table_roll=roll, user=play.ana, aspect_choice=f"a{play.ines_aspect.pk}", positions=[0], payment="point"
    )
    roll.refresh_from_db()
    html = page(client)
    assert roll.latest.permalink in html and "roll-chain-old" in html


def test_a_negative_activation_shows_its_answer_buttons_to_the_owner_at_once(play, roll):
    ana, bruno = reader(play, "ana"), reader(play, "bruno")
    assert "Activar aspecto" in page(ana) and "Aceptar (+1 punto)" not in page(ana)
    page(bruno)
    activations.activate_negative(table_roll=roll, user=play.gm, aspect_choice=f"a{play.ines_aspect.pk}", positions=[1])
    html = page(ana)
    assert "Aceptar (+1 punto)" in html and "Activar aspecto" not in html
    # Only the roll's owner answers: Bruno sees it waiting.
    other = page(bruno)
    assert "La dirección activa «Ágil como una gata» en contra" in other and "Aceptar (+1 punto)" not in other


@pytest.mark.parametrize("accept", [True, False], ids=["accepted", "cancelled"])
def test_an_activation_answer_shows_at_once(play, roll, accept):
    activation = activations.activate_negative(
        table_roll=roll, user=play.gm, aspect_choice=f"a{play.ines_aspect.pk}", positions=[1]
    )
    client = reader(play, "ana")
    before = page(client)
    assert "Aceptar (+1 punto)" in before
    activations.answer_negative(activation=activation, user=play.ana, accept=accept)
    roll.refresh_from_db()
    after = page(client)
    assert "Aceptar (+1 punto)" not in after and "en contra: repetir" not in after
    assert (roll.latest_id != roll.first_id) == accept
    assert RollEntry.objects.get(pk=roll.latest_id).permalink in after


def test_an_overdue_activation_offers_the_gm_to_settle_it_without_any_change(play, roll, monkeypatch):
    activations.activate_negative(
        table_roll=roll, user=play.bruno, aspect_choice=f"a{play.ines_aspect.pk}", positions=[1]
    )
    client = reader(play, "gm")
    assert "Resolver (plazo vencido)" not in page(client)
    later = timezone.now() + timedelta(hours=49)
    monkeypatch.setattr(timezone, "now", lambda: later)
    assert "Resolver (plazo vencido)" in page(client)


def test_hiding_and_showing_a_post_shows_at_once(play):
    bruno, ana = reader(play, "bruno"), reader(play, "ana")
    page(bruno)
    page(ana)
    forum.post_hide(post=play.post, actor=play.gm, reason="Fuera de tono")
    hidden = posts_part(page(bruno))
    assert "Mensaje oculto por la dirección" in hidden and "Abro la puerta del sótano." not in hidden
    assert "Citar" not in hidden[hidden.index(f'id="mensaje-{play.post.pk}"') :]
    # Its author still reads it.
    assert "Abro la puerta del sótano." in page(ana)
    forum.post_show(post=play.post, actor=play.gm)
    shown = posts_part(page(bruno))
    assert "Mensaje oculto" not in shown and "Abro la puerta del sótano." in shown


def test_a_deleted_post_goes_at_once(play):
    gone = write(play.scene, play.bruno, "Un mensaje de más.")
    client = reader(play, "ana")
    assert "Un mensaje de más." in page(client)
    gone.delete()
    assert "Un mensaje de más." not in page(client)


def test_a_moved_post_leaves_its_scene_and_reaches_the_other_at_once(play):
    other = Scene.objects.create(campaign=play.campaign, title="El jardín")
    moving = write(play.scene, play.bruno, "Salgo al jardín.")
    client = reader(play, "ana")
    assert "Salgo al jardín." in page(client)
    assert "Salgo al jardín." not in page(client, other)
    # As the admin moves it: the whole row saved.
    moving.scene = other
    moving.save()
    assert "Salgo al jardín." not in page(client)
    assert "Salgo al jardín." in page(client, other)
    anonymous = reader(play, "anonymous")
    assert "Salgo al jardín." not in page(anonymous)


def test_a_new_and_a_revealed_secret_roll_show_at_once(play):
    gm, ana = reader(play, "gm"), reader(play, "ana")
    page(gm)
    page(ana)
    entry = secret.secret_free_roll(scene=play.scene, user=play.gm, notation="1d6", purpose="Lo que acecha")
    assert "Lo que acecha" in page(gm)
    assert "Lo que acecha" not in page(ana)
    secret.secret_roll_reveal(entry=entry, user=play.gm, access=campaign_access(play.gm, play.campaign))
    assert "Lo que acecha" in page(ana)


def test_a_roll_request_shows_in_the_form_at_once_and_goes_when_cancelled(play):
    client = reader(play, "ana")
    page(client)
    request = roll_requests.request_create(
        access=campaign_access(play.gm, play.campaign),
        scene=play.scene,
        character=play.ines,
        purpose="Escuchar tras la puerta",
        difficulty=15,
        facts=request_facts(characteristic="intelecto"),
    )
    assert "Escuchar tras la puerta" in form_part(page(client))
    assert "Escuchar tras la puerta" in page(reader(play, "gm"))
    roll_requests.request_cancel(access=campaign_access(play.gm, play.campaign), request=request)
    assert "Escuchar tras la puerta" not in page(client)


def test_a_new_skill_shows_in_the_forms_roll_rows_at_once(play):
    client = reader(play, "ana")
    assert "Cerrajería (4)" not in form_part(page(client))
    SkillFactory(character=play.ines, name="Cerrajería", value=4)
    assert form_part(page(client)).count("Cerrajería (4)") == 3


def test_a_character_approved_meanwhile_is_offered_in_the_form_at_once(play):
    client = reader(play, "ana")
    draft = CharacterFactory(campaign=play.campaign, owner=play.ana, name="Matilde Ros", status=Character.Status.DRAFT)
    assert "Matilde Ros" not in form_part(page(client))
    draft.status = Character.Status.APPROVED
    draft.save(update_fields=["status"])
    assert "Matilde Ros" in form_part(page(client))


def test_a_player_made_a_reader_loses_the_form_and_the_quote_links_at_once(play):
    client = reader(play, "bruno")
    html = page(client)
    assert 'name="submission_key"' in html and ">Citar</a>" in posts_part(html)
    membership = Membership.objects.get(campaign=play.campaign, user=play.bruno)
    forum.member_set_role(membership=membership, actor=play.gm, role=Role.READER)
    html = page(client)
    assert 'name="submission_key"' not in html and ">Citar</a>" not in posts_part(html)


@pytest.mark.parametrize("role", ["ana", "anonymous"])
def test_the_scenes_situation_aspects_show_at_once_when_edited(play, role):
    client = reader(play, role)
    page(client)
    scene = play.scene
    forum.scene_update(
        scene=scene,
        actor=play.gm,
        title=scene.title,
        description=scene.description,
        everyone=scene.everyone,
        participants=[],
        status=scene.status,
        position=scene.position,
        game_values={"aspects": ["Niebla espesa en el patio"]},
    )
    assert "Niebla espesa en el patio" in page(client)


def test_the_cached_form_carries_this_requests_token_and_a_fresh_submission_key(play):
    client = reader(play, "ana")
    first, second = page(client), page(client)
    keys = [re.search(r'name="submission_key" value="([^"]+)"', html).group(1) for html in (first, second)]
    assert keys[0] != keys[1] and all(len(key) == 32 for key in keys)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', second).group(1)
    assert len(token) == 64
    # The form as served publishes (the same key twice would publish once).
    response = client.post(
        reverse("table:post-create", args=[play.campaign.slug, play.scene.pk]),
        {"voice": f"character:{play.ines.pk}", "body": "Desde el formulario guardado.", "recipients": "all"}
        | {"submission_key": keys[1], "csrfmiddlewaretoken": token},
    )
    assert response.status_code == 302
    assert "Desde el formulario guardado." in page(client)


def test_each_language_has_its_own_fragments(play, roll):
    assert "Activar aspecto" in page(reader(play, "ana"))
    play.bruno.language = "en"
    play.bruno.save(update_fields=["language"])
    english = page(reader(play, "bruno"))
    assert "Activate aspect" in english and "Activar aspecto" not in english


# --- Never to a reader who may see less ---------------------------------------------------------


def test_the_gms_fragments_never_reach_a_player(play):
    hidden_roll = _roll(play, hidden=True)
    forum.post_hide(post=play.post, actor=play.gm, reason="Spoiler")
    gm_page = posts_part(page(reader(play, "gm")))
    assert "Abro la puerta del sótano." in gm_page and "dificultad 17 (oculta a los jugadores)" in gm_page
    assert "Volver a mostrar" in gm_page
    bruno = posts_part(page(reader(play, "bruno")))
    assert "Abro la puerta del sótano." not in bruno and hidden_roll.latest.permalink not in bruno
    assert "dificultad 17" not in bruno and "Volver a mostrar" not in bruno
    # The author reads their hidden post, never the GM's view of its roll.
    ana = posts_part(page(reader(play, "ana")))
    assert "Abro la puerta del sótano." in ana and "dificultad oculta" in ana and "dificultad 17" not in ana


def test_a_whisper_never_reaches_a_reader_it_is_not_for(play):
    to_ana = write(play.scene, play.gm, "Solo tú oyes el susurro.", recipients="chosen", chosen=[play.ana])
    to_gm = write(play.scene, play.bruno, "Solo para la directora.", recipients="gm")
    assert "Solo tú oyes el susurro." in page(reader(play, "ana"))
    assert "Solo para la directora." in page(reader(play, "gm"))
    bruno = page(reader(play, "bruno"))
    assert "Solo tú oyes el susurro." not in bruno and f'id="mensaje-{to_ana.pk}"' not in bruno
    assert "Solo para la directora." in bruno  # his own
    for role in ("reader", "anonymous"):
        html = page(reader(play, role))
        assert f'id="mensaje-{to_ana.pk}"' not in html and f'id="mensaje-{to_gm.pk}"' not in html, role


def test_a_players_own_actions_and_links_never_reach_another_player(play, roll):
    activations.activate_negative(table_roll=roll, user=play.gm, aspect_choice=f"a{play.ines_aspect.pk}", positions=[1])
    ana = page(reader(play, "ana"))
    assert "Aceptar (+1 punto)" in ana
    assert reverse("campaigns:post-edit", args=[play.post.pk]) in ana
    bruno = page(reader(play, "bruno"))
    assert "Aceptar (+1 punto)" not in bruno
    assert reverse("campaigns:post-edit", args=[play.post.pk]) not in bruno
    assert reverse("campaigns:post-report", args=[play.post.pk]) in bruno


def test_one_writers_form_never_reaches_another(play):
    gm_form = form_part(page(reader(play, "gm")))
    assert "PNJ (escribe su nombre)" in gm_form and "El mayordomo" in gm_form
    ana_form = form_part(page(reader(play, "ana")))
    assert "Personaje: Inés Salcedo" in ana_form
    assert "PNJ (escribe su nombre)" not in ana_form and "Tomás Ferrer" not in ana_form
    bruno_form = form_part(page(reader(play, "bruno")))
    assert "Personaje: Tomás Ferrer" in bruno_form and "Inés Salcedo" not in bruno_form


def test_each_reader_gets_their_own_csrf_token(play):
    forum.post_hide(post=play.post, actor=play.gm, reason="Fuera de tono")
    first, second = reader(play, "gm"), reader(play, "gm")
    tokens = [set(re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', page(c))) for c in (first, second)]
    assert all(len(found) >= 2 for found in tokens)
    assert not tokens[0] & tokens[1]


def test_a_players_page_kept_whole_carries_each_requests_own_working_tokens(play):
    """A page served whole from the cache to the same player in another
    browser: its forms hold that browser's CSRF token and a fresh submission
    key, and the post form sent with them is accepted (CSRF checked)."""
    page(reader(play, "ana"))
    page(reader(play, "ana"))
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(play.ana)
    with CaptureQueriesContext(connection) as queries:
        html = browser.get(play.scene.get_absolute_url()).content.decode()
    assert not tables_read(queries) & POST_TABLES
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    key = re.search(r'name="submission_key" value="([^"]+)"', html).group(1)
    assert key not in page(reader(play, "ana"))
    response = browser.post(
        reverse("table:post-create", args=[play.campaign.slug, play.scene.pk]),
        {
            "csrfmiddlewaretoken": token,
            "voice": f"character:{play.ines.pk}",
            "body": "Escrito desde otro navegador.",
            "recipients": "all",
            "submission_key": key,
        },
    )
    assert response.status_code == 302
    assert Post.objects.filter(body="Escrito desde otro navegador.").exists()


def _kept_pages() -> int:
    return sum(1 for key in cache._cache if ":fragment:scene-page:" in key)


@pytest.mark.parametrize("role", ["anonymous", "ana"])
def test_made_up_addresses_fill_no_cache_with_pages(play, role):
    client = reader(play, role)
    page(client)
    kept = _kept_pages()
    assert kept == 1
    for n in range(5):
        response = client.get(play.scene.get_absolute_url() + f"?buscador={n}")
        assert response.status_code == 200
    for n in range(5) if role == "anonymous" else ():
        client.get(play.scene.get_absolute_url() + f"?pagina={n + 2}")
    client.get(play.scene.get_absolute_url() + "?pagina=123456789")
    assert _kept_pages() == kept


def test_a_message_to_show_once_is_shown_once(play):
    client = reader(play, "ana")
    page(client)
    response = client.post(
        reverse("table:post-create", args=[play.campaign.slug, play.scene.pk]),
        {"voice": f"character:{play.ines.pk}", "body": "Abro la verja.", "recipients": "all", "submission_key": "k1"},
        follow=True,
    )
    assert "Mensaje publicado." in response.content.decode()
    assert "Mensaje publicado." not in page(client)


def test_the_kept_facts_hold_no_email_nor_password_hash(play, roll):
    import pickle

    from django.core.cache import cache

    from campaigns.versions import scene_version
    from table import fragments

    # Bruno's activation: its activator is loaded with the roll's actions.
    activations.activate_negative(
        table_roll=roll, user=play.bruno, aspect_choice=f"a{play.tomas_aspect.pk}", positions=[1]
    )
    for role in ("ana", "bruno", "gm"):
        assert "Tomás Ferrer activa" in page(reader(play, role))
    ids = list(play.scene.posts.order_by("pk").values_list("pk", flat=True))
    facts = cache.get(f"scene-page:{play.scene.pk}:{scene_version(play.scene.pk)}:{fragments.digest(ids)}")
    kept = pickle.dumps(facts)  # as the cache keeps it
    assert facts.rolls[0].activations.all()[0].activator_id == play.bruno.pk
    for user in (play.ana, play.bruno, play.gm):
        assert user.email.encode() not in kept and user.password.encode() not in kept
