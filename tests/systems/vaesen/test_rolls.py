"""Vaesen tests in posts (issue 15, items 2 and 6): the post form's row, its
dice count and exact chance before publishing (V1, V4, V5, V9, V15, V16), the
signed entry that says "vaesen" and verifies offline, the GM's free pool, and
Broken by physical harm (V11): refused, nothing rolled."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.template.defaultfilters import floatformat
from django.urls import reverse
from django.utils import translation
from pytest_django.asserts import assertContains, assertNotContains

from campaigns.models import Post
from rolls.models import RollEntry
from rules import vaesen
from systems.vaesen.models import VaesenItem
from table.models import TableRoll
from tests.conftest import client_for
from tests.factories import client_seed, make_scene

pytestmark = pytest.mark.django_db


@pytest.fixture
def scene(vaesen_campaign):
    return make_scene(vaesen_campaign, title="El molino de noche")


def _row(i: int, **fields) -> dict[str, str]:
    return {f"tirada-{i}-{name}": str(value) for name, value in fields.items()}


def _form(character, *, body="Me acerco al molino sin hacer ruido.", **extra) -> dict[str, str]:
    data = {
        "voice": f"character:{character.pk}",
        "body": body,
        "recipients": "all",
        "submission_key": client_seed(),
    }
    data.update(extra)
    return data


def _percent(dice: int, needed: int = 1, *, push: bool = False) -> str:
    with translation.override("es"):
        return floatformat(float(vaesen.success_probability(dice, needed, push=push) * 100), 1)


def _chance(client, scene, character, **row):
    url = reverse("table:post-roll-chance", args=[scene.campaign.slug, scene.pk])
    return client.get(url, {"fila": "0", "voice": f"character:{character.pk}", **_row(0, **row)})


def _publish(client, scene, character, **row):
    url = reverse("table:post-create", args=[scene.campaign.slug, scene.pk])
    return client.post(url, _form(character, **_row(0, client_seed=client_seed(), **row)))


# --- the form and the chance before rolling --------------------------------------------------


def test_the_post_form_offers_vaesen_rows_with_the_characters_equipment(scene, vaesen_player, vaesen_pc):
    """V1, V16 — attribute, skill, help, the sheet's equipment, modifier, successes needed."""
    response = client_for(vaesen_player).get(scene.get_absolute_url())
    html = response.content.decode()
    assert html.count("<summary>Añadir tirada") == 3
    for name in ("attribute", "skill", "helpers", "item", "modifier", "needed", "purpose", "client_seed"):
        assert f'name="tirada-0-{name}"' in html, name
    assertContains(response, "Ganzúas (+1)")
    # A player rolls no free pool and no NPC.
    assert 'name="tirada-0-free_pool"' not in html and 'name="tirada-0-npc"' not in html


def test_the_gm_gets_a_free_pool_and_the_npcs(scene, vaesen_gm, vaesen_npc):
    response = client_for(vaesen_gm).get(scene.get_absolute_url())
    html = response.content.decode()
    assert 'name="tirada-0-free_pool"' in html and 'name="tirada-0-npc"' in html
    assertContains(response, "El molinero")


def test_the_chance_counts_attribute_skill_help_equipment_and_modifier(scene, vaesen_player, vaesen_pc):
    """V1 Precisión 4 + Sigilo 3, V15 two helpers +2, V16 lockpicks +1, V5 −1:
    9 dice; V3 two successes needed: the exact chance from the rules."""
    item = VaesenItem.objects.get(sheet=vaesen_pc.vaesen, name="Ganzúas")
    response = _chance(
        client_for(vaesen_player),
        scene,
        vaesen_pc,
        skill="Sigilo",
        helpers=2,
        item=item.pk,
        modifier=-1,
        needed=2,
    )
    assert response.status_code == 200
    assertContains(response, f"Probabilidad de éxito: {_percent(9, 2)} %")
    assertContains(response, "Precisión 4, Sigilo +3, Ganzúas +1, Ayuda (2) +2, Modificador -1")
    assertContains(response, "9 dados")
    assertContains(response, "hacen falta 2 éxitos")
    # V6 — what pushing after a failure would give.
    assertContains(response, f"Forzando tras un fallo: {_percent(9, 2, push=True)} %")


