"""HITOS re-rolls drawn with the player's browser seed, safe against retries
(issue 18, item 1): every activation that re-rolls from a page carries the
seed its form sent (``client_seed_source`` "browser", rollog/v1 §3.3), and
that seed is the idempotency key: the same form sent again shows what the
first request did, with one entry, one point paid, one activation and one
line in the sheet's history. Without JavaScript the server makes the seed,
as before."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from campaigns import extensions
from campaigns.models import Deadline
from rolls.models import RollEntry
from sheets.models import SheetEvent
from systems.hitos.activations import services as activations
from systems.hitos.campaign import gm_pool
from systems.hitos.checks.services import check_setup, table_check
from systems.hitos.models import Activation, HitosEvent, OpposedRoll, TableRollKind
from systems.hitos.opposed import services as opposed
from table.models import TableRoll
from tests.conftest import client_for
from tests.factories import client_seed

HTMX = {"HTTP_HX_REQUEST": "true"}
USED = "Esa semilla ya se usó en otra tirada."


def roll_for(play, *, scene=True) -> TableRoll:
    return table_check(
        campaign=play.campaign,
        user=play.ana,
        setup=check_setup(play.ines, characteristic="reflejos", skill="Sigilo"),
        purpose="Cruzar el vestíbulo sin ruido",
        difficulty=15,
        character=play.ines,
        scene=play.scene if scene else None,
        post=play.post if scene else None,
        client_seed=client_seed(),
    )


def counts() -> dict[str, int]:
    """What a retry must not add to: the log, the drama history, the
    activations, the sheets' history of any kind."""
    return {
        "entries": RollEntry.objects.count(),
        "rerolls": RollEntry.objects.filter(kind=RollEntry.Kind.REROLL).count(),
        "drama": SheetEvent.objects.filter(kind=HitosEvent.DRAMA).count(),
        "events": SheetEvent.objects.count(),
        "activations": Activation.objects.count(),
    }


def points(play) -> tuple[int, int, int]:
    play.ines.refresh_from_db()
    play.tomas.refresh_from_db()
    play.campaign.refresh_from_db()
    return play.ines.hitos.drama_points, play.tomas.hitos.drama_points, gm_pool(play.campaign)


def positive_url(roll) -> str:
    return reverse("hitos:activation-positive", args=[roll.pk])


def positive_data(play, seed: str, payment: str = "point") -> dict:
    return {"aspect": f"a{play.ines_aspect.pk}", "payment": payment, "dice": ["0", "2"], "client_seed": seed}


def negative(play, roll) -> Activation:
    return activations.activate_negative(
        table_roll=roll, user=play.gm, aspect_choice=f"a{play.ines_aspect.pk}", positions=[0, 1]
    )


def answer_url(activation) -> str:
    return reverse("hitos:activation-answer", args=[activation.pk])


def settle_url(activation) -> str:
    return reverse("hitos:activation-settle", args=[activation.pk])


def later(monkeypatch) -> None:
    moment = timezone.now() + timedelta(hours=49)
    monkeypatch.setattr(timezone, "now", lambda: moment)


# --- Positive activation ------------------------------------------------------------------------


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "full page"])
def test_a_positive_activation_rerolls_with_the_forms_seed_and_a_retry_pays_once(play, htmx):
    roll = roll_for(play)
    seed = client_seed()
    client = client_for(play.ana)
    headers = HTMX if htmx else {}
    first = client.post(positive_url(roll), positive_data(play, seed), **headers)
    roll.refresh_from_db()
    entry = roll.latest
    assert (entry.kind, entry.client_seed, entry.entry["client_seed_source"]) == ("reroll", seed, "browser")
    assert entry.entry["client_seed"] == seed and entry.entry["client_seed_source"] == "browser"
    after_first, paid = counts(), points(play)
    assert paid[0] == 2
    again = client.post(positive_url(roll), positive_data(play, seed), **headers)
    assert counts() == after_first
    assert points(play) == paid
    assert Activation.objects.get().reroll == entry
    assert again.status_code == first.status_code
    if htmx:
        # The same card as the first answer: the re-rolled dice, no form error.
        assert again.status_code == 200
        html = again.content.decode()
        assert f'id="tirada-{roll.pk}"' in html and "HX-Retarget" not in again
        for die in entry.entry["dice"]:
            assert f'<span class="roll-die-value">{die}</span>' in html
    else:
        assert again.status_code == 302 and again.url == first.url == play.post.get_absolute_url()


