"""Rolls in posts (issue 7, item 1): the "añadir tirada" rows of the post form,
the chance preview, publishing the post and its rolls together, and a form
sent twice."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections
from django.template.defaultfilters import floatformat
from django.urls import reverse
from django.utils import translation
from pytest_django.asserts import assertContains, assertNotContains

from campaigns.models import Post
from campaigns.permissions import campaign_access
from rolls.models import RollEntry
from rules import hitos
from rules.probability import success_probability
from systems.hitos.checks.services import table_reroll
from systems.hitos.system import check_plan
from table import services as table_services
from table.models import TableRoll
from tests.conftest import World, client_for, make_world
from tests.factories import client_seed

XSS = "<script>alert(1)</script>"


def _create_url(play: World) -> str:
    return reverse("table:post-create", args=[play.campaign.slug, play.scene.pk])


def _chance_url(play: World) -> str:
    return reverse("table:post-roll-chance", args=[play.campaign.slug, play.scene.pk])


def _row(i: int, **fields) -> dict[str, str]:
    return {f"tirada-{i}-{name}": str(value) for name, value in fields.items()}


def _form(play: World, *, voice=None, body="Cruzo el jardín a oscuras.", **extra) -> dict[str, str]:
    data = {
        "voice": voice or f"character:{play.ines.pk}",
        "body": body,
        "recipients": "all",
        "submission_key": client_seed(),
    }
    data.update(extra)
    return data


def _percent(modifier: int, difficulty: int) -> str:
    with translation.override("es"):
        return floatformat(float(success_probability(modifier, difficulty) * 100), 1)


def _wound(character, *, until_penalty: int = -2):
    """Slash the health meter until the sheet's penalty is ``until_penalty``."""
    for slashes in range(1, 40):
        character.hitos.health_slashes = slashes
        if character.hitos.health_penalty == until_penalty:
            character.hitos.save()
            return character
    raise AssertionError("no meter state gives that penalty")


# --- the form -------------------------------------------------------------------------


def test_the_post_form_offers_roll_rows_with_a_seed_and_a_submission_key(play):
    response = client_for(play.ana).get(play.scene.get_absolute_url())
    html = response.content.decode()
    assert html.count("<summary>Añadir tirada") == 3
    assert 'name="tirada-0-client_seed"' in html and "data-client-seed" in html
    assert 'name="submission_key"' in html
    assertContains(response, "Sigilo (3)")
    assertContains(response, 'data-hx-post="' + _create_url(play) + '"')
    # Readers get no form, so no rows.
    assertNotContains(client_for(play.reader).get(play.scene.get_absolute_url()), "Añadir tirada")


def test_a_bad_difficulty_comes_back_with_an_error_and_what_was_typed(play):
    data = _form(play, **_row(0, characteristic="reflejos", difficulty="Chungo", purpose="Saltar la tapia"))
    response = client_for(play.ana).post(_create_url(play), data)
    assert response.status_code == 200
    assertContains(response, "Dificultad no válida: escribe un número o una de: Fácil, Media, Difícil")
    assertContains(response, 'value="Chungo"')
    assertContains(response, 'value="Saltar la tapia"')
    assertContains(response, "Cruzo el jardín a oscuras.")
    assert Post.objects.count() == 1 and not TableRoll.objects.exists()


def test_an_unknown_skill_is_refused(play):
    data = _form(play, **_row(0, characteristic="reflejos", skill="Volar", purpose="Saltar"))
    response = client_for(play.ana).post(_create_url(play), data)
    assertContains(response, "La ficha no tiene la habilidad «Volar».")
    assert not TableRoll.objects.exists()