def test_help_counts_three_helpers_at_most(scene, vaesen_player, vaesen_pc):
    """V15 — +1 per helper, up to +3; the form takes no more than three."""
    response = _chance(client_for(vaesen_player), scene, vaesen_pc, attribute="lógica", helpers=3)
    assertContains(response, f"Probabilidad de éxito: {_percent(6)} %")
    response = _chance(client_for(vaesen_player), scene, vaesen_pc, attribute="lógica", helpers=4)
    assertContains(response, "Escribe un número de 3 o menos.")


def test_a_skill_of_zero_rolls_the_attribute_alone_and_conditions_cost_dice(scene, vaesen_player, vaesen_pc):
    """V4 — Observación 0: Empatía 2 alone; V9 — two mental conditions, one die
    less each, but at least one die; physical ones do not count."""
    sheet = vaesen_pc.vaesen
    sheet.mental_conditions = ["Irritado", "Asustado"]
    sheet.physical_conditions = ["Herido"]
    sheet.save()
    response = _chance(client_for(vaesen_player), scene, vaesen_pc, skill="Observación")
    assertContains(response, f"Probabilidad de éxito: {_percent(1)} %")
    assertContains(response, "Empatía 2, Observación +0, Estados: Irritado, Asustado -2")
    assertContains(response, "siempre se tira al menos uno")


def test_a_skill_of_another_attribute_is_refused_in_spanish(scene, vaesen_player, vaesen_pc):
    response = _chance(client_for(vaesen_player), scene, vaesen_pc, attribute="lógica", skill="Sigilo")
    assertContains(response, "Sigilo se tira con Precisión.")


def test_equipment_for_another_skill_is_refused(scene, vaesen_player, vaesen_pc):
    """V16 — the lockpicks help with Sigilo, not with Agilidad."""
    item = VaesenItem.objects.get(sheet=vaesen_pc.vaesen, name="Ganzúas")
    response = _chance(client_for(vaesen_player), scene, vaesen_pc, skill="Agilidad", item=item.pk)
    assertContains(response, "Ganzúas sirve para Sigilo.")


# --- publishing ---------------------------------------------------------------------------


def test_a_post_with_a_vaesen_roll_signs_the_test_and_verifies(scene, vaesen_player, vaesen_pc):
    """V1, V2, V3 — the entry's signed game says "vaesen", the pool, the
    attribute, the skill, the successes and the verdict the rules give; the
    log verifies offline (manage.py verify_rolls)."""
    response = _publish(
        client_for(vaesen_player), scene, vaesen_pc, skill="Sigilo", helpers=1, needed=2, purpose="Entrar a escondidas"
    )
    assert response.status_code == 302
    table_roll = TableRoll.objects.get()
    entry = table_roll.first
    signed = entry.entry
    game = signed["game"]
    assert signed["spec"] == "8d6" and len(signed["dice"]) == 8
    test = vaesen.PoolRoll(tuple(signed["dice"]), needed=2)
    assert game == {
        "system": "vaesen",
        "what": "Precisión + Sigilo",
        "attribute": "precisión",
        "skill": "Sigilo",
        "kind": "físico",
        "breakdown": [["Precisión", 4], ["Sigilo", 3], ["Ayuda (1)", 1]],
        "needed": 2,
        "pool": 8,
        "successes": test.successes,
        "extra_successes": test.extra_successes,
        "success": test.succeeded,
        "pushed": False,
    }
    assert entry.character_id == vaesen_pc.pk and entry.post_id == table_roll.post_id
    assert table_roll.owner_id == vaesen_player.pk
    out = StringIO()
    call_command("verify_rolls", "--campaign", scene.campaign.slug, stdout=out, no_color=True)
    assert out.getvalue().startswith(f"OK  {scene.campaign.slug}:")


