"""The roll log page as the cache keeps it (``campaigns.fragments``): a new
roll or re-roll moves the log's head and so its key, a reveal, a split scene
or a renamed character move the campaign's version, each reader gets their
own, and its query count stays constant, made or kept (issue 13, item 2)."""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache

from campaigns.models import Scene
from campaigns.permissions import campaign_access
from rolls import services
from systems.hitos.secret import services as secret
from tests.conftest import client_for
from tests.factories import client_seed, plain_read, roll

pytestmark = pytest.mark.django_db


def url(table, query: str = "") -> str:
    return f"/partidas/{table.campaign.slug}/tiradas/{query}"


def log(table, user=None, query: str = "", **headers) -> str:
    response = client_for(user).get(url(table, query), headers=headers)
    assert response.status_code == 200
    return response.content.decode()


def seqs(html: str) -> list[int]:
    return [
        int(n) for n in re.findall(r'<tr id="roll-row-[a-z2-7]+"[^>]*>\s*<td><a href="[^"]+"[^>]*>#(\d+)</a>', html)
    ]


def test_a_new_roll_shows_at_once(table):
    first = roll(table, purpose="Buscar pistas")
    assert seqs(log(table)) == [first.seq]
    free = services.free_roll(campaign=table.campaign, user=table.other, text="2d6", purpose="Monedas")
    assert seqs(log(table)) == [free.seq, first.seq]


def test_a_reroll_supersedes_its_parent_at_once(table):
    first = roll(table, purpose="Saltar la verja")
    assert "sustituida por" not in log(table)
    again = services.reroll_append(
        parent=first, user=table.player, positions=[0], purpose="Aspecto", read=plain_read, client_seed=client_seed()
    )
    html = log(table)
    assert f"sustituida por #{again.seq}" in html


def test_a_secret_roll_kept_for_the_gm_never_reaches_the_others_and_shows_once_revealed(table):
    entry = secret.secret_check_roll(
        scene=table.scene,
        user=table.gm,
        purpose="Percepción oculta",
        character=table.character,
        characteristic="intelecto",
        difficulty=15,
        client_seed=client_seed(),
    )
    assert "Percepción oculta" in log(table, table.gm)
    for user in (table.player, table.reader, None):
        assert "Percepción oculta" not in log(table, user)
    secret.secret_roll_reveal(entry=entry, user=table.gm, access=campaign_access(table.gm, table.campaign))
    for user in (table.player, table.reader, None):
        assert "Percepción oculta" in log(table, user)


def test_a_whispered_roll_stays_with_its_readers(table):
    roll(table, purpose="Robar la llave", post=table.whisper)
    assert "Robar la llave" in log(table, table.gm)
    assert "Robar la llave" in log(table, table.player)
    assert "Robar la llave" not in log(table, table.other)
    assert "Robar la llave" not in log(table)


def test_a_scene_split_off_takes_its_rolls_away_at_once(table):
    roll(table, purpose="Mirar por la cerradura")
    assert "Mirar por la cerradura" in log(table, table.other)
    table.scene.everyone = False
    table.scene.save()
    assert "Mirar por la cerradura" not in log(table, table.other)
    table.scene.participants.add(table.other)
    assert "Mirar por la cerradura" in log(table, table.other)


def test_a_renamed_character_scene_or_player_shows_at_once(table):
    roll(table, purpose="Forzar la puerta", character=table.character)
    assert "Inés Salcedo" in log(table)
    table.character.name = "Inés de Salcedo"
    table.character.save()
    assert "Inés de Salcedo" in log(table)
    Scene.objects.filter(pk=table.scene.pk).update(title="El vestíbulo oscuro")
    table.scene.refresh_from_db()
    table.scene.save(update_fields=["title"])
    assert "El vestíbulo oscuro" in log(table)
    table.player.display_name = "Ana María"
    table.player.save()
    assert "Ana María" in log(table)


def test_filters_pages_and_the_htmx_rows_are_kept_apart(table):
    mine = roll(table, purpose="Lo mío", character=table.character)
    theirs = roll(table, user=table.other, purpose="Lo suyo", character=table.tomas)
    assert seqs(log(table)) == [theirs.seq, mine.seq]
    assert seqs(log(table, query=f"?jugador={table.other.pk}")) == [theirs.seq]
    assert seqs(log(table, query=f"?personaje={table.character.pk}")) == [mine.seq]
    rows = log(table, query=f"?jugador={table.other.pk}", HX_Request="true")
    assert "<html" not in rows and seqs(rows) == [theirs.seq]
    page = log(table, query=f"?jugador={table.other.pk}")
    assert "<html" in page and seqs(page) == [theirs.seq]


@pytest.mark.parametrize("who", ["anonymous", "player", "gm"])
def test_the_query_count_is_constant_as_rolls_grow(table, who, django_assert_max_num_queries):
    client = client_for({"anonymous": None, "player": table.player, "gm": table.gm}[who])
    previous = roll(table)
    # Made: session, user, campaign, membership (players), the log's head,
    # the navbar's notifications, the rolls and their count, the cards'
    # hidden difficulties (GM), the filters' scenes, characters and players.
    # Kept: session, user, campaign, the log's head, notifications.
    made = {"anonymous": 7, "player": 11, "gm": 11}[who]
    kept = {"anonymous": 2, "player": 5, "gm": 5}[who]
    for count in (3, 40):
        while len(seqs(log(table, table.gm))) < min(count, 40):
            previous = services.reroll_append(
                parent=previous, user=table.player, positions=[0], purpose="Otra", read=plain_read
            )
        cache.clear()
        with django_assert_max_num_queries(made):
            client.get(url(table))
        with django_assert_max_num_queries(kept):
            client.get(url(table))
