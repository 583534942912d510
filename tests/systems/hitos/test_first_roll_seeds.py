"""HITOS rolls made from a page carry the browser's seed (issue 18, item 1).

The damage form's mass-damage test (H52; the form carries a seed when
applying the damage rolls, extra dice or that test), the trauma test of a horror roll
(H77) and the initiative rolls of a combat (H40, roll-offs included) roll
with the page's browser seed, or one derived from it when the request rolls
more than once (``"<the first 56 characters>-<n>"``, as opposed rolls do):
the entries say ``client_seed_source: browser``. The seed is the idempotency
key (rollog/v1 §3.3): the same form sent again writes nothing and shows what
the first request did. Without JavaScript the server makes the seeds, as
before.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from campaigns.models import Notification
from campaigns.permissions import campaign_access
from rolls.models import RollEntry
from sheets.models import SheetEvent
from systems.hitos.checks.services import check_setup, table_check
from systems.hitos.combat import services as combat_services
from systems.hitos.horror import services as horror
from systems.hitos.models import Attack, Combat, Combatant, HitosEvent, HorrorExposure
from table.models import TableRoll
from tests.conftest import client_for
from tests.factories import client_seed

HTMX = {"HTTP_HX_REQUEST": "true"}
USED = "Esa semilla ya se usó en otra tirada."
MARKED = '<input type="hidden" name="client_seed" value="" data-client-seed="true">'


def gm(play):
    return campaign_access(play.gm, play.campaign)


def url(play, name, *args):
    return reverse(f"hitos:{name}", args=[play.campaign.slug, play.scene.pk, *args])


def started(play, *characters) -> Combat:
    return combat_services.combat_start(
        scene=play.scene, access=gm(play), characters=characters or [play.ines, play.tomas, play.npc]
    )


def combatant(combat, character) -> Combatant:
    return Combatant.objects.get(combat=combat, character=character)


def attack_on_tomas(play, combat, code: str | None = None) -> Attack:
    """Inés attacks Tomás (Aguante 7): with her sword, or a weapon of ``code``."""
    weapon = play.ines.weapons.create(name="Maza", damage_code=code, melee=True) if code else play.ines.weapons.get()
    return combat_services.attack_make(
        combat=combat,
        access=gm(play),
        attacker=combatant(combat, play.ines),
        target=combatant(combat, play.tomas),
        weapon=weapon,
    )


def counts() -> dict[str, int]:
    """What a retry must not add to."""
    return {
        "entries": RollEntry.objects.count(),
        "table rolls": TableRoll.objects.count(),
        "events": SheetEvent.objects.count(),
        "notifications": Notification.objects.count(),
    }


def mass_tests():
    return RollEntry.objects.filter(purpose__startswith="Prueba de daño masivo")


def sources(entries) -> list[tuple[str, str]]:
    return [(e.client_seed, e.entry["client_seed_source"]) for e in entries]


def tomas_health(play) -> tuple[int, int]:
    play.tomas.refresh_from_db()
    return play.tomas.hitos.health_slashes, play.tomas.hitos.health_crosses


# --- the forms ---------------------------------------------------------------------------------


def form_of(html: str, action: str) -> str:
    return html.split(f'action="{action}"')[1].split("</form>")[0]


def test_the_damage_and_initiative_forms_carry_a_marked_seed_field(play, dice):
    combat = started(play)
    dice.extend([[9, 3, 7], [9, 3, 7]])
    made = attack_on_tomas(play, combat)  # 9 of damage: no extra dice, a mass-damage test
    play.tomas.hitos.rd = 6
    play.tomas.hitos.save()
    small = attack_on_tomas(play, combat)  # 9 + 2 − 6 = 3 < Aguante 7: nothing to roll
    html = client_for(play.gm).get(url(play, "combat")).content.decode()
    damage_form = form_of(html, url(play, "combat-damage-apply", made.pk))
    assert MARKED in damage_form and "Aplicar daño" in damage_form
    assert 'data-receipt-spec="3d10"' in damage_form
    # A seed that rolls nothing would leave a receipt for a roll never in the log.
    small_form = form_of(html, url(play, "combat-damage-apply", small.pk))
    assert "Aplicar daño" in small_form and 'name="client_seed"' not in small_form
    initiative_form = html.split(f'action="{url(play, "combat-initiative", combat.pk)}"')[1].split("</form>")[0]
    assert MARKED in initiative_form and 'data-receipt-spec="3d10"' in initiative_form


# --- mass damage (H52) -------------------------------------------------------------------------


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "full page"])
def test_the_mass_damage_test_rolls_with_the_forms_seed_and_a_retry_applies_once(play, dice, htmx):
    combat = started(play)
    dice.extend([[9, 3, 7], [5, 6, 7]])  # 9 damage ≥ Aguante 7; the test: 7 + 7 = 14 ≥ 12, passed
    made = attack_on_tomas(play, combat)
    seed = client_seed()
    client = client_for(play.gm)
    headers = HTMX if htmx else {}
    first = client.post(url(play, "combat-damage-apply", made.pk), {"client_seed": seed}, **headers)
    test = mass_tests().get()
    assert sources([test]) == [(seed, "browser")] and test.entry["client_seed"] == seed
    event = SheetEvent.objects.get(character=play.tomas, kind=HitosEvent.DAMAGE)
    assert (event.roll_id, event.after["client_seed"]) == (test.pk, seed)
    after_first, marked = counts(), tomas_health(play)
    assert marked == (9, 0)

    again = client.post(url(play, "combat-damage-apply", made.pk), {"client_seed": seed}, **headers)

    assert counts() == after_first and tomas_health(play) == marked
    assert again.status_code == first.status_code
    if htmx:
        html = again.content.decode()
        assert "Daño aplicado: 9" in html
        assert "ya está aplicado" not in html and USED not in html and "alert-danger" not in html
    else:
        assert again.status_code == 302


def test_after_extra_dice_the_mass_damage_test_takes_a_seed_derived_from_the_forms(play, dice):
    combat = started(play)
    dice.extend([[9, 3, 7], [5, 6, 7]])  # a hit; mCM 19 + 1d10 + 2 ≥ Aguante 7: the test
    made = attack_on_tomas(play, combat, "mCM+1d10")
    seed = client_seed()
    combat_services.damage_apply(attack=made, access=gm(play), client_seed=seed)
    extension = RollEntry.objects.get(kind=RollEntry.Kind.EXTEND)
    test = mass_tests().get()
    # Each roll of the request has its own seed from the page.
    assert sources([extension, test]) == [(seed, "browser"), (f"{seed}-1", "browser")]
    after_first, marked = counts(), tomas_health(play)

    again = combat_services.damage_apply(attack=made, access=gm(play), client_seed=seed)

    assert counts() == after_first and tomas_health(play) == marked
    assert again.damage_applied == Attack.objects.get(pk=made.pk).damage_applied


def test_a_damage_without_a_roll_keeps_the_seed_and_a_retry_applies_once(play, dice):
    play.tomas.hitos.rd = 6
    play.tomas.hitos.save()
    combat = started(play)
    dice.append([9, 3, 7])  # 9 + 2 − 6 = 3 < Aguante 7: nothing rolled
    made = attack_on_tomas(play, combat)
    seed = client_seed()
    before = RollEntry.objects.count()
    combat_services.damage_apply(attack=made, access=gm(play), client_seed=seed)
    assert RollEntry.objects.count() == before
    after_first, marked = counts(), tomas_health(play)
    combat_services.damage_apply(attack=made, access=gm(play), client_seed=seed)
    assert counts() == after_first and tomas_health(play) == marked
    # Another seed is another request: the damage is applied already.
    with pytest.raises(ValidationError, match="ya está aplicado"):
        combat_services.damage_apply(attack=made, access=gm(play), client_seed=client_seed())


def test_a_seed_of_another_roll_is_refused_for_the_damage_and_nothing_changes(play, dice):
    combat = started(play)
    dice.extend([[9, 3, 7]])
    made = attack_on_tomas(play, combat)
    seed = client_seed()
    table_check(
        campaign=play.campaign,
        user=play.gm,
        setup=check_setup(play.ines, characteristic="reflejos"),
        purpose="Otra tirada",
        difficulty=None,
        client_seed=seed,
    )
    before = counts()
    with pytest.raises(ValidationError, match=USED):
        combat_services.damage_apply(attack=made, access=gm(play), client_seed=seed)
    assert counts() == before and Attack.objects.get(pk=made.pk).damage_applied is None


def test_without_javascript_the_server_makes_the_mass_damage_tests_seed(play, dice):
    combat = started(play)
    dice.extend([[9, 3, 7], [5, 6, 7]])
    made = attack_on_tomas(play, combat)
    response = client_for(play.gm).post(url(play, "combat-damage-apply", made.pk), {"client_seed": ""}, **HTMX)
    assert "Daño aplicado: 9" in response.content.decode()
    assert mass_tests().get().entry["client_seed_source"] == "server"


# --- the trauma test of a horror roll (H77) ------------------------------------------------------


def horror_exposure(play) -> HorrorExposure:
    test = horror.horror_start(
        scene=play.scene, actor=play.gm, level="horror", description="Un rostro", exposures=[(play.ines, 0, "")]
    )
    return test.exposures.get(character=play.ines)


def horror_url(play, exposure) -> str:
    return url(play, "horror-roll", exposure.pk)


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "full page"])
def test_the_trauma_test_takes_a_seed_derived_from_the_horror_rolls_and_a_retry_rolls_once(play, dice, htmx):
    exposure = horror_exposure(play)
    dice.extend([[1, 2, 9], [5, 6, 7]])  # horror fails: loses 12 ≥ Entereza 7; the trauma test
    seed = client_seed()
    client = client_for(play.ana)
    headers = HTMX if htmx else {}
    first = client.post(horror_url(play, exposure), {"client_seed": seed}, **headers)
    roll = HorrorExposure.objects.get(pk=exposure.pk).table_roll.first
    trauma = RollEntry.objects.get(purpose__icontains="trauma")
    assert sources([roll, trauma]) == [(seed, "browser"), (f"{seed}-1", "browser")]
    assert SheetEvent.objects.get(character=play.ines, kind=HitosEvent.IMBALANCE).roll_id == trauma.pk
    after_first = counts()
    play.ines.refresh_from_db()
    marked = (play.ines.hitos.mental_slashes, play.ines.hitos.mental_crosses)

    again = client.post(horror_url(play, exposure), {"client_seed": seed}, **headers)

    assert counts() == after_first
    play.ines.refresh_from_db()
    assert (play.ines.hitos.mental_slashes, play.ines.hitos.mental_crosses) == marked
    assert again.status_code == first.status_code
    if htmx:
        html = again.content.decode()
        assert "ya ha hecho esta prueba" not in html and USED not in html and "alert-danger" not in html


def test_a_horror_roll_with_another_seed_is_still_refused_once_done(play, dice):
    exposure = horror_exposure(play)
    dice.extend([[1, 2, 9], [5, 6, 7]])
    horror.exposure_roll(exposure=exposure, actor=play.ana, client_seed=client_seed())
    before = counts()
    with pytest.raises(ValidationError, match="ya ha hecho esta prueba"):
        horror.exposure_roll(exposure=exposure, actor=play.ana, client_seed=client_seed())
    assert counts() == before


def test_without_javascript_the_server_makes_the_trauma_tests_seed(play, dice):
    exposure = horror_exposure(play)
    dice.extend([[1, 2, 9], [5, 6, 7]])
    client_for(play.ana).post(horror_url(play, exposure), {"client_seed": ""}, **HTMX)
    trauma = RollEntry.objects.get(purpose__icontains="trauma")
    assert trauma.entry["client_seed_source"] == "server"


# --- initiative (H40) ---------------------------------------------------------------------------


def initiative_rolls():
    return RollEntry.objects.filter(purpose__contains="niciativa").order_by("seq")


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "full page"])
def test_each_initiative_roll_and_roll_off_takes_a_seed_from_the_page_and_a_retry_rolls_nothing(play, dice, htmx):
    combat = started(play)
    # Inés and Tomás tie at 13 with the same score; one roll-off decides (C 2 against 8).
    dice.extend([[4, 5, 6], [4, 5, 6], [1, 2, 3], [1, 2, 3], [7, 8, 9]])
    seed = client_seed()
    client = client_for(play.gm)
    headers = HTMX if htmx else {}
    first = client.post(url(play, "combat-initiative", combat.pk), {"client_seed": seed}, **headers)
    rolls = list(initiative_rolls())
    assert [e.purpose.startswith("Desempate") for e in rolls] == [False, False, False, True, True]
    assert sources(rolls) == [
        (seed, "browser"),
        (f"{seed}-1", "browser"),
        (f"{seed}-2", "browser"),
        (f"{seed}-3", "browser"),
        (f"{seed}-4", "browser"),
    ]
    order = list(combat.combatants.order_by("order").values_list("character_id", flat=True))
    assert order == [play.tomas.pk, play.ines.pk, play.npc.pk]
    after_first = counts()

    again = client.post(url(play, "combat-initiative", combat.pk), {"client_seed": seed}, **headers)

    assert counts() == after_first
    assert list(combat.combatants.order_by("order").values_list("character_id", flat=True)) == order
    assert again.status_code == first.status_code
    if htmx:
        html = again.content.decode()
        assert html.lstrip().startswith('<section id="combat-tracker"')
        assert USED not in html and "alert-danger" not in html


def test_a_late_arrivals_initiative_rolls_with_the_new_forms_seed(play):
    combat = started(play, play.ines)
    combat_services.initiative_roll(combat=combat, access=gm(play), client_seed=client_seed())
    combat_services.combatant_add(combat=combat, access=gm(play), character=play.tomas)
    seed = client_seed()
    combat_services.initiative_roll(combat=combat, access=gm(play), client_seed=seed)
    tomas = Combatant.objects.select_related("initiative__first").get(combat=combat, character=play.tomas)
    assert sources([tomas.initiative.first]) == [(seed, "browser")]


def test_a_seed_of_another_roll_is_refused_for_initiative_and_nothing_is_rolled(play):
    combat = started(play)
    seed = client_seed()
    table_check(
        campaign=play.campaign,
        user=play.gm,
        setup=check_setup(play.ines, characteristic="reflejos"),
        purpose="Otra tirada",
        difficulty=None,
        client_seed=seed,
    )
    before = counts()
    response = client_for(play.gm).post(url(play, "combat-initiative", combat.pk), {"client_seed": seed}, **HTMX)
    assert USED in response.content.decode()
    assert counts() == before
    assert not combat.combatants.filter(initiative__isnull=False).exists()


def test_a_malformed_initiative_seed_is_refused_in_spanish(play):
    combat = started(play)
    response = client_for(play.gm).post(url(play, "combat-initiative", combat.pk), {"client_seed": "no vale!"}, **HTMX)
    assert "La semilla del navegador no es válida" in response.content.decode()
    assert not initiative_rolls().exists()


def test_without_javascript_the_server_makes_the_initiative_seeds(play):
    combat = started(play)
    client_for(play.gm).post(url(play, "combat-initiative", combat.pk), {"client_seed": ""}, **HTMX)
    rolled = [e.entry["client_seed_source"] for e in initiative_rolls()]
    # Three first rolls, and the roll-offs of any tie.
    assert len(rolled) >= 3 and set(rolled) == {"server"}


def test_initiative_is_gm_only(play):
    combat = started(play)
    seed = client_seed()
    assert (
        client_for(play.ana).post(url(play, "combat-initiative", combat.pk), {"client_seed": seed}).status_code == 403
    )
    assert not initiative_rolls().exists()