def test_the_post_shows_the_card_with_each_die_and_the_verdict(scene, vaesen_player, vaesen_pc):
    """V2 — each 6 marked as a success; the successes and the verdict in words."""
    _publish(client_for(vaesen_player), scene, vaesen_pc, attribute="físico", purpose="Empujar la rueda")
    entry = TableRoll.objects.get().first
    dice = entry.entry["dice"]
    response = client_for(vaesen_player).get(scene.get_absolute_url())
    html = response.content.decode()
    assert html.count('class="roll-card card') == 1
    assert html.count('class="list-inline-item roll-die') == len(dice)
    assert html.count("roll-die-counts") == dice.count(6)
    successes = dice.count(6)
    assert (f"{successes} éxito" if successes == 1 else f"{successes} éxitos") in html
    assert ("Éxito" if successes else "Fallo") in html


def test_a_whispered_roll_is_sealed(scene, vaesen_player, vaesen_gm, vaesen_pc):
    """Issue 15, item 6 — a roll in a post to the GM alone is sealed like HITOS's."""
    url = reverse("table:post-create", args=[scene.campaign.slug, scene.pk])
    data = _form(
        vaesen_pc, recipients="gm", **_row(0, attribute="lógica", purpose="Recordar", client_seed=client_seed())
    )
    assert client_for(vaesen_player).post(url, data).status_code == 302
    entry = TableRoll.objects.get().first
    assert entry.is_sealed and entry.audience


def test_the_gm_rolls_a_free_pool(scene, vaesen_gm):
    """The GM's free pool: N dice, no sheet; it cannot be pushed (no attribute, V7)."""
    url = reverse("table:post-create", args=[scene.campaign.slug, scene.pk])
    data = {
        "voice": "ooc",
        "body": "El río crece.",
        "recipients": "all",
        "submission_key": client_seed(),
        **_row(0, free_pool=5, purpose="Crecida", client_seed=client_seed()),
    }
    response = client_for(vaesen_gm).post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    table_roll = TableRoll.objects.get()
    game = table_roll.first.signed_game
    assert table_roll.first.entry["spec"] == "5d6"
    assert game["attribute"] == "" and game["kind"] == "" and game["breakdown"] == [["Reserva libre", 5]]
    assert table_roll.facts["can_push"] is False


def test_the_gm_rolls_for_an_npc_with_resistance_lost(scene, vaesen_gm, vaesen_npc):
    """V20 (Q18 default) — a human NPC loses one die per Resistencia point lost."""
    vaesen_npc.vaesen.resistance_lost = 1
    vaesen_npc.vaesen.save()
    url = reverse("table:post-create", args=[scene.campaign.slug, scene.pk])
    data = {
        "voice": "ooc",
        "body": "El molinero empuja.",
        "recipients": "all",
        "submission_key": client_seed(),
        **_row(0, npc=vaesen_npc.pk, skill="Fuerza", purpose="Empujar", client_seed=client_seed()),
    }
    assert client_for(vaesen_gm).post(url, data).status_code == 302
    entry = TableRoll.objects.get().first
    assert entry.entry["spec"] == "5d6"
    assert entry.signed_game["breakdown"] == [["Físico", 4], ["Fuerza", 2], ["Resistencia perdida", -1]]


def test_a_physically_broken_character_rolls_nothing(scene, vaesen_player, vaesen_pc):
    """V11 — Broken by physical harm, every test fails by itself: the form
    says so in Spanish before publishing, and publishing rolls nothing and
    publishes nothing (the log cannot hold a roll without dice)."""
    sheet = vaesen_pc.vaesen
    sheet.physical_conditions = ["Exhausto", "Magullado", "Herido"]
    sheet.broken_physical = True
    sheet.save()
    message = "Elsa está «Derrotado» por daño físico: falla automáticamente cualquier prueba"
    assertContains(_chance(client_for(vaesen_player), scene, vaesen_pc, attribute="físico"), message)
    response = _publish(client_for(vaesen_player), scene, vaesen_pc, attribute="físico", purpose="Levantarme")
    assertContains(response, message)
    assertContains(response, "Me acerco al molino sin hacer ruido.")  # what was typed comes back
    assert not RollEntry.objects.filter(kind=RollEntry.Kind.ROLL).exists()
    assert not Post.objects.filter(scene=scene).exists()
    assertNotContains(response, "roll-card card")