def test_a_retry_after_exhausting_the_aspect_still_shows_the_first_result(play):
    # The aspect paid for is exhausted by the first request: the form would
    # no longer offer it, yet a retry is the same activation, not an error.
    roll = roll_for(play)
    seed = client_seed()
    client = client_for(play.ana)
    before = counts()
    assert client.post(positive_url(roll), positive_data(play, seed, "exhaust"), **HTMX).status_code == 200
    after_first = counts()
    assert after_first["events"] == before["events"] + 1  # the aspect's SheetEvent
    again = client.post(positive_url(roll), positive_data(play, seed, "exhaust"), **HTMX)
    assert again.status_code == 200 and "HX-Retarget" not in again
    assert counts() == after_first
    play.ines_aspect.refresh_from_db()
    assert play.ines_aspect.exhausted


def test_the_service_returns_the_same_activation_for_the_same_seed(play):
    roll = roll_for(play)
    seed = client_seed()
    kwargs = {"user": play.ana, "aspect_choice": f"s{play.scene_aspect.pk}", "positions": [1], "payment": "point"}
    first = activations.activate_positive(table_roll=roll, client_seed=seed, **kwargs)
    after_first = counts()
    again = activations.activate_positive(table_roll=roll, client_seed=seed, **kwargs)
    assert again.pk == first.pk and counts() == after_first
    assert after_first["drama"] == 1 and after_first["activations"] == 1


def test_without_javascript_the_server_makes_the_seed(play):
    roll = roll_for(play)
    response = client_for(play.ana).post(positive_url(roll), positive_data(play, ""), **HTMX)
    assert response.status_code == 200
    roll.refresh_from_db()
    assert roll.latest.kind == "reroll" and roll.latest.entry["client_seed_source"] == "server"
    assert points(play)[0] == 2


def test_the_positive_form_carries_a_seed_field(play):
    roll = roll_for(play)
    for headers in ({}, HTMX):
        html = client_for(play.ana).get(positive_url(roll), **headers).content.decode()
        assert 'type="hidden" name="client_seed"' in html


def test_a_seed_of_another_users_roll_is_refused_and_nothing_changes(play):
    roll = roll_for(play)
    used = roll.first.client_seed  # Ana's first roll; Bruno helps with it
    before, paid = counts(), points(play)
    data = {"aspect": f"a{play.tomas_aspect.pk}", "payment": "point", "dice": ["0"], "client_seed": used}
    response = client_for(play.bruno).post(positive_url(roll), data, **HTMX)
    assert response.status_code == 200
    assert response["HX-Retarget"] == f"#activacion-{roll.pk}"
    assert USED in response.content.decode()
    assert counts() == before and points(play) == paid
    # What the user chose comes back with the message.
    assert f'value="a{play.tomas_aspect.pk}" selected' in response.content.decode()


def test_a_seed_the_user_spent_on_something_else_is_refused(play):
    roll = roll_for(play)
    other = roll_for(play)
    seed = client_seed()
    kwargs = {"user": play.ana, "aspect_choice": f"s{play.scene_aspect.pk}", "positions": [0], "payment": "point"}
    activations.activate_positive(table_roll=other, client_seed=seed, **kwargs)
    before, paid = counts(), points(play)
    with pytest.raises(ValidationError, match=USED):
        activations.activate_positive(table_roll=roll, client_seed=seed, **kwargs)
    # Her own first roll's seed is not a re-roll either.
    with pytest.raises(ValidationError, match=USED):
        activations.activate_positive(table_roll=roll, client_seed=roll.first.client_seed, **kwargs)
    assert counts() == before and points(play) == paid


def test_a_malformed_seed_is_refused_in_spanish(play):
    roll = roll_for(play)
    before = counts()
    response = client_for(play.ana).post(positive_url(roll), positive_data(play, "no válida!"), **HTMX)
    assert "La semilla del navegador no es válida" in response.content.decode()
    assert counts() == before


