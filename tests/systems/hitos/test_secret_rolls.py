"""Secret rolls of the GM (issue 11, item 4): made from the scene, sealed for
the GM alone, shown in the GM's scene and roll log, revealed later to the
scene's readers, and verifiable offline with the same bundle format."""

from __future__ import annotations

import pytest
from django.urls import reverse
from pytest_django.asserts import assertContains, assertNotContains

from campaigns.models import Scene, Visibility
from campaigns.permissions import campaign_access
from rolls.models import RollEntry, RollReveal
from rolls.verify_roll import parse_public_key, verify_bundle
from systems.hitos.secret import services as secret
from tests.conftest import World, client_for, make_world
from tests.factories import client_seed, roll

pytestmark = pytest.mark.django_db


# The shared world under the roll log's name for it, as in tests/rolls where
# these tests were: without the GM's NPC, whose sheet the GM's scene page
# would load too (the query pin below counts a GM without NPCs).
@pytest.fixture
def table(db) -> World:
    return make_world(Visibility.PUBLIC, npc=False)


@pytest.fixture
def private_table(db) -> World:
    return make_world(Visibility.PRIVATE, npc=False)


def _url(table, scene=None) -> str:
    return reverse("hitos:secret-roll-create", args=[table.campaign.slug, (scene or table.scene).pk])


def _secret(table, purpose="Percepción oculta de Inés", **kwargs) -> RollEntry:
    kwargs.setdefault("client_seed", client_seed())
    return secret.secret_check_roll(
        scene=table.scene,
        user=table.gm,
        purpose=purpose,
        character=table.character,
        characteristic="intelecto",
        difficulty=15,
        **kwargs,
    )


def _verify(bundle: dict):
    from django.conf import settings

    return verify_bundle(bundle, parse_public_key(settings.ROLLOG_KEYS.public_key_hex))


# --- The form ----------------------------------------------------------------------------


def test_the_gm_gets_the_form_as_a_page_and_as_a_fragment(table):
    client = client_for(table.gm)
    page = client.get(_url(table))
    assert page.status_code == 200
    assertContains(page, '<h1 class="h3">Tirada secreta</h1>', html=False)
    assertContains(page, 'name="client_seed"')
    fragment = client.get(_url(table), headers={"HX-Request": "true"})
    assert fragment.status_code == 200
    assertContains(fragment, 'id="secret-form"')
    assertNotContains(fragment, "<html")


def test_a_secret_hitos_check_is_sealed_for_the_gm_and_goes_to_its_page(table):
    seed = client_seed()
    response = client_for(table.gm).post(
        _url(table),
        {
            "character": table.character.pk,
            "characteristic": "intelecto",
            "difficulty": "15",
            "purpose": "¿Oye Inés los pasos?",
            "client_seed": seed,
        },
    )
    entry = RollEntry.objects.get(client_seed=seed)
    assert response.status_code == 302 and response["Location"] == entry.get_absolute_url()
    assert (entry.audience, entry.outer["kind"], entry.scene, entry.character) == (
        "gm",
        "sealed",
        table.scene,
        table.character,
    )
    assert entry.entry["purpose"] == "¿Oye Inés los pasos?"
    assert entry.entry["game"]["system"] == "hitos" and entry.entry["game"]["difficulty"] == 15


def test_a_secret_free_roll_in_dice_notation(table):
    seed = client_seed()
    client_for(table.gm).post(_url(table), {"notation": "2d6+1", "purpose": "Cuántos guardias", "client_seed": seed})
    entry = RollEntry.objects.get(client_seed=seed)
    assert entry.audience == "gm" and entry.entry["game"]["system"] == "free"
    assert entry.entry["game"]["total"] == sum(entry.entry["dice"]) + 1


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        (
            {"purpose": "x"},
            "characteristic",
            "Elige una característica, escribe un modificador libre o unos dados libres.",
        ),
        ({"purpose": "x", "characteristic": "intelecto"}, "character", "Elige de qué personaje es la característica."),
        ({"characteristic": "intelecto"}, "purpose", "Este campo es obligatorio."),
        (
            {"purpose": "x", "notation": "tres dados"},
            "notation",
            "No entiendo la tirada (posición 1: se esperaba un número o una tirada (p. ej. 2d6)).",
        ),
        ({"purpose": "x", "free_modifier": "99"}, "free_modifier", "Escribe un número de 30 o menos."),
    ],
)
def test_bad_input_is_refused_in_spanish_and_kept(table, data, field, message):
    before = RollEntry.objects.count()
    response = client_for(table.gm).post(_url(table), data)
    assert response.status_code == 200
    assert message in response.context["form"].errors[field]
    for value in data.values():
        assertContains(response, value)
    assert RollEntry.objects.count() == before


def test_outsiders_get_404_and_players_403(table, private_table):
    assert client_for(private_table.outsider).get(_url(private_table)).status_code == 404
    assert client_for(table.player).get(_url(table)).status_code == 403
    assert client_for(table.player).post(_url(table), {"notation": "1d6", "purpose": "x"}).status_code == 403
    assert client_for(table.reader).get(_url(table)).status_code == 403
    hidden = Scene.objects.create(campaign=table.campaign, title="Aparte", everyone=False)
    assert client_for(table.player).get(_url(table, hidden)).status_code == 404
    assert client_for(table.gm).put(_url(table)).status_code == 405


