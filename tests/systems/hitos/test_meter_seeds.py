"""The sheet's meter tests rolled with the browser's seed (issue 18, item 1).

A mass-damage or trauma test, a weekly healing roll or a monthly recovery
roll made from the sheet page is a first roll like any other: the meter form
carries a marked ``client_seed`` field (filled by client-seed.js, which keeps
a receipt), the entry says ``client_seed_source: browser``, and the seed is
the idempotency key (rollog/v1 §3.3): the same form sent again shows what the
first request did, with one entry, one table roll, one line in the sheet's
history and one change to the meter. A seed someone else used, or that made
something else, is refused in Spanish and nothing changes. Without
JavaScript the server makes the seed, as before.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from rolls.models import RollEntry
from sheets.models import SheetEvent
from systems.hitos.checks.services import check_setup, table_check
from systems.hitos.models import TableRollKind
from systems.hitos.sheet import services
from table.models import TableRoll
from tests.conftest import chosen_dice
from tests.factories import client_seed

HTMX = {"HTTP_HX_REQUEST": "true"}
USED = "Esa semilla ya se usó en otra tirada."


def meter_url(play, character=None, meter: str = "resistencia") -> str:
    return reverse("hitos:meter-update", args=[play.campaign.slug, (character or play.ines).pk, meter])


def meter_data(meter: str = "resistencia", **fields) -> dict[str, str]:
    return {f"{meter}-{name}": value for name, value in fields.items()}


def counts() -> dict[str, int]:
    """What a retry must not add to: the log, the table's rolls, the sheets' history."""
    return {
        "entries": RollEntry.objects.count(),
        "table rolls": TableRoll.objects.count(),
        "events": SheetEvent.objects.count(),
    }


def health(character) -> tuple[int, int]:
    character.refresh_from_db()
    return character.hitos.health_slashes, character.hitos.health_crosses


def mental(character) -> tuple[int, int]:
    character.refresh_from_db()
    return character.hitos.mental_slashes, character.hitos.mental_crosses


def other_roll(play, user, seed: str) -> TableRoll:
    """A HITOS check ``user`` rolled with ``seed`` (not a sheet's test)."""
    return table_check(
        campaign=play.campaign,
        user=user,
        setup=check_setup(play.ines, characteristic="reflejos", skill="Sigilo"),
        purpose="Cruzar el vestíbulo sin ruido",
        difficulty=15,
        character=play.ines,
        scene=play.scene,
        client_seed=seed,
    )


# --- The form ----------------------------------------------------------------------------------


def test_the_sheet_renders_a_marked_seed_field_in_each_meter_form(play):
    html = play.client("gm").get(play.ines.get_absolute_url()).content.decode()
    for meter in ("resistencia", "estabilidad"):
        assert (
            f'<input type="hidden" name="{meter}-client_seed" data-client-seed="true" id="id_{meter}-client_seed">'
        ) in html
    # The receipt names the dice a meter test rolls.
    assert html.count('data-receipt-spec="3d10"') == 2


# --- Mass damage from the sheet page -----------------------------------------------------------


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "full page"])
def test_a_mass_damage_test_rolls_with_the_forms_seed_and_a_retry_marks_once(play, htmx):
    seed = client_seed()
    client = play.client("gm")
    headers = HTMX if htmx else {}
    data = meter_data(action="damage", amount="8", reason="Caída", client_seed=seed)
    with chosen_dice([2, 3, 4]):  # 3 + Aguante 7 = 10 against 12: failed, every box left is slashed
        first = client.post(meter_url(play), data, **headers)
    entry = RollEntry.objects.filter(campaign=play.campaign).rolls().get()
    assert (entry.client_seed, entry.entry["client_seed"], entry.entry["client_seed_source"]) == (
        seed,
        seed,
        "browser",
    )
    assert "daño masivo" in entry.purpose and entry.character_id == play.ines.pk
    assert TableRoll.objects.get(first=entry).kind == TableRollKind.METER
    event = SheetEvent.objects.get(character=play.ines)
    assert (event.roll, event.after["client_seed"]) == (entry, seed)
    after_first, marked = counts(), health(play.ines)
    assert marked == (21, 0)

    again = client.post(meter_url(play), data, **headers)

    assert counts() == after_first
    assert health(play.ines) == marked
    assert again.status_code == first.status_code
    if htmx:
        html = again.content.decode()
        # The first request's roll and result again, and no form error.
        assert html.lstrip().startswith('<section id="sheet-meters"')
        assert entry.get_absolute_url() in html and "2 · 3 · 4" in html and "fracaso" in html
        assert USED not in html and "alert-danger" not in html
    else:
        assert (first.status_code, again.url) == (302, play.ines.get_absolute_url())