def test_a_skill_the_npc_sheet_lacks_is_refused_by_the_sheet(play):
    play.npc.skills.filter(name="Sigilo").delete()
    play.tomas.skills.create(name="Pelea", category="combate", value=2)
    # The GM's rows offer the NPC sheets' skills; "Sigilo" is on none of them now.
    data = _form(play, voice="npc", npc_name="El mayordomo")
    data.update(_row(0, npc=play.npc.pk, characteristic="reflejos", skill="Sigilo", purpose="Esconderse"))
    response = client_for(play.gm).post(_create_url(play), data)
    assertContains(response, "La ficha no tiene la habilidad «Sigilo».")
    assert not TableRoll.objects.exists()


def test_a_used_row_needs_a_purpose(play):
    response = client_for(play.ana).post(_create_url(play), _form(play, **_row(0, characteristic="reflejos")))
    assertContains(response, "Indica para qué es la tirada.")
    assert not RollEntry.objects.rolls().exists()


def test_a_modifier_needs_its_reason(play):
    data = _form(play, **_row(0, characteristic="reflejos", value_1=2, purpose="Saltar"))
    assertContains(client_for(play.ana).post(_create_url(play), data), "Explica de dónde sale el modificador.")


def test_a_player_rolls_only_as_their_character(play):
    data = _form(play, voice="ooc", **_row(0, free_modifier=3, purpose="Suerte"))
    response = client_for(play.ana).post(_create_url(play), data)
    assertContains(response, "Para tirar, escribe como tu personaje.")
    assert not TableRoll.objects.exists()