# --- Negative activation accepted by its target -----------------------------------------------


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "full page"])
def test_accepting_a_negative_activation_rerolls_with_the_seed_once(play, htmx):
    roll = roll_for(play)
    activation = negative(play, roll)
    seed = client_seed()
    headers = HTMX if htmx else {}
    client = client_for(play.ana)
    first = client.post(answer_url(activation), {"respuesta": "aceptar", "client_seed": seed}, **headers)
    roll.refresh_from_db()
    activation.refresh_from_db()
    assert activation.status == Activation.Status.ACCEPTED and activation.reroll == roll.latest
    assert (roll.latest.client_seed, roll.latest.entry["client_seed_source"]) == (seed, "browser")
    after_first, paid = counts(), points(play)
    assert paid[0] == 4  # H22 — the owner gains the point
    again = client.post(answer_url(activation), {"respuesta": "aceptar", "client_seed": seed}, **headers)
    assert counts() == after_first and points(play) == paid
    assert again.status_code == first.status_code
    if htmx:
        html = again.content.decode()
        assert f'id="tirada-{roll.pk}"' in html and "ya tiene respuesta" not in html
    else:
        assert again.url == first.url
        # The first answer's message too: the test client followed no redirect.
        messages = [str(m) for m in again.wsgi_request._messages]
        assert set(messages) == {"Respuesta registrada."}


def test_accepting_without_javascript_uses_the_servers_seed(play):
    roll = roll_for(play)
    activation = negative(play, roll)
    client_for(play.ana).post(answer_url(activation), {"respuesta": "aceptar"}, **HTMX)
    roll.refresh_from_db()
    assert roll.latest.kind == "reroll" and roll.latest.entry["client_seed_source"] == "server"
    # Without a seed a second answer is refused, as before.
    again = client_for(play.ana).post(answer_url(activation), {"respuesta": "aceptar"}, **HTMX)
    assert "ya tiene respuesta" in again.content.decode()


def test_cancelling_after_accepting_with_a_seed_is_still_refused(play):
    roll = roll_for(play)
    activation = negative(play, roll)
    seed = client_seed()
    client_for(play.ana).post(answer_url(activation), {"respuesta": "aceptar", "client_seed": seed}, **HTMX)
    after_first, paid = counts(), points(play)
    again = client_for(play.ana).post(answer_url(activation), {"respuesta": "cancelar", "client_seed": seed}, **HTMX)
    assert "ya tiene respuesta" in again.content.decode()
    assert counts() == after_first and points(play) == paid


def test_answering_with_someone_elses_seed_is_refused(play):
    roll = roll_for(play)
    activation = negative(play, roll)
    helped = roll_for(play)
    brunos_seed = client_seed()
    activations.activate_positive(
        table_roll=helped,
        user=play.bruno,
        aspect_choice=f"a{play.tomas_aspect.pk}",
        positions=[0],
        payment="point",
        client_seed=brunos_seed,
    )
    before, paid = counts(), points(play)
    response = client_for(play.ana).post(
        answer_url(activation), {"respuesta": "aceptar", "client_seed": brunos_seed}, **HTMX
    )
    assert USED in response.content.decode()
    assert counts() == before and points(play) == paid
    activation.refresh_from_db()
    assert activation.status == Activation.Status.PENDING


def test_a_malformed_seed_on_the_card_is_refused(play):
    roll = roll_for(play)
    activation = negative(play, roll)
    before = counts()
    response = client_for(play.ana).post(answer_url(activation), {"respuesta": "aceptar", "client_seed": "x" * 65})
    assert response.status_code == 302
    messages = [str(m) for m in response.wsgi_request._messages]
    assert any("La semilla del navegador no es válida" in m for m in messages)
    assert counts() == before


def test_the_cards_accept_and_settle_forms_carry_a_seed_and_cancel_does_not(play, monkeypatch):
    roll = roll_for(play)
    negative(play, roll)
    html = client_for(play.ana).get(play.scene.get_absolute_url()).content.decode()
    accept = html.split('value="aceptar"')[0].rsplit("<form", 1)[1]
    cancel = html.split('value="cancelar"')[0].rsplit("<form", 1)[1]
    assert 'name="client_seed"' in accept and 'name="client_seed"' not in cancel
    later(monkeypatch)
    html = client_for(play.gm).get(play.scene.get_absolute_url()).content.decode()
    settle = html.split("Resolver (plazo vencido)")[0].rsplit("<form", 1)[1]
    assert 'name="client_seed"' in settle


# --- The direction settles an unanswered activation -------------------------------------------