def test_a_retry_with_the_same_seed_in_the_service_returns_the_first_change(play):
    seed = client_seed()
    first = services.meter_apply(
        character=play.ines, actor=play.gm, meter=services.HEALTH, action="damage", amount=8, client_seed=seed
    )
    before = counts()
    again = services.meter_apply(
        character=play.ines, actor=play.gm, meter=services.HEALTH, action="damage", amount=8, client_seed=seed
    )
    assert counts() == before
    assert (again.event, again.roll) == (first.event, first.roll)
    assert (again.check.total, again.check.success) == (first.check.total, first.check.success)


# --- Trauma, healing and recovery ---------------------------------------------------------------


def test_a_trauma_test_from_the_sheet_rolls_with_the_seed_and_a_retry_marks_once(play):
    seed = client_seed()
    client = play.client("gm")
    data = meter_data("estabilidad", action="imbalance", amount="8", client_seed=seed)
    with chosen_dice([9, 9, 9]):
        first = client.post(meter_url(play, meter="estabilidad"), data, **HTMX)
    assert first.status_code == 200
    entry = RollEntry.objects.filter(campaign=play.campaign).rolls().get()
    assert (entry.client_seed, entry.entry["client_seed_source"]) == (seed, "browser")
    assert "trauma" in entry.purpose.lower()
    after_first, marked = counts(), mental(play.ines)
    assert marked == (8, 0)

    client.post(meter_url(play, meter="estabilidad"), data, **HTMX)

    assert counts() == after_first and mental(play.ines) == marked


def test_a_healing_roll_from_the_sheet_rolls_with_the_seed_and_a_retry_heals_once(play):
    for _ in range(3):  # below Aguante: no test
        services.meter_apply(character=play.ines, actor=play.gm, meter=services.HEALTH, action="damage", amount=6)
    # Shock turns half the slashes into crosses: Herido needs a healing roll.
    services.meter_apply(character=play.ines, actor=play.gm, meter=services.HEALTH, action="shock")
    hurt = health(play.ines)
    assert hurt == (0, 9)
    seed = client_seed()
    client = play.client("gm")
    data = meter_data(action="healing_roll", rested="on", client_seed=seed)
    with chosen_dice([9, 9, 9]):
        first = client.post(meter_url(play), data)
    assert first.status_code == 302
    entry = RollEntry.objects.filter(campaign=play.campaign).rolls().get()
    assert (entry.client_seed, entry.entry["client_seed_source"]) == (seed, "browser")
    after_first, healed = counts(), health(play.ines)
    assert healed != hurt

    again = client.post(meter_url(play), data)

    assert again.status_code == 302
    assert counts() == after_first and health(play.ines) == healed


def test_a_change_without_a_roll_keeps_its_seed_and_a_retry_changes_nothing(play):
    """Damage below Aguante rolls nothing: the history line keeps the seed,
    and the same form sent again does not mark it twice."""
    seed = client_seed()
    client = play.client("gm")
    data = meter_data(action="damage", amount="2", client_seed=seed)
    client.post(meter_url(play), data, **HTMX)
    event = SheetEvent.objects.get(character=play.ines)
    assert (event.roll, event.after["client_seed"]) == (None, seed)
    after_first = counts()

    again = client.post(meter_url(play), data, **HTMX)

    assert again.status_code == 200 and "alert-danger" not in again.content.decode()
    assert counts() == after_first and health(play.ines) == (2, 0)


