"""The campaign's roll log page: every roll and re-roll, filters, superseded versions."""

import re

import pytest
from pytest_django.asserts import assertContains, assertNotContains

from campaigns.models import Scene
from rolls import services
from sheets.models import Character
from systems.hitos import reading as hitos_reading
from tests.conftest import client_for
from tests.factories import client_seed, plain_read, roll

XSS = "<script>alert(1)</script>"


def _url(table, query: str = "") -> str:
    return f"/partidas/{table.campaign.slug}/tiradas/{query}"


def _rows(response) -> list[str]:
    """The seq numbers of the rows shown, in page order."""
    return re.findall(
        r'<tr id="roll-row-[a-z2-7]+"[^>]*>\s*<td><a href="[^"]+"[^>]*>#(\d+)</a>', response.content.decode()
    )


def _hitos(table, *, purpose="Reflejos + Sigilo: cruzar el jardín", **kwargs):
    kwargs.setdefault("client_seed", client_seed())
    kwargs.setdefault("character", table.character)
    kwargs.setdefault("scene", table.scene)
    entry, _ = hitos_reading.hitos_check_roll(
        campaign=table.campaign,
        user=table.player,
        purpose=purpose,
        modifier=8,
        difficulty=15,
        breakdown=[("Reflejos", 5), ("Sigilo", 3)],
        **kwargs,
    )
    return entry


def _reroll(parent, user, positions):
    return services.reroll_append(
        parent=parent, user=user, positions=positions, purpose="Aspecto", read=plain_read, client_seed=client_seed()
    )


def _split_scene(table) -> Scene:
    scene = Scene.objects.create(campaign=table.campaign, title="El sótano", everyone=False)
    scene.participants.add(table.other)
    return scene


def test_the_log_shows_every_roll_newest_first_to_an_anonymous_visitor(table):
    first = _hitos(table)
    second = roll(table, user=table.other, purpose="Buscar pistas")
    response = client_for(None).get(_url(table))
    assert response.status_code == 200
    assert "HX-Request" in response["Vary"].split(", ")
    assertContains(response, "<html")
    assertContains(response, "Más recientes primero")
    assert _rows(response) == [str(second.seq), str(first.seq)]
    game = first.signed_game
    outcome = "Éxito" if game["success"] else "Fallo"
    row = response.content.decode().split(f'id="roll-row-{first.permalink}"')[1].split("</tr>")[0]
    assert f'href="/r/{first.permalink}/"' in row
    assert "Ana · Inés Salcedo" in row
    assert "El vestíbulo" in row
    assert "Reflejos + Sigilo: cruzar el jardín" in row
    # The dice as the card shows them everywhere: as rolled, each with its letter.
    for die, label in zip(first.entry["dice"], game["labels"], strict=True):
        assert f'<span class="roll-die-value">{die}</span> <abbr class="roll-die-letter" title="' in row
        assert f'">{label}</abbr>' in row
    assert f"Total {game['total']}" in row
    assert outcome in row
    assert ("Crítico" in row) == bool(game["critical"])
    assert ("Pifia" in row) == bool(game["fumble"])


def test_a_free_roll_shows_its_expression_and_total(table):
    entry = services.free_roll(
        campaign=table.campaign, user=table.player, text="2d6+3", purpose="Daño", client_seed=client_seed()
    )
    response = client_for(table.player).get(_url(table))
    # The log's result column is the roll card (issue 7).
    assertContains(response, "<code>2d6+3</code>", html=False)
    assertContains(response, f"Resultado: {entry.signed_game['total']}", html=False)