def test_errors_come_back_to_htmx_as_the_form_fragment(play):
    data = _form(play, **_row(0, characteristic="reflejos"))
    response = client_for(play.ana).post(_create_url(play), data, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert response["HX-Retarget"] == "#escribir"
    assertNotContains(response, "<html")
    assertContains(response, "Indica para qué es la tirada.")


# --- the chance preview ------------------------------------------------------------------


def test_the_chance_follows_the_choices_and_never_rolls(play):
    client = client_for(play.ana)
    before = RollEntry.objects.count()
    voice = f"character:{play.ines.pk}"
    response = client.get(
        _chance_url(play), {"fila": 0, "voice": voice, **_row(0, characteristic="reflejos", difficulty="15")}
    )
    assert response.status_code == 200
    assertContains(response, f"Probabilidad de éxito: {_percent(6, 15)} %")
    assertContains(response, "Reflejos +6 · modificador +6 contra dificultad 15")
    # Adding the skill and a named difficulty changes it.
    response = client.get(
        _chance_url(play),
        {
            "fila": "1",
            "voice": voice,
            **_row(1, characteristic="reflejos", skill="Sigilo", value_1="-2", reason_1="Barro", difficulty="Difícil"),
        },
    )
    assertContains(response, 'id="probabilidad-1"')
    assertContains(response, f"Probabilidad de éxito: {_percent(7, 20)} %")
    assertContains(response, "Reflejos +6, Sigilo +3, Barro -2 · modificador +7 contra dificultad 20")
    assert RollEntry.objects.count() == before


def test_the_chance_includes_the_health_penalty_by_itself(play):
    _wound(play.ines)
    response = client_for(play.ana).get(
        _chance_url(play), {"voice": f"character:{play.ines.pk}", **_row(0, characteristic="reflejos")}
    )
    assertContains(response, f"Salud: {play.ines.hitos.health_label} -2")
    assertContains(response, f"Probabilidad de éxito: {_percent(4, 15)} %")


def test_the_chance_fragment_says_what_is_wrong(play):
    response = client_for(play.ana).get(
        _chance_url(play), {"voice": f"character:{play.ines.pk}", **_row(0, difficulty="Chungo", free_modifier="1")}
    )
    assertContains(response, "Dificultad no válida")
    assertNotContains(response, "<html")


def test_the_chance_preview_is_for_writers_only(play, private_play):
    assert client_for(play.reader).get(_chance_url(play)).status_code == 403
    assert client_for(private_play.outsider).get(_chance_url(private_play)).status_code == 404
    assert client_for(play.ana).post(_chance_url(play)).status_code == 405


# --- publishing -------------------------------------------------------------------------


def test_a_post_with_two_rolls_rolls_both_with_the_sheet_and_its_penalty(play):
    _wound(play.ines)
    seed = client_seed()
    data = _form(
        play,
        **_row(0, characteristic="reflejos", skill="Sigilo", difficulty="Difícil", purpose="Cruzar", client_seed=seed),
        **_row(1, characteristic="fortaleza", reason_1="Palanca", value_1="2", purpose="Forzar la reja"),
    )
    response = client_for(play.ana).post(_create_url(play), data)
    post = Post.objects.latest("pk")
    assert response.status_code == 302 and response.url == post.get_absolute_url()
    first, second = TableRoll.objects.filter(post=post).order_by("position")
    assert (first.position, second.position) == (0, 1)
    assert (first.character, first.owner, first.scene, first.difficulty) == (play.ines, play.ana, play.scene, 20)
    label = f"Salud: {play.ines.hitos.health_label}"
    assert first.latest.signed_game["breakdown"] == [["Reflejos", 6], ["Sigilo", 3], [label, -2]]
    assert first.facts["modifier"] == 7 and first.latest.entry["purpose"] == "Cruzar"
    assert second.latest.signed_game["breakdown"] == [["Fortaleza", 5], ["Palanca", 2], [label, -2]]
    assert second.difficulty == 15
    assert first.first.entry["client_seed"] == seed and first.first.entry["client_seed_source"] == "browser"
    # Without a browser seed the server makes one, and the entry says so.
    assert second.first.entry["client_seed_source"] == "server"
    assert first.first.post_id == post.pk and first.first.entry["post"] == f"p{post.pk}"


def test_the_scene_page_shows_the_post_rolls(play):
    data = _form(play, **_row(0, characteristic="reflejos", purpose="Cruzar"))
    client_for(play.ana).post(_create_url(play), data)
    table_roll = TableRoll.objects.get()
    response = client_for(play.bruno).get(play.scene.get_absolute_url())
    assertContains(response, f'id="tirada-{table_roll.pk}"')
    assertContains(response, f"firmada · {table_roll.latest.entry_hash[:12]}")


def test_htmx_publishing_redirects_the_client(play):
    data = _form(play, **_row(0, characteristic="reflejos", purpose="Cruzar"))
    response = client_for(play.ana).post(_create_url(play), data, headers={"HX-Request": "true"})
    post = Post.objects.latest("pk")
    assert response["HX-Redirect"] == post.get_absolute_url()
    assert TableRoll.objects.filter(post=post).count() == 1


def test_the_gm_rolls_for_an_npc_sheet_or_with_a_free_modifier(play):
    data = _form(play, voice="npc", npc_name="El mayordomo")
    data.update(_row(0, npc=play.npc.pk, characteristic="reflejos", skill="Combate", purpose="Bloquear la puerta"))
    data.update(_row(1, free_modifier="4", purpose="Los perros", difficulty="10"))
    response = client_for(play.gm).post(_create_url(play), data)
    assert response.status_code == 302
    npc_roll, free_roll = TableRoll.objects.order_by("position")
    assert (npc_roll.character, npc_roll.facts["modifier"]) == (play.npc, 10)
    assert (free_roll.character, free_roll.facts["modifier"], free_roll.difficulty) == (None, 4, 10)
    assert free_roll.latest.signed_game["breakdown"] == [["Modificador", 4]]


def test_a_form_sent_twice_publishes_once(play):
    data = _form(play, **_row(0, characteristic="reflejos", purpose="Cruzar", client_seed=client_seed()))
    client = client_for(play.ana)
    first = client.post(_create_url(play), data)
    second = client.post(_create_url(play), data)
    assert first.url == second.url
    assert Post.objects.filter(submission_key=data["submission_key"]).count() == 1
    assert TableRoll.objects.count() == 1 and RollEntry.objects.rolls().count() == 1


def test_purposes_and_reasons_are_escaped(play):
    data = _form(play, **_row(0, characteristic="reflejos", reason_1=XSS, value_1="1", purpose=XSS))
    client_for(play.ana).post(_create_url(play), data)
    response = client_for(play.gm).get(play.scene.get_absolute_url())
    assertNotContains(response, XSS)
    assertContains(response, "&lt;script&gt;alert(1)&lt;/script&gt;", count=2)


def test_posting_is_refused_to_readers_and_hidden_from_outsiders(play, private_play):
    data = _form(play, **_row(0, characteristic="reflejos", purpose="Cruzar"))
    assert client_for(play.reader).post(_create_url(play), data).status_code == 403
    private = _form(private_play, **_row(0, characteristic="reflejos", purpose="Cruzar"))
    assert client_for(private_play.outsider).post(_create_url(private_play), private).status_code == 404
    assert not TableRoll.objects.exists()


# --- the scene page stays cheap ---------------------------------------------------------


def _posts_with_rolls(play: World, n: int) -> None:
    access = campaign_access(play.ana, play.campaign)
    for i in range(n):
        plans = [
            check_plan(
                play.ines,
                characteristic="reflejos",
                skill="Sigilo",
                difficulty=15,
                purpose=f"Tirada {i}-{j}",
                client_seed=client_seed(),
            )
            for j in range(2)
        ]
        post = table_services.post_with_rolls_create(
            access=access,
            scene=play.scene,
            voice=Post.Voice.CHARACTER,
            body=f"Mensaje {i}",
            character=play.ines,
            rolls=plans,
        )
        table_roll = post.table_rolls.first()
        table_reroll(table_roll, user=play.ana, positions=[0], reading=hitos.Reading.POSITIVE, aspect="Ágil")


@pytest.mark.parametrize("n", [2, 9])
def test_the_scene_page_query_count_is_constant_as_posts_with_rolls_grow(play, django_assert_max_num_queries, n):
    _posts_with_rolls(play, n)
    # The first visit after the posts reads the page's table rolls, their
    # activations and their versions (every version in one query, each entry
    # once): three queries on top of the scene page's own
    # (tests/campaigns/test_views_queries.py), and the page's facts are read
    # from the posts' columns before the posts themselves; it also writes the
    # GM's read marker (a savepoint round trip). The readers after it find
    # the page's posts and cards kept (tests/table/test_scene_fragments.py).
    for user, bound in ((play.gm, 24), (play.ana, 14), (play.reader, 15), (None, 5)):
        client = client_for(user)
        with django_assert_max_num_queries(bound):
            response = client.get(play.scene.get_absolute_url())
        assert response.status_code == 200
        assert response.content.decode().count('class="roll-card card') == 2 * n
        assert response.content.decode().count("roll-chain-old") == n


def test_the_post_list_fragment_carries_the_cards(play):
    _posts_with_rolls(play, 1)
    response = client_for(play.bruno).get(play.scene.get_absolute_url(), headers={"HX-Request": "true"})
    assertNotContains(response, "<html")
    assert response.content.decode().count('class="roll-card card') == 2


# --- a form sent twice at once (PostgreSQL) ------------------------------------------------


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL row locks and unique indexes")
@pytest.mark.django_db(transaction=True)
def test_two_identical_submissions_at_once_make_one_post_and_one_roll():
    play = make_world()
    data = _form(play, **_row(0, characteristic="reflejos", purpose="Cruzar", client_seed=client_seed()))
    barrier = threading.Barrier(2)
    statuses: list[int] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            client = client_for(play.ana)
            barrier.wait(timeout=30)
            statuses.append(client.post(_create_url(play), data).status_code)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == [] and statuses == [302, 302]
    assert Post.objects.filter(submission_key=data["submission_key"]).count() == 1
    assert TableRoll.objects.count() == 1
    assert RollEntry.objects.rolls().count() == 1
