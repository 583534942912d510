"""The GM's Vaesen options (issue 15, item 4): who marks conditions, the NPC
penalty reading (V20), the initiative (V17) and the two critical injury
tables (V13, rules-spec Q16: data the GM types, empty by default), stored in
``Campaign.rules_options``; ``roll_injury`` names the injury from the
campaign's table. Access: outsiders 404, other members 403; refusals in
Spanish with nothing changed; the page's queries pinned."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from pytest_django.asserts import assertContains

from campaigns.models import Campaign
from rolls import rollog
from systems.vaesen.models import VaesenInjury
from systems.vaesen.options import tables
from systems.vaesen.rolls import services
from tests.factories import client_seed, make_scene

pytestmark = pytest.mark.django_db


def url(w) -> str:
    return reverse("vaesen:campaign-options", args=[w.campaign.slug])


def queue_d6(monkeypatch) -> list[list[int]]:
    """Queue the d6 pools the log draws next (``d6.append([6, 1])``); a
    push's re-roll draws as usual."""
    queue: list[list[int]] = []
    real = rollog.dice_for_spec
    drawn: dict = {}

    def draw(seed, message, spec):
        key = (seed, message)
        if key not in drawn:
            if spec.endswith("d6") and queue:
                drawn[key] = list(queue.pop(0))
                assert len(drawn[key]) == int(spec[:-2]), f"{spec} rolled, {drawn[key]} queued"
            else:
                drawn[key] = real(seed, message, spec)
        return list(drawn[key])

    monkeypatch.setattr(rollog, "dice_for_spec", draw)
    return queue


@pytest.fixture
def d6(monkeypatch):
    return queue_d6(monkeypatch)


def test_v13_tables_are_empty_by_default_and_parse_rows():
    campaign = Campaign(rules_options={})
    assert tables.injury_table(campaign, "físico") == []
    rows = tables.parse_table("11-16 | Costilla rota | −1 a Agilidad | un día\n\n21 | Conmoción\n")
    assert [(r.low, r.high, r.name, r.effect, r.time_limit) for r in rows] == [
        (11, 16, "Costilla rota", "−1 a Agilidad", "un día"),
        (21, 21, "Conmoción", "", ""),
    ]
    assert tables.table_text(rows) == "11-16 | Costilla rota | −1 a Agilidad | un día\n21 | Conmoción"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("17 | Nada", "no es un resultado de d66"),
        ("70 | Nada", "no es un resultado de d66"),
        ("16-11 | Al revés", "va al revés"),
        ("11 |", "falta el nombre"),
        ("11-16 | A\n15 | B", "se solapa"),
        ("solo texto", "escribe «valores | nombre | efecto | plazo»"),
    ],
)
def test_v13_table_refusals_are_spanish(text, message):
    with pytest.raises(ValidationError) as caught:
        tables.parse_table(text)
    assert message in " ".join(caught.value.messages)


def test_gm_saves_the_options_and_the_tables(vaesen_world):
    w = vaesen_world
    gm = w.client("gm")
    page = gm.get(url(w))
    assert page.status_code == 200
    assertContains(page, "Opciones de Vaesen")
    response = gm.post(
        url(w),
        {
            "players_mark_own_conditions": "on",
            "npc_penalty": "siguiente_prueba",
            "initiative_mode": "cartas",
            "injuries_physical": "11-16 | Costilla rota | −1 a Agilidad | un día",
            "injuries_mental": "11-66 | Pesadillas",
        },
    )
    assert response.status_code == 302
    w.campaign.refresh_from_db()
    options = w.campaign.rules_options
    assert options["players_mark_own_conditions"] is True
    assert tables.npc_penalty(w.campaign).value == "siguiente_prueba"
    assert tables.initiative_mode(w.campaign).value == "cartas"
    assert tables.injury_for(w.campaign, "físico", 14).name == "Costilla rota"
    assert tables.injury_for(w.campaign, "físico", 21) is None
    assert tables.injury_for(w.campaign, "mental", 45).name == "Pesadillas"
    # The form shows the stored rows back.
    assertContains(gm.get(url(w)), "11-16 | Costilla rota | −1 a Agilidad | un día")


def test_a_bad_table_is_refused_nothing_changed_and_the_text_kept(vaesen_world):
    w = vaesen_world
    w.campaign.rules_options = {"kept": 1}
    w.campaign.save(update_fields=["rules_options"])
    response = w.client("gm").post(
        url(w),
        {"npc_penalty": "cada_prueba", "initiative_mode": "d10", "injuries_physical": "11-16 | A\n99 | Mala"},
    )
    assert response.status_code == 200
    assertContains(response, "Línea 2: «99» no es un resultado de d66")
    assertContains(response, "99 | Mala")
    w.campaign.refresh_from_db()
    assert w.campaign.rules_options == {"kept": 1}


def test_access_outsider_404_member_403_htmx_partial(vaesen_world, django_assert_max_num_queries):
    w = vaesen_world
    private = w.campaign
    private.visibility = "private"
    private.save(update_fields=["visibility"])
    assert w.client("outsider").get(url(w)).status_code == 404
    assert w.client("player").get(url(w)).status_code == 403
    assert w.client("player").post(url(w), {"npc_penalty": "cada_prueba"}).status_code == 403
    gm = w.client("gm")
    with django_assert_max_num_queries(8):
        full = gm.get(url(w))
    assertContains(full, "<html", html=False)
    partial = gm.get(url(w), headers={"HX-Request": "true"})
    assert partial.status_code == 200
    assert b"<html" not in partial.content
    assertContains(partial, 'id="opciones-vaesen"')


def test_v13_roll_injury_takes_name_effect_and_limit_from_the_campaign_table(vaesen_world, d6):
    w = vaesen_world
    w.campaign.rules_options = {"injuries_physical": [[11, 16, "Costilla rota", "−1 a Agilidad", "un día"]]}
    w.campaign.save(update_fields=["rules_options"])
    scene = make_scene(w.campaign)
    d6.append([1, 1, 1])
    table_roll = services.table_test(
        campaign=w.campaign,
        user=w.player,
        setup=services.pool_setup(w.pc, attribute="físico"),
        purpose="Saltar",
        character=w.pc,
        scene=scene,
        client_seed=client_seed(),
    )
    table_roll.facts = {**table_roll.facts, "broken": True}
    table_roll.save(update_fields=["facts"])
    d6.append([1, 4])
    services.roll_injury(table_roll=table_roll, user=w.player, is_gm=False, client_seed=client_seed())
    injury = VaesenInjury.objects.get(sheet=w.pc.vaesen)
    assert (injury.roll, injury.name, injury.effect, injury.time_limit) == (
        14,
        "Costilla rota",
        "−1 a Agilidad",
        "un día",
    )


def test_the_dashboard_link_is_offered_for_vaesen_campaigns_only(vaesen_world, play):
    from campaigns.permissions import campaign_access
    from systems.vaesen.options.pages import dashboard

    w = vaesen_world
    added = dashboard(None, campaign_access(w.gm, w.campaign))
    assert added.links == [("Opciones de Vaesen", url(w))]
    assert dashboard(None, campaign_access(play.gm, play.campaign)) is None