# --- Who sees it, before and after the reveal ------------------------------------------


def test_only_the_gm_sees_it_on_the_scene_and_in_the_roll_log_until_revealed(table):
    entry = _secret(table)
    log = reverse("rolls:roll-log", args=[table.campaign.slug])
    gm = client_for(table.gm)
    assertContains(gm.get(table.scene.get_absolute_url()), "Percepción oculta de Inés")
    assertContains(gm.get(table.scene.get_absolute_url()), "Revelar a la escena")
    assertContains(gm.get(log), "Percepción oculta de Inés")
    for user in (None, table.player, table.other, table.reader, table.outsider):
        client = client_for(user)
        assertNotContains(client.get(table.scene.get_absolute_url()), "Percepción oculta de Inés")
        assertNotContains(client.get(log), "Percepción oculta de Inés")
        page = client.get(entry.get_absolute_url())
        assertContains(page, "Tirada privada")
        assertNotContains(page, "Percepción oculta de Inés")


def test_the_reveal_shows_it_to_the_scenes_readers_with_both_times(table):
    entry = _secret(table)
    response = client_for(table.gm).post(reverse("hitos:secret-roll-reveal", args=[entry.permalink]))
    assert response.status_code == 302 and response["Location"] == entry.get_absolute_url()
    reveal = RollReveal.objects.get(entry=entry)
    assert reveal.revealed_by == table.gm
    for user in (None, table.player, table.outsider):
        client = client_for(user)
        page = client.get(entry.get_absolute_url())
        assertContains(page, "Percepción oculta de Inés")
        assertContains(page, "Tirada secreta de la dirección.")
        assertContains(page, 'id="roll-revealed"')
        assertContains(client.get(table.scene.get_absolute_url()), "Percepción oculta de Inés")
        assertContains(client.get(table.scene.get_absolute_url()), "revelada el")


def test_a_revealed_roll_verifies_offline_with_the_same_bundle_format(table):
    entry = _secret(table)
    closed = client_for(table.player).get(reverse("rolls:roll-json", args=[entry.permalink])).json()
    assert closed["opening_b64"] is None
    assert _verify(closed).content is None
    secret.secret_roll_reveal(entry=entry, user=table.gm, access=campaign_access(table.gm, table.campaign))
    opened = client_for(None).get(reverse("rolls:roll-json", args=[entry.permalink])).json()
    assert opened["entry_b64"] == closed["entry_b64"]  # the same signed entry, now with its opening
    proof = _verify(opened)
    assert proof.content.entry["purpose"] == "Percepción oculta de Inés"


def test_only_the_gm_reveals_and_only_once(table):
    entry = _secret(table)
    url = reverse("hitos:secret-roll-reveal", args=[entry.permalink])
    assert client_for(table.player).post(url).status_code == 404  # they may not even see it
    assert client_for(table.outsider).post(url).status_code == 404
    assert client_for(table.gm).get(url).status_code == 405
    client_for(table.gm).post(url)
    assert client_for(table.player).post(url).status_code == 403  # now they see it, but may not reveal
    again = client_for(table.gm).post(url, follow=True)
    assertContains(again, "Esa tirada ya se reveló.")
    assert RollReveal.objects.filter(entry=entry).count() == 1


def test_a_public_roll_cannot_be_revealed(table):
    entry = roll(table)
    response = client_for(table.gm).post(reverse("hitos:secret-roll-reveal", args=[entry.permalink]), follow=True)
    assertContains(response, "Esa tirada no es una tirada secreta de la dirección.")
    assert not RollReveal.objects.exists()


def test_a_sealed_roll_needs_a_strong_browser_seed(table):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as caught:
        _secret(table, client_seed="corta")
    assert caught.value.messages == ["Una tirada privada necesita una semilla del navegador de al menos 32 caracteres."]
    server_made = _secret(table, client_seed=None)
    assert server_made.entry["client_seed_source"] == "server" and len(server_made.entry["client_seed"]) == 32


@pytest.mark.parametrize("n", [1, 6])
def test_the_scene_page_query_count_does_not_grow_with_secret_rolls(table, django_assert_max_num_queries, n):
    gm_access = campaign_access(table.gm, table.campaign)
    for _ in range(n):
        entry = secret.secret_free_roll(
            scene=table.scene, user=table.gm, notation="2d6", purpose="Tirada oculta", client_seed=client_seed()
        )
        secret.secret_roll_reveal(entry=entry, user=table.gm, access=gm_access)
    # Each visit marks the posts read; the second one is the steady page.
    for user, bound in ((table.gm, 18), (table.player, 19)):
        client = client_for(user)
        client.get(table.scene.get_absolute_url())
        with django_assert_max_num_queries(bound):
            response = client.get(table.scene.get_absolute_url())
        assert response.content.decode().count('class="secret-roll mb-2"') == n
