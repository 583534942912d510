"""Opposed rolls at the table (H9): the service and its page."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from pytest_django.asserts import assertContains, assertNotContains

from campaigns.models import Scene
from rolls.models import RollEntry
from rules import hitos
from systems.hitos.checks.services import table_result
from systems.hitos.models import OpposedRoll, TableRollKind
from systems.hitos.opposed import services as opposed
from tests.conftest import client_for
from tests.factories import client_seed


def _start(play, *, tie_allowed=False, purpose="Pulso en la mesa", **kwargs):
    return opposed.opposed_start(
        scene=play.scene,
        actor=kwargs.pop("actor", play.gm),
        purpose=purpose,
        tie_allowed=tie_allowed,
        first=kwargs.pop("first", (play.ines, "reflejos", "Combate", ())),
        second=kwargs.pop("second", (play.tomas, "reflejos", "Sigilo", (("Herido en el brazo", -1),))),
        **kwargs,
    )


def _url(play, name="hitos:opposed"):
    return reverse(name, args=[play.campaign.slug, play.scene.pk])


# --- the service ---------------------------------------------------------------------------


def test_h9_both_roll_through_the_log_and_the_higher_total_wins(play):
    row = _start(play, client_seed=client_seed())
    assert row.first.kind == row.second.kind == TableRollKind.OPPOSED
    assert (row.first.character, row.second.character) == (play.ines, play.tomas)
    # The GM rolls (the log says so); each player answers for their character's roll.
    assert row.first.first.user == row.second.first.user == play.gm
    assert (row.first.owner, row.second.owner) == (play.ana, play.bruno)
    assert row.first.facts["modifier"] == 6 + 4
    assert row.second.facts["modifier"] == 6 + 3 - 1
    assert row.first.difficulty is None
    assert row.first.first.signed_game["breakdown"] == [["Reflejos", 6], ["Combate", 4]]
    assert row.first.first.purpose == "Pulso en la mesa — Inés Salcedo"
    chain = opposed.opposed_chain(row)
    expected = hitos.opposed(table_result(chain[-1].first), table_result(chain[-1].second), tie_allowed=False)
    assert chain[-1].outcome == expected.value
    assert expected in (hitos.Opposed.FIRST, hitos.Opposed.SECOND)
    assert opposed.opposed_outcome(row) is expected


def test_h9_winner_by_fixed_dice(play, fixed_dice):
    fixed_dice.extend([[3, 5, 8], [4, 9, 9]])  # Inés 10 + 5 = 15; Tomás 8 + 9 = 17
    row = _start(play)
    assert row.outcome == "second"
    assert opposed.opposed_outcome(row) is hitos.Opposed.SECOND
    assert opposed.opposed_chain(row) == [row]


def test_h9_a_tie_not_allowed_is_settled_by_linked_new_rolls(play, fixed_dice):
    # Inés 10 + 5 = 15; Tomás 8 + 7 = 15: a tie; then again 15 / 15; then Inés wins.
    fixed_dice.extend([[3, 5, 8], [2, 7, 9], [5, 5, 1], [7, 7, 7], [9, 9, 9], [1, 2, 3]])
    row = _start(play)
    chain = opposed.opposed_chain(row)
    assert [r.outcome for r in chain] == ["reroll", "reroll", "first"]
    assert chain[1].tiebreak_of == chain[0] and chain[2].tiebreak_of == chain[1]
    assert chain[2].first.first.purpose == "Pulso en la mesa — Inés Salcedo (desempate 2)"
    assert opposed.opposed_outcome(chain) is hitos.Opposed.FIRST
    assert opposed.opposed_outcome(row) is hitos.Opposed.FIRST
    assert RollEntry.objects.filter(purpose__startswith="Pulso en la mesa").count() == 6


def test_h9_a_forced_tie_by_the_comparison_also_rerolls(play, monkeypatch):
    calls = iter([hitos.Opposed.REROLL])
    real = hitos.opposed
    monkeypatch.setattr(
        hitos, "opposed", lambda a, b, *, tie_allowed: next(calls, None) or real(a, b, tie_allowed=tie_allowed)
    )
    row = _start(play)
    chain = opposed.opposed_chain(row)
    assert len(chain) >= 2 and chain[0].outcome == "reroll"
    assert chain[-1].outcome in ("first", "second")


def test_h9_a_tie_allowed_stands(play, fixed_dice):
    fixed_dice.extend([[3, 5, 8], [2, 7, 9]])
    row = _start(play, tie_allowed=True)
    assert row.outcome == "tie"
    assert opposed.opposed_chain(row) == [row]
    assert opposed.opposed_outcome(row) is hitos.Opposed.TIE


def test_ties_are_bounded(play, monkeypatch):
    monkeypatch.setattr(hitos, "opposed", lambda a, b, *, tie_allowed: hitos.Opposed.REROLL)
    row = _start(play)
    assert len(opposed.opposed_chain(row)) == opposed.MAX_ROUNDS


def test_the_same_client_seed_returns_the_same_opposed_roll(play):
    seed = client_seed()
    row = _start(play, client_seed=seed)
    again = _start(play, client_seed=seed)
    assert again == row
    # One opposed roll (with its tie-break rounds, if the dice tied).
    assert OpposedRoll.objects.filter(tiebreak_of=None).count() == 1
    assert row.first.first.entry["client_seed"] == seed
    assert row.second.first.entry["client_seed"] == f"{seed}-0b"


def test_only_the_gm_starts_and_choices_are_checked(play):
    with pytest.raises(PermissionDenied):
        _start(play, actor=play.ana)
    with pytest.raises(ValidationError, match="dos personajes distintos"):
        _start(play, second=(play.ines, "reflejos", "", ()))
    with pytest.raises(ValidationError, match="qué se disputan"):
        _start(play, purpose="   ")
    with pytest.raises(ValidationError, match="no tiene la habilidad"):
        _start(play, first=(play.ines, "reflejos", "Vuelo", ()))
    assert not OpposedRoll.objects.exists()
    assert _start(play, second=(play.npc, "fortaleza", "", ())).second.character == play.npc


# --- the page --------------------------------------------------------------------------------


def _form(play, **changes):
    data = {
        "purpose": "Echar un pulso",
        "primero_personaje": str(play.ines.pk),
        "primero_caracteristica": "fortaleza",
        "primero_habilidad": "Combate",
        "primero_modificador": "2",
        "primero_motivo": "Apoyo en la mesa",
        "segundo_personaje": str(play.tomas.pk),
        "segundo_caracteristica": "fortaleza",
        "segundo_habilidad": "",
        "segundo_modificador": "",
        "segundo_motivo": "",
        "client_seed": client_seed(),
    }
    data.update(changes)
    return data


def test_gm_starts_an_opposed_roll_through_the_form(play):
    response = client_for(play.gm).post(_url(play, "hitos:opposed-start"), _form(play))
    assert response.status_code == 302 and response["Location"] == _url(play)
    row = OpposedRoll.objects.get(tiebreak_of=None)
    assert row.purpose == "Echar un pulso" and row.tie_allowed is False
    assert row.first.first.signed_game["breakdown"] == [["Fortaleza", 5], ["Combate", 4], ["Apoyo en la mesa", 2]]
    assert row.second.facts["modifier"] == 5


def test_htmx_start_reloads_the_page_and_errors_come_back_in_the_board(play):
    client = client_for(play.gm)
    response = client.post(
        _url(play, "hitos:opposed-start"),
        _form(play, segundo_personaje=str(play.ines.pk)),
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    assertContains(response, "Una tirada enfrentada necesita dos personajes distintos.")
    assertContains(response, 'value="Echar un pulso"')
    assertNotContains(response, "<html")
    response = client.post(
        _url(play, "hitos:opposed-start"), _form(play, segundo_habilidad="Sigilo"), headers={"HX-Request": "true"}
    )
    assert response["HX-Redirect"] == _url(play)
    assert OpposedRoll.objects.filter(tiebreak_of=None).count() == 1


def test_page_shows_both_cards_the_winner_and_the_tiebreaks(play, fixed_dice):
    fixed_dice.extend([[3, 5, 8], [2, 7, 9], [9, 9, 9], [1, 2, 3]])
    _start(play)
    response = client_for(play.reader).get(_url(play))
    assertContains(response, "Gana Inés Salcedo")
    assertContains(response, "Desempate 1")
    assertContains(response, 'class="roll-card card', count=4)
    assertContains(response, "La acción no admite empate.")
    assertNotContains(response, "Nueva tirada enfrentada")


def test_page_shows_a_tie_that_stands(play, fixed_dice):
    fixed_dice.extend([[3, 5, 8], [2, 7, 9]])
    _start(play, tie_allowed=True)
    response = client_for(play.ana).get(_url(play))
    assertContains(response, ">Empate<")
    assertContains(response, "La acción admite empate.")


def test_gm_sees_the_form_and_htmx_gets_the_board(play):
    response = client_for(play.gm).get(_url(play))
    assertContains(response, "Nueva tirada enfrentada")
    assertContains(response, "<html", count=1)
    response = client_for(play.gm).get(_url(play), headers={"HX-Request": "true"})
    assertContains(response, 'id="opposed-board"')
    assertNotContains(response, "<html")
    assert "HX-Request" in response["Vary"]


@pytest.mark.parametrize("who", ["ana", "reader"])
def test_members_who_are_not_the_gm_cannot_start(play, who):
    response = client_for(getattr(play, who)).post(_url(play, "hitos:opposed-start"), _form(play))
    assert response.status_code == 403
    assert not OpposedRoll.objects.exists()


def test_outsiders_and_hidden_scenes_get_404(private_play):
    play = private_play
    assert client_for(play.outsider).get(_url(play)).status_code == 404
    assert client_for(None).get(_url(play)).status_code == 404
    assert client_for(play.outsider).post(_url(play, "hitos:opposed-start"), _form(play)).status_code == 404
    secret = Scene.objects.create(campaign=play.campaign, title="Sótano", everyone=False)
    url = reverse("hitos:opposed", args=[play.campaign.slug, secret.pk])
    assert client_for(play.ana).get(url).status_code == 404
    assert client_for(play.reader).get(_url(play)).status_code == 200


def test_start_is_post_only(play):
    assert client_for(play.gm).get(_url(play, "hitos:opposed-start")).status_code == 405


def test_purpose_is_escaped(play):
    _start(play, purpose="<script>alert(1)</script>")
    response = client_for(play.ana).get(_url(play))
    assertNotContains(response, "<script>alert(1)</script>")
    assertContains(response, "&lt;script&gt;alert(1)&lt;/script&gt;")


@pytest.mark.parametrize("who", ["anonymous", "ana", "gm"])
def test_queries_do_not_grow_with_the_opposed_rolls(play, who, django_assert_max_num_queries, fixed_dice):
    user = {"anonymous": None, "ana": play.ana, "gm": play.gm}[who]
    client = client_for(user)
    # One tie-break in the first roll, so the page walks one level of chains.
    fixed_dice.extend([[3, 5, 8], [2, 7, 9], [9, 9, 9], [1, 2, 3]])
    _start(play)
    with django_assert_max_num_queries(30) as few:
        assert client.get(_url(play)).status_code == 200
    fixed_dice.extend([[9, 9, 9], [1, 2, 3]] * 6)
    for _ in range(6):
        _start(play)
    with django_assert_max_num_queries(len(few)):
        response = client.get(_url(play))
    assertContains(response, 'class="roll-card card', count=2 * 2 + 6 * 2)


def _tie_once(monkeypatch):
    """The next reading of a round is a tie the action does not allow."""
    real = hitos.opposed
    calls = []

    def fake(first, second, *, tie_allowed):
        if not calls:
            calls.append(1)
            return hitos.Opposed.REROLL
        return real(first, second, tie_allowed=tie_allowed)

    monkeypatch.setattr("rules.hitos.opposed", fake)


def test_a_reroll_that_ties_the_round_rolls_a_linked_tiebreak(play, monkeypatch):
    from systems.hitos.checks.services import table_reroll

    row = _start(play, tie_allowed=False)
    last = opposed.opposed_chain(row)[-1]
    _tie_once(monkeypatch)
    # Every re-roll reads the round again (systems.hitos.checks.services.table_reroll calls opposed.after_reroll).
    table_reroll(last.first, user=play.gm, positions=[0], reading=hitos.Reading.POSITIVE, activation="positive")
    last.refresh_from_db()
    assert last.outcome == hitos.Opposed.REROLL.value
    tiebreak = OpposedRoll.objects.get(tiebreak_of=last)
    # The tie-break may tie again (then another round follows): the last round decides.
    final = opposed.opposed_chain(tiebreak)[-1]
    assert final.outcome in (hitos.Opposed.FIRST.value, hitos.Opposed.SECOND.value)
    # The tie-break repeats what each side rolled.
    assert tiebreak.first.facts["modifier"] == last.first.facts["modifier"] and tiebreak.second.character == play.tomas
    assert "desempate" in tiebreak.first.first.purpose


def test_aspects_act_only_on_the_last_round(play, monkeypatch):
    from systems.hitos.activations import services as activations

    _tie_once(monkeypatch)
    row = _start(play, tie_allowed=False)
    assert not opposed.is_last_round(row.first)
    # (The tie-break may tie again by chance: the chain's last round is the one that counts.)
    assert opposed.is_last_round(opposed.opposed_chain(row)[-1].first)
    with pytest.raises(ValidationError, match="última ronda"):
        activations.activate_negative(
            table_roll=row.first, user=play.bruno, aspect_choice=f"s{play.scene_aspect.pk}", positions=[0]
        )