def test_the_htmx_request_gets_only_the_rows_fragment(table):
    entry = roll(table)
    response = client_for(table.player).get(_url(table), headers={"HX-Request": "true"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html
    assert "<form" not in html
    assert html.lstrip().startswith('<div id="roll-rows" aria-live="polite">')
    assert _rows(response) == [str(entry.seq)]
    assert "HX-Request" in response["Vary"]


def test_a_history_restore_request_gets_the_whole_page(table):
    roll(table)
    response = client_for(table.player).get(
        _url(table), headers={"HX-Request": "true", "HX-History-Restore-Request": "true"}
    )
    assertContains(response, "<html")
    assertContains(response, 'id="roll-rows"')


def test_the_filter_form_works_without_htmx_and_with_it(table):
    response = client_for(table.player).get(_url(table))
    html = response.content.decode()
    form = html.split('<form method="get"')[1].split(">")[0]
    assert f'action="{_url(table)}"' in form
    assert f'data-hx-get="{_url(table)}"' in form
    assert 'data-hx-target="#roll-rows"' in form
    assert 'data-hx-push-url="true"' in form


def test_the_filters_narrow_by_scene_character_and_player(table):
    cellar = Scene.objects.create(campaign=table.campaign, title="La bodega")
    npc = Character.objects.create(
        campaign=table.campaign, owner=table.gm, name="El mayordomo", status=Character.Status.APPROVED
    )
    in_hall = roll(table, character=table.character)
    in_cellar = roll(table, scene=cellar, character=table.character)
    by_gm = roll(table, user=table.gm, character=npc)
    by_other = roll(table, user=table.other)
    client = client_for(table.gm)
    assert _rows(client.get(_url(table, f"?escena={cellar.pk}"))) == [str(in_cellar.seq)]
    assert _rows(client.get(_url(table, f"?escena={table.scene.pk}"))) == [
        str(by_other.seq),
        str(by_gm.seq),
        str(in_hall.seq),
    ]
    assert _rows(client.get(_url(table, f"?personaje={table.character.pk}"))) == [
        str(in_cellar.seq),
        str(in_hall.seq),
    ]
    assert _rows(client.get(_url(table, f"?jugador={table.other.pk}"))) == [str(by_other.seq)]
    both = client.get(_url(table, f"?escena={table.scene.pk}&jugador={table.player.pk}"))
    assert _rows(both) == [str(in_hall.seq)]
    assertContains(both, f'<option value="{table.scene.pk}" selected>El vestíbulo</option>', html=False)
    assertContains(both, f'<option value="{table.player.pk}" selected>Ana</option>', html=False)
    assertContains(both, f'<option value="{npc.pk}">El mayordomo</option>', html=False)


@pytest.mark.parametrize("query", ["?escena=vestibulo", "?personaje=²", "?jugador=99999999999999999999999"])
def test_a_filter_that_is_not_a_number_is_refused(table, query):
    response = client_for(table.player).get(_url(table, query))
    assert response.status_code == 400
    name = query[1:].split("=")[0]
    assert response.content.decode() == f"«{name}» debe ser un número."


def test_a_superseded_version_stays_visible_and_is_marked(table):
    original = _hitos(table)
    first = _reroll(original, table.player, [0, 2])
    final = _reroll(first, table.gm, [1])
    response = client_for(None).get(_url(table))
    assert _rows(response) == [str(final.seq), str(first.seq), str(original.seq)]
    html = response.content.decode()

    def row(entry):
        return " ".join(html.split(f'id="roll-row-{entry.permalink}"')[1].split("</tr>")[0].split())

    assert f"sustituida por #{first.seq}" in row(original)
    assert "roll-superseded" in row(original)
    assert f"repite los dados 1, 3 (de #{original.seq})" in row(first)
    assert f"sustituida por #{final.seq}" in row(first)
    assert f"repite los dados 2 (de #{first.seq})" in row(final)
    assert "sustituida" not in row(final)
    assert "La Directora" in row(final)


def test_rolls_of_a_hidden_split_party_scene_are_left_out_for_a_member_without_access(table):
    cellar = _split_scene(table)
    hidden = roll(table, scene=cellar, user=table.other, purpose="Forzar el candado")
    shown = roll(table)
    response = client_for(table.player).get(_url(table))
    assert _rows(response) == [str(shown.seq)]
    assertNotContains(response, "Forzar el candado")
    assertNotContains(response, "El sótano")
    # Filtering on the hidden scene by hand shows nothing either.
    assert _rows(client_for(table.player).get(_url(table, f"?escena={cellar.pk}"))) == []
    assert _rows(client_for(None).get(_url(table))) == [str(shown.seq)]
    for user in (table.gm, table.other):
        response = client_for(user).get(_url(table))
        assert _rows(response) == [str(shown.seq), str(hidden.seq)]
        assertContains(response, f'<option value="{cellar.pk}">El sótano</option>', html=False)


def test_a_private_campaign_log_is_for_members_only(private_table):
    entry = roll(private_table, purpose="Tirada secreta")
    for user in (None, private_table.outsider):
        assert client_for(user).get(_url(private_table)).status_code == 404
    for user in (private_table.reader, private_table.player, private_table.gm):
        response = client_for(user).get(_url(private_table))
        assert _rows(response) == [str(entry.seq)]
        assertContains(response, "Tirada secreta")


def test_an_unknown_campaign_is_404(db):
    assert client_for(None).get("/partidas/no-existe/tiradas/").status_code == 404


def test_the_log_refuses_post(table):
    assert client_for(table.player).post(_url(table)).status_code == 405


def test_untrusted_text_is_escaped(table):
    villain = Character.objects.create(
        campaign=table.campaign, owner=table.other, name=XSS, status=Character.Status.APPROVED
    )
    roll(table, user=table.other, character=villain, purpose=XSS)
    response = client_for(table.player).get(_url(table))
    assertNotContains(response, XSS)
    assertContains(response, "&lt;script&gt;alert(1)&lt;/script&gt;")


def test_the_log_is_paginated_by_fifty(table):
    entries = [roll(table) for _ in range(51)]
    client = client_for(table.player)
    first = client.get(_url(table, f"?jugador={table.player.pk}"))
    assert _rows(first) == [str(e.seq) for e in reversed(entries[1:])]
    assertContains(first, f'href="?jugador={table.player.pk}&amp;pagina=2"')
    assertContains(first, "Página 1 de 2")
    second = client.get(_url(table, f"?jugador={table.player.pk}&pagina=2"), headers={"HX-Request": "true"})
    assert _rows(second) == [str(entries[0].seq)]


@pytest.mark.parametrize("who", ["anonymous", "member", "gm"])
def test_the_number_of_queries_does_not_grow_with_the_rolls(table, who, django_assert_max_num_queries):
    user = {"anonymous": None, "member": table.player, "gm": table.gm}[who]
    client = client_for(user)
    _split_scene(table)
    previous = None
    for _ in range(3):
        previous = _hitos(table) if previous is None else _reroll(previous, table.player, [0])
    with django_assert_max_num_queries(20) as few:
        assert len(_rows(client.get(_url(table)))) == 3
    for _ in range(37):
        previous = _reroll(previous, table.player, [1])
    with django_assert_max_num_queries(len(few)):
        assert len(_rows(client.get(_url(table)))) == 40