@pytest.mark.parametrize("in_scene", [True, False], ids=["with its deadline", "outside a scene"])
def test_the_gm_settles_from_the_card_with_the_seed_once(play, monkeypatch, in_scene):
    roll = roll_for(play, scene=in_scene)
    activation = negative(play, roll)
    assert Deadline.objects.exists() == in_scene
    later(monkeypatch)
    seed = client_seed()
    client = client_for(play.gm)
    assert client.post(settle_url(activation), {"client_seed": seed}, **HTMX).status_code == 200
    roll.refresh_from_db()
    activation.refresh_from_db()
    assert activation.status == Activation.Status.ACCEPTED and activation.reroll == roll.latest
    assert (roll.latest.client_seed, roll.latest.entry["client_seed_source"], roll.latest.user) == (
        seed,
        "browser",
        play.gm,
    )
    after_first, paid = counts(), points(play)
    again = client.post(settle_url(activation), {"client_seed": seed}, **HTMX)
    assert again.status_code == 200
    html = again.content.decode()
    assert "ya tiene respuesta" not in html and "ya está resuelto" not in html
    assert counts() == after_first and points(play) == paid
    if in_scene:
        assert Deadline.objects.get().settled_by == play.gm


def test_settling_without_javascript_uses_the_servers_seed(play, monkeypatch):
    roll = roll_for(play)
    activation = negative(play, roll)
    later(monkeypatch)
    client_for(play.gm).post(settle_url(activation), {}, **HTMX)
    roll.refresh_from_db()
    assert roll.latest.kind == "reroll" and roll.latest.entry["client_seed_source"] == "server"


def test_the_deadline_page_settles_with_the_directions_seed(play, monkeypatch):
    roll = roll_for(play)
    activation = negative(play, roll)
    deadline = Deadline.objects.get()
    later(monkeypatch)
    seed = client_seed()
    url = reverse("campaigns:deadline-settle", args=[play.campaign.slug, deadline.pk])
    response = client_for(play.gm).post(url, {"choice": "accept", "client_seed": seed})
    assert response.status_code in (200, 302)
    roll.refresh_from_db()
    activation.refresh_from_db()
    assert activation.status == Activation.Status.ACCEPTED
    assert (roll.latest.client_seed, roll.latest.entry["client_seed_source"]) == (seed, "browser")
    # The kind asked again with the same seed answers with the same sentence.
    after_first, paid = counts(), points(play)
    sentence = extensions.deadline_kind("activation").settle(deadline, "accept", play.gm, client_seed=seed)
    assert sentence.startswith("La Directora dio por aceptada la activación en contra")
    assert counts() == after_first and points(play) == paid
    with pytest.raises(ValidationError, match="ya tiene respuesta"):
        extensions.deadline_kind("activation").settle(deadline, "accept", play.gm, client_seed=client_seed())


# --- An opposed roll's tie-break after a re-roll -----------------------------------------------


def test_a_tiebreak_after_a_reroll_derives_its_seeds_from_the_browsers(play, monkeypatch):
    first = opposed.opposed_start(
        scene=play.scene,
        actor=play.gm,
        purpose="Quién llega antes",
        tie_allowed=False,
        first=(play.ines, "reflejos"),
        second=(play.tomas, "reflejos"),
        client_seed=client_seed(),
    )
    rounds = OpposedRoll.objects.count()
    real = opposed.hitos.opposed
    calls = []

    def tie_once(*args, **kwargs):
        # The re-roll's reading is a tie (rare with real dice): the tie-break rolls.
        calls.append(1)
        return opposed.hitos.Opposed.REROLL if len(calls) == 1 else real(*args, **kwargs)

    monkeypatch.setattr(opposed.hitos, "opposed", tie_once)
    last = opposed.opposed_chain(first)[-1]
    seed = client_seed()
    activations.activate_positive(
        table_roll=last.first,
        user=play.ana,
        aspect_choice=f"a{play.ines_aspect.pk}",
        positions=[0],
        payment="point",
        client_seed=seed,
    )
    assert OpposedRoll.objects.count() > rounds
    tiebreak = OpposedRoll.objects.get(tiebreak_of=last)
    for table_roll in (tiebreak.first, tiebreak.second):
        assert table_roll.kind == TableRollKind.OPPOSED
        entry = table_roll.first
        assert entry.entry["client_seed_source"] == "browser" and entry.client_seed.startswith(seed)


def test_someone_else_sending_the_owners_seed_again_is_forbidden(play):
    # Who may answer is asked before the seed: a retry is only the answerer's.
    roll = roll_for(play)
    activation = negative(play, roll)
    seed = client_seed()
    client_for(play.ana).post(answer_url(activation), {"respuesta": "aceptar", "client_seed": seed}, **HTMX)
    after_first, paid = counts(), points(play)
    response = client_for(play.bruno).post(answer_url(activation), {"respuesta": "aceptar", "client_seed": seed})
    assert response.status_code == 403
    assert counts() == after_first and points(play) == paid
