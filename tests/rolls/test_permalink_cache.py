"""A roll's permalink page as the cache keeps it (``campaigns.fragments``):
the log's head (its bundle carries it), a re-roll, a reveal, its post and its
own stored bytes move the key, each reader gets their own page, and its query
count stays constant, made or kept (issue 13, item 2)."""

from __future__ import annotations

from unittest import mock

import pytest
from django.core.cache import cache
from django.db import connection
from django.utils import timezone

from campaigns import fragments
from campaigns import services as forum
from campaigns.permissions import campaign_access
from rolls import services
from rolls.models import CampaignLog, RollEntry
from systems.hitos.activations import services as activations
from systems.hitos.checks.services import check_setup, table_check
from systems.hitos.secret import services as secret
from tests.conftest import client_for
from tests.factories import client_seed, plain_read, roll

pytestmark = pytest.mark.django_db


def page(entry, user=None) -> str:
    response = client_for(user).get(f"/r/{entry.permalink}/")
    assert response.status_code == 200
    return response.content.decode()


def head_signature(table) -> str:
    """How the page's bundle names the log's head: its signature."""
    log = CampaignLog.objects.get(campaign=table.campaign)
    return bytes(RollEntry.objects.get(campaign=table.campaign, seq=log.seq).signature).hex()


def test_the_bundle_carries_the_logs_head_as_it_moves(table):
    entry = roll(table, purpose="Abrir el arcón")
    assert head_signature(table) in page(entry)
    roll(table, user=table.other, purpose="Otra cosa")
    html = page(entry)
    assert head_signature(table) in html and "Abrir el arcón" in html


def test_a_reroll_shows_in_the_versions_at_once(table):
    entry = roll(table, purpose="Trepar")
    assert "final" in page(entry)
    again = services.reroll_append(
        parent=entry, user=table.player, positions=[1], purpose="Aspecto", read=plain_read, client_seed=client_seed()
    )
    html = page(entry)
    assert f"#{again.seq}" in html and again.get_absolute_url() in html


def test_a_secret_roll_kept_for_the_gm_never_reaches_a_player_and_opens_once_revealed(table):
    entry = secret.secret_check_roll(
        scene=table.scene,
        user=table.gm,
        purpose="Percepción oculta",
        character=table.character,
        characteristic="intelecto",
        difficulty=15,
        client_seed=client_seed(),
    )
    assert "Percepción oculta" in page(entry, table.gm)
    for user in (table.player, None):
        html = page(entry, user)
        assert "Tirada privada" in html and "Percepción oculta" not in html
    secret.secret_roll_reveal(entry=entry, user=table.gm, access=campaign_access(table.gm, table.campaign))
    for user in (table.player, None):
        html = page(entry, user)
        assert "Percepción oculta" in html and "revelada el" in html


def test_an_edited_or_hidden_post_shows_at_once(table):
    entry = roll(table, purpose="Empujar", post=table.post)
    assert "Abro la puerta del sótano." in page(entry, table.other)
    forum.post_edit(
        access=campaign_access(table.player, table.campaign),
        post=table.post,
        body="Abro la puerta del desván.",
        note="",
    )
    assert "Abro la puerta del desván." in page(entry, table.other)
    forum.post_hide(post=table.post, actor=table.gm, reason="Fuera de tono")
    html = page(entry, table.other)
    assert "Abro la puerta del desván." not in html and "No tienes acceso al mensaje" in html


def test_a_whisper_kept_for_its_author_never_reaches_another_player(table):
    entry = roll(table, purpose="Robar la llave", post=table.whisper)
    assert "Robar la llave" in page(entry, table.player)
    assert "Robar la llave" not in page(entry, table.other)
    assert "Robar la llave" not in page(entry)


@pytest.mark.skipif(connection.vendor == "postgresql", reason="PostgreSQL's trigger refuses the raw UPDATE")
def test_altered_stored_bytes_are_checked_again_at_once(table):
    entry = roll(table, purpose="Honrada")
    assert "✓ Tirada verificada" in page(entry)
    # What only the database says, as an intruder would change it.
    tampered = bytes(entry.entry_bytes).replace(b"Honrada", b"Amanada")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE rolls_rollentry SET entry_bytes = %s WHERE id = %s", [tampered, entry.pk])
    assert "✗ La tirada no supera la verificación" in page(entry)


def test_a_pending_activation_is_kept_only_until_its_deadline(play):
    table_roll = table_check(
        campaign=play.campaign,
        user=play.ana,
        setup=check_setup(play.ines, characteristic="reflejos", skill="Sigilo"),
        purpose="Cruzar el vestíbulo",
        difficulty=15,
        character=play.ines,
        scene=play.scene,
        post=play.post,
        client_seed=client_seed(),
    )
    activation = activations.activate_negative(
        table_roll=table_roll, user=play.gm, aspect_choice=f"a{play.ines_aspect.pk}", positions=[0]
    )
    with mock.patch.object(cache, "set", wraps=cache.set) as kept:
        html = page(table_roll.latest, play.gm)
    assert "Esperando respuesta" in html
    [(key, value, seconds)] = [call.args for call in kept.call_args_list if call.args[0].startswith("fragment:roll:")]
    left = (activation.deadline - timezone.now()).total_seconds()
    assert seconds <= min(fragments.FRAGMENT_SECONDS, left + 1)


@pytest.mark.parametrize("who", ["anonymous", "player", "gm"])
def test_the_query_count_is_constant_as_versions_grow(table, who, django_assert_max_num_queries):
    client = client_for({"anonymous": None, "player": table.player, "gm": table.gm}[who])
    entry = roll(table, purpose="Base", post=table.post)
    # Made: session, user, the roll with the log's head, membership (a
    # player), the roll in full, the bundle's epoch, head, head entry and
    # children, the versions (their ids, then the rows), whether the reader
    # sees its scene and its post, the card's table roll, the rolls nearby,
    # notifications (signed in). Kept: session, user, the roll, notifications.
    made = {"anonymous": 12, "player": 16, "gm": 15}[who]
    kept = {"anonymous": 1, "player": 4, "gm": 4}[who]
    latest = entry
    for versions in (1, 6):
        while latest.seq - entry.seq < versions - 1:
            latest = services.reroll_append(
                parent=latest, user=table.player, positions=[0], purpose="Otra", read=plain_read
            )
        cache.clear()
        with django_assert_max_num_queries(made):
            client.get(f"/r/{entry.permalink}/")
        with django_assert_max_num_queries(kept):
            client.get(f"/r/{entry.permalink}/")