# --- Seeds that made something else -------------------------------------------------------------


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "full page"])
def test_another_users_seed_is_refused_and_nothing_changes(play, htmx):
    seed = client_seed()
    other_roll(play, play.ana, seed)
    before = counts()
    response = play.client("gm").post(
        meter_url(play),
        meter_data(action="damage", amount="8", reason="Un mal golpe", client_seed=seed),
        **(HTMX if htmx else {}),
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert USED in html
    # What the user typed comes back; the refused seed does not, so the browser makes a new one.
    assert 'value="Un mal golpe"' in html and 'value="8"' in html
    assert seed not in html
    assert counts() == before and health(play.ines) == (0, 0)


def test_a_seed_of_another_roll_of_the_same_user_is_refused(play):
    seed = client_seed()
    other_roll(play, play.gm, seed)
    before = counts()
    with pytest.raises(ValidationError, match=USED):
        services.meter_apply(
            character=play.ines, actor=play.gm, meter=services.HEALTH, action="damage", amount=8, client_seed=seed
        )
    assert counts() == before and health(play.ines) == (0, 0)


def test_a_seed_of_one_characters_test_is_refused_for_another(play):
    seed = client_seed()
    services.meter_apply(
        character=play.ines, actor=play.gm, meter=services.HEALTH, action="damage", amount=8, client_seed=seed
    )
    before = counts()
    with pytest.raises(ValidationError, match=USED):
        services.meter_apply(
            character=play.tomas, actor=play.gm, meter=services.HEALTH, action="damage", amount=8, client_seed=seed
        )
    assert counts() == before and health(play.tomas) == (0, 0)


def test_a_seed_of_a_change_without_a_roll_is_refused_for_another_action_or_user(play):
    seed = client_seed()
    services.meter_apply(
        character=play.ines, actor=play.gm, meter=services.HEALTH, action="damage", amount=2, client_seed=seed
    )
    before = counts()
    with pytest.raises(ValidationError, match=USED):
        services.meter_apply(
            character=play.ines, actor=play.gm, meter=services.HEALTH, action="heal", amount=2, client_seed=seed
        )
    with pytest.raises(ValidationError, match=USED):
        services.meter_apply(
            character=play.ines, actor=play.ana, meter=services.HEALTH, action="damage", amount=2, client_seed=seed
        )
    assert counts() == before and health(play.ines) == (2, 0)


# --- Without JavaScript ------------------------------------------------------------------------


def test_without_javascript_the_server_makes_the_seed_as_before(play):
    client = play.client("gm")
    data = meter_data(action="damage", amount="8")
    with chosen_dice([9, 9, 9], [9, 9, 9]):
        assert client.post(meter_url(play), data).status_code == 302
        assert client.post(meter_url(play), data).status_code == 302
    entries = list(RollEntry.objects.filter(campaign=play.campaign).rolls())
    # No seed, no retry to recognise: two sends are two tests.
    assert [e.entry["client_seed_source"] for e in entries] == ["server", "server"]
    assert SheetEvent.objects.filter(character=play.ines).count() == 2
    assert "client_seed" not in SheetEvent.objects.filter(character=play.ines).first().after
    assert health(play.ines) == (16, 0)


# --- Queries -------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 8])
def test_a_seeded_test_and_its_retry_run_a_fixed_number_of_queries(play, django_assert_max_num_queries, n):
    for _ in range(n):
        services.meter_apply(
            character=play.ines,
            actor=play.gm,
            meter=services.HEALTH,
            action="heal",
            amount=0,
            client_seed=client_seed(),
        )
    client = play.client("gm")
    data = meter_data(action="damage", amount="8", client_seed=client_seed())
    # The meter action (tests/systems/hitos/sheet/test_queries.py) with its
    # test through the log, the seed looked up first.
    with django_assert_max_num_queries(31):
        first = client.post(meter_url(play), data, **HTMX)
    assert first.status_code == 200
    # The retry writes nothing: the lock, the seed's entry, its event and table roll, the fragment.
    with django_assert_max_num_queries(18):
        again = client.post(meter_url(play), data, **HTMX)
    assert again.status_code == 200 and "alert-danger" not in again.content.decode()
