"""Horror tests at the table (H77–H81): the service and its pages."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from pytest_django.asserts import assertContains, assertNotContains

from campaigns.models import Notification, Scene
from rolls.models import RollEntry
from rules import hitos
from rules.hitos_health import HORROR_LEVELS, horror_level
from rules.hitos_health import horror as rules_horror
from sheets.models import Character, SheetEvent
from systems.hitos.horror import services as horror
from systems.hitos.models import HitosEvent, HorrorExposure, HorrorTest, TableRollKind
from tests.conftest import client_for
from tests.factories import client_seed


def _start(play, level="miedo", exposures=None, description="Un rostro en la ventana"):
    exposures = exposures if exposures is not None else [(play.ines, 0, ""), (play.tomas, 0, "")]
    return horror.horror_start(
        scene=play.scene, actor=play.gm, level=level, description=description, exposures=exposures
    )


def _exposure(test, character) -> HorrorExposure:
    return test.exposures.get(character=character)


def _url(play, name="hitos:horror", *args):
    return reverse(name, args=[play.campaign.slug, play.scene.pk, *args])


# --- the service ---------------------------------------------------------------------------


@pytest.mark.parametrize("level", HORROR_LEVELS, ids=lambda level: level.key)
def test_h79_each_level_rolls_entereza_at_its_difficulty_and_the_loss_comes_from_the_same_dice(play, level):
    test = _start(play, level=level.key, exposures=[(play.ines, 0, "")])
    exposure = horror.exposure_roll(exposure=_exposure(test, play.ines), actor=play.ana, client_seed=client_seed())
    table_roll = exposure.table_roll
    assert table_roll.kind == TableRollKind.HORROR
    assert table_roll.difficulty == level.difficulty
    assert table_roll.facts["modifier"] == play.ines.hitos.entereza == 7
    entry = table_roll.first
    assert entry.signed_game["difficulty"] == level.difficulty
    assert entry.signed_game["breakdown"] == [["Entereza", 7]]
    # H78 / §4.6 — the loss code is read from the dice of that same roll.
    expected = rules_horror(level.key, hitos.HitosRoll(tuple(entry.entry["dice"])), entereza=7)
    assert exposure.loss == expected.loss
    assert exposure.resolved_at is not None and exposure.exempt is False
    assert horror.exposure_outcome(exposure).code == expected.code


def test_h79_miedo_loses_m_on_success_and_big_on_failure(play, fixed_dice):
    # Inés loses 9 ≥ Entereza 7: the second dice are her trauma test (H77).
    fixed_dice.extend([[9, 4, 7], [8, 8, 8], [1, 2, 3]])
    test = _start(play, level="miedo")
    # Entereza 7 + C 7 = 14 < 15: failure, loses M = 9.
    ines = horror.exposure_roll(exposure=_exposure(test, play.ines), actor=play.gm)
    assert ines.table_roll.first.entry["dice"] == [9, 4, 7]
    assert ines.loss == 9  # failure at Miedo: M
    tomas = horror.exposure_roll(exposure=_exposure(test, play.tomas), actor=play.gm)
    assert tomas.loss == 3  # 7 + 2 = 9 fails: M = 3


def test_h79_success_takes_the_lower_code(play, fixed_dice):
    fixed_dice.append([9, 8, 3])
    test = _start(play, level="miedo", exposures=[(play.ines, 0, "")])
    exposure = horror.exposure_roll(exposure=_exposure(test, play.ines), actor=play.ana)
    # 7 + C 8 = 15 ≥ 15: success, loses m = 3.
    assert exposure.table_roll.first.signed_game["success"] is True
    assert exposure.loss == 3


def test_h80_degeneracion_skips_desasosiego_without_a_roll(play):
    play.ines.hitos.degeneracion = 1
    play.ines.hitos.save()
    test = _start(play, level="desasosiego")
    before = RollEntry.objects.count()
    exposure = horror.exposure_roll(exposure=_exposure(test, play.ines), actor=play.ana)
    assert exposure.exempt is True and exposure.loss == 0 and exposure.table_roll is None
    assert exposure.resolved_at is not None
    assert RollEntry.objects.count() == before
    # Tomás has no Degeneración: he rolls.
    tomas = horror.exposure_roll(exposure=_exposure(test, play.tomas), actor=play.bruno)
    assert tomas.exempt is False and tomas.table_roll is not None


def test_h80_degeneracion_still_tests_when_an_aspect_raises_desasosiego(play):
    play.ines.hitos.degeneracion = 2
    play.ines.hitos.save()
    test = _start(play, level="desasosiego", exposures=[(play.ines, 1, "Sola en la oscuridad")])
    exposure = horror.exposure_roll(exposure=_exposure(test, play.ines), actor=play.ana)
    assert exposure.exempt is False
    assert exposure.table_roll.difficulty == horror_level("estupor").difficulty


def test_h81_an_aspect_shifts_the_level_one_step(play):
    test = _start(play, level="miedo", exposures=[(play.ines, -1, "Corto de vista"), (play.tomas, 1, "Niebla")])
    ines = horror.exposure_roll(exposure=_exposure(test, play.ines), actor=play.ana)
    assert horror.effective_level(ines).key == "estupor"
    assert ines.table_roll.difficulty == 15
    entry = ines.table_roll.first
    expected = rules_horror("estupor", hitos.HitosRoll(tuple(entry.entry["dice"])), entereza=7)
    assert ines.loss == expected.loss
    assert "(Estupor)" in entry.purpose
    tomas = horror.exposure_roll(exposure=_exposure(test, play.tomas), actor=play.bruno)
    assert horror.effective_level(tomas).key == "panico"
    assert tomas.table_roll.difficulty == 20


def test_the_loss_lands_on_the_mental_meter_with_a_sheet_event_linked_to_the_roll(play, fixed_dice):
    fixed_dice.append([2, 5, 6])  # 7 + 5 = 12 < 15: failure at Miedo, loses M = 6 (< Entereza 7)
    test = _start(play, level="miedo", exposures=[(play.ines, 0, "")])
    exposure = horror.exposure_roll(exposure=_exposure(test, play.ines), actor=play.gm)
    assert exposure.loss == 6
    play.ines.refresh_from_db()
    assert play.ines.hitos.mental_slashes == 6
    event = SheetEvent.objects.get(character=play.ines, kind=HitosEvent.IMBALANCE)
    assert event.actor == play.gm
    assert event.roll_id == exposure.table_roll.first.pk
    assert event.before["slashes"] == 0 and event.after["slashes"] == 6
    assert "Un rostro en la ventana" in event.reason
    # No trauma test below Entereza.
    assert not RollEntry.objects.filter(purpose__icontains="trauma").exists()


def test_h77_a_loss_reaching_entereza_rolls_the_trauma_test(play, fixed_dice):
    fixed_dice.extend([[1, 2, 9], [1, 1, 2]])  # horror fails, loses mCM = 1+2+9 = 12; trauma test fumbles
    test = _start(play, level="horror", exposures=[(play.ines, 0, "")])
    exposure = horror.exposure_roll(exposure=_exposure(test, play.ines), actor=play.gm)
    assert exposure.loss == 12
    trauma = RollEntry.objects.get(purpose__icontains="trauma")
    assert trauma.character == play.ines
    event = SheetEvent.objects.get(character=play.ines, kind=HitosEvent.IMBALANCE)
    assert event.roll_id == trauma.pk
    play.ines.refresh_from_db()
    # Failed trauma test: every point of Estabilidad Mental is lost (Entereza 7 × 3 = 21).
    assert play.ines.hitos.mental_meter.remaining == 0
    assert play.ines.hitos.mental_meter.lost == play.ines.hitos.mental_meter.capacity


def test_a_loss_of_zero_leaves_the_meter_alone(play, fixed_dice):
    fixed_dice.append([9, 9, 9])  # 7 + 9 ≥ 10: success at Desasosiego, loses 0
    test = _start(play, level="desasosiego", exposures=[(play.ines, 0, "")])
    exposure = horror.exposure_roll(exposure=_exposure(test, play.ines), actor=play.gm)
    assert exposure.loss == 0
    assert not SheetEvent.objects.filter(character=play.ines, kind=HitosEvent.IMBALANCE).exists()
    assert not Notification.objects.filter(kind=Notification.Kind.CHARACTER).exists()


def test_rolling_twice_is_refused(play):
    test = _start(play, exposures=[(play.ines, 0, "")])
    exposure = _exposure(test, play.ines)
    horror.exposure_roll(exposure=exposure, actor=play.ana)
    count = RollEntry.objects.count()
    with pytest.raises(ValidationError, match="ya ha hecho esta prueba"):
        horror.exposure_roll(exposure=exposure, actor=play.gm)
    assert RollEntry.objects.count() == count


def test_the_player_is_told_when_the_gm_rolls_for_their_character(play, fixed_dice):
    fixed_dice.extend([[2, 5, 6], [2, 3, 4]])
    test = _start(play)
    horror.exposure_roll(exposure=_exposure(test, play.ines), actor=play.gm)
    notification = Notification.objects.get(kind=Notification.Kind.CHARACTER)
    assert notification.user == play.ana
    assert notification.text == "Inés Salcedo pierde 6 de Estabilidad Mental por el horror."
    assert notification.url.endswith(f"#exposicion-{_exposure(test, play.ines).pk}")
    # Tomás's player rolled himself: nobody to tell.
    horror.exposure_roll(exposure=_exposure(test, play.tomas), actor=play.bruno)
    assert Notification.objects.filter(kind=Notification.Kind.CHARACTER).count() == 1


def test_only_the_gm_starts_and_choices_are_checked(play):
    with pytest.raises(PermissionDenied):
        horror.horror_start(scene=play.scene, actor=play.ana, level="miedo", description="x", exposures=[])
    with pytest.raises(ValidationError, match="nivel"):
        _start(play, level="terror")
    with pytest.raises(ValidationError, match="al menos un personaje"):
        _start(play, exposures=[])
    with pytest.raises(ValidationError, match="Indica el aspecto"):
        _start(play, exposures=[(play.ines, -1, "  ")])
    with pytest.raises(ValidationError, match="un paso"):
        _start(play, exposures=[(play.ines, 2, "Niebla")])
    with pytest.raises(ValidationError, match="dos veces"):
        _start(play, exposures=[(play.ines, 0, ""), (play.ines, 0, "")])
    draft = Character.objects.create(campaign=play.campaign, owner=play.ana, name="Borrador")
    with pytest.raises(ValidationError, match="no es un personaje de esta partida"):
        _start(play, exposures=[(draft, 0, "")])
    assert not HorrorTest.objects.exists()
    # NPCs may be exposed too.
    assert _start(play, exposures=[(play.npc, 0, "")]).exposures.get().character == play.npc


def test_who_may_roll(play):
    test = _start(play, exposures=[(play.ines, 0, ""), (play.npc, 0, "")])
    with pytest.raises(PermissionDenied):
        horror.exposure_roll(exposure=_exposure(test, play.ines), actor=play.bruno)
    with pytest.raises(PermissionDenied):
        horror.exposure_roll(exposure=_exposure(test, play.ines), actor=play.reader)
    with pytest.raises(PermissionDenied):
        horror.exposure_roll(exposure=_exposure(test, play.npc), actor=play.ana)
    assert horror.exposure_roll(exposure=_exposure(test, play.npc), actor=play.gm).table_roll is not None


def test_a_seed_spent_on_another_roll_is_refused(play):
    seed = client_seed()
    test = _start(play)
    horror.exposure_roll(exposure=_exposure(test, play.ines), actor=play.gm, client_seed=seed)
    with pytest.raises(ValidationError, match="semilla ya se usó"):
        horror.exposure_roll(exposure=_exposure(test, play.tomas), actor=play.gm, client_seed=seed)
    assert _exposure(test, play.tomas).resolved_at is None


# --- the pages --------------------------------------------------------------------------------


def test_page_lists_tests_with_cards_loss_and_meter(play, fixed_dice):
    fixed_dice.append([2, 5, 6])
    test = _start(play, exposures=[(play.ines, -1, "Corto de vista"), (play.tomas, 0, "")])
    horror.exposure_roll(exposure=_exposure(test, play.ines), actor=play.ana)
    response = client_for(play.ana).get(_url(play))
    assertContains(response, "Un rostro en la ventana")
    assertContains(response, "Nivel Estupor (-1 por «Corto de vista»)")
    assertContains(response, 'class="roll-card card"', count=1)
    # Estupor fails (7 + 5 < 15): loses m = 2.
    assertContains(response, "Pierde 2 de Estabilidad Mental (m).")
    assertContains(response, "2 de 21 perdidos · Cuerdo")
    # Ana may not roll for Tomás; his row waits.
    assertContains(response, "Pendiente de tirar Entereza.")
    assertNotContains(response, "Tirar Entereza (")
    assertNotContains(response, "Exponer al horror")
    assertContains(response, "<html", count=1)


def test_gm_sees_the_start_form_and_every_roll_button(play):
    _start(play)
    response = client_for(play.gm).get(_url(play))
    assertContains(response, "Exponer al horror")
    assertContains(response, "Miedo — dificultad 15 // pierde m o M")
    assertContains(response, f'name="expuesto_{play.npc.pk}"')
    assertContains(response, "Tirar Entereza (7 contra 15)", count=2)
    assertContains(response, 'name="client_seed"', count=2)


def test_htmx_get_returns_the_board_only(play):
    _start(play)
    response = client_for(play.reader).get(_url(play), headers={"HX-Request": "true"})
    assertContains(response, 'id="horror-board"')
    assertNotContains(response, "<html")
    assert response["Vary"] == "HX-Request" or "HX-Request" in response["Vary"]


def test_outsiders_and_hidden_scenes_get_404(private_play):
    play = private_play
    assert client_for(play.outsider).get(_url(play)).status_code == 404
    assert client_for(None).get(_url(play)).status_code == 404
    secret = Scene.objects.create(campaign=play.campaign, title="Sótano", everyone=False)
    url = reverse("hitos:horror", args=[play.campaign.slug, secret.pk])
    assert client_for(play.ana).get(url).status_code == 404
    assert client_for(play.gm).get(url).status_code == 200
    assert client_for(play.outsider).post(_url(play, "hitos:horror-start")).status_code == 404


def test_gm_starts_a_test_through_the_form(play):
    data = {
        "level": "panico",
        "description": "La cosa del pozo",
        f"expuesto_{play.ines.pk}": "on",
        f"nivel_{play.ines.pk}": "-1",
        f"aspecto_{play.ines.pk}": "Niebla",
        f"nivel_{play.tomas.pk}": "0",
        f"nivel_{play.npc.pk}": "0",
    }
    response = client_for(play.gm).post(_url(play, "hitos:horror-start"), data)
    assert response.status_code == 302 and response["Location"] == _url(play)
    test = HorrorTest.objects.get()
    assert (test.level, test.description, test.created_by) == ("panico", "La cosa del pozo", play.gm)
    exposure = test.exposures.get()
    assert (exposure.character, exposure.shift, exposure.shift_reason) == (play.ines, -1, "Niebla")


def test_htmx_start_reloads_the_page_and_errors_keep_what_was_typed(play):
    client = client_for(play.gm)
    bad = {"level": "miedo", "description": "Crujidos <b>raros</b>", f"nivel_{play.ines.pk}": "0"}
    response = client.post(_url(play, "hitos:horror-start"), bad, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assertContains(response, "Elige al menos un personaje expuesto.")
    assertContains(response, "Crujidos &lt;b&gt;raros&lt;/b&gt;")
    assertNotContains(response, "<html")
    bad[f"expuesto_{play.ines.pk}"] = "on"
    bad[f"nivel_{play.ines.pk}"] = "1"
    response = client.post(_url(play, "hitos:horror-start"), bad, headers={"HX-Request": "true"})
    assertContains(response, "Indica el aspecto que cambia el nivel de Inés Salcedo.")
    assert not HorrorTest.objects.exists()
    bad[f"aspecto_{play.ines.pk}"] = "Ruidos en la pared"
    response = client.post(_url(play, "hitos:horror-start"), bad, headers={"HX-Request": "true"})
    assert response.status_code == 200 and response["HX-Redirect"] == _url(play)
    assert HorrorTest.objects.get().exposures.get().shift == 1


@pytest.mark.parametrize("who", ["ana", "reader"])
def test_members_who_are_not_the_gm_cannot_start(play, who):
    response = client_for(getattr(play, who)).post(_url(play, "hitos:horror-start"), {"level": "miedo"})
    assert response.status_code == 403
    assert not HorrorTest.objects.exists()


def test_start_and_roll_are_post_only(play):
    test = _start(play)
    client = client_for(play.gm)
    assert client.get(_url(play, "hitos:horror-start")).status_code == 405
    assert client.get(_url(play, "hitos:horror-roll", _exposure(test, play.ines).pk)).status_code == 405


def test_player_rolls_through_the_page_and_htmx_swaps_the_row(play):
    test = _start(play)
    exposure = _exposure(test, play.ines)
    seed = client_seed()
    response = client_for(play.ana).post(
        _url(play, "hitos:horror-roll", exposure.pk), {"client_seed": seed}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    assertContains(response, f'id="exposicion-{exposure.pk}"')
    assertContains(response, 'class="roll-card card"', count=1)
    assertNotContains(response, "<html")
    exposure.refresh_from_db()
    assert exposure.table_roll.first.entry["client_seed"] == seed
    # A second try shows the refusal in the row.
    response = client_for(play.gm).post(
        _url(play, "hitos:horror-roll", exposure.pk), {"client_seed": client_seed()}, headers={"HX-Request": "true"}
    )
    assertContains(response, "Inés Salcedo ya ha hecho esta prueba de horror.")


def test_player_rolls_without_htmx_and_is_redirected(play):
    test = _start(play)
    exposure = _exposure(test, play.ines)
    response = client_for(play.ana).post(_url(play, "hitos:horror-roll", exposure.pk), {"client_seed": ""})
    assert response.status_code == 302
    assert response["Location"] == _url(play) + f"#exposicion-{exposure.pk}"
    exposure.refresh_from_db()
    assert exposure.table_roll.first.entry["client_seed_source"] == "server"


@pytest.mark.parametrize("who", ["bruno", "reader"])
def test_others_cannot_roll_for_a_character(play, who):
    test = _start(play)
    exposure = _exposure(test, play.ines)
    response = client_for(getattr(play, who)).post(_url(play, "hitos:horror-roll", exposure.pk))
    assert response.status_code == 403
    exposure.refresh_from_db()
    assert exposure.resolved_at is None


def test_an_exposure_of_another_scene_is_404(play):
    test = _start(play)
    other = Scene.objects.create(campaign=play.campaign, title="Jardín")
    url = reverse("hitos:horror-roll", args=[play.campaign.slug, other.pk, _exposure(test, play.ines).pk])
    assert client_for(play.gm).post(url).status_code == 404


def test_description_and_aspects_are_escaped(play):
    test = _start(
        play,
        description="<script>alert(1)</script>",
        exposures=[(play.ines, 1, "<img src=x onerror=alert(1)>")],
    )
    horror.exposure_roll(exposure=_exposure(test, play.ines), actor=play.gm)
    response = client_for(play.ana).get(_url(play))
    assertNotContains(response, "<script>alert(1)</script>")
    assertNotContains(response, "<img src=x")
    assertContains(response, "&lt;script&gt;alert(1)&lt;/script&gt;")


@pytest.mark.parametrize("who", ["anonymous", "ana", "gm"])
def test_queries_do_not_grow_with_the_tests(play, who, django_assert_max_num_queries):
    user = {"anonymous": None, "ana": play.ana, "gm": play.gm}[who]
    client = client_for(user)

    def add():
        test = _start(play, exposures=[(play.ines, 0, ""), (play.tomas, 1, "Niebla"), (play.npc, 0, "")])
        horror.exposure_roll(exposure=_exposure(test, play.ines), actor=play.gm)
        horror.exposure_roll(exposure=_exposure(test, play.tomas), actor=play.gm)

    add()
    with django_assert_max_num_queries(30) as few:
        assert client.get(_url(play)).status_code == 200
    for _ in range(5):
        add()
    with django_assert_max_num_queries(len(few)):
        response = client.get(_url(play))
    assertContains(response, 'class="roll-card card"', count=12)


def test_every_horror_level_has_a_catalogue_name():
    from rules.hitos_health import HORROR_LEVELS
    from systems.hitos.horror.services import HORROR_LEVEL_NAMES

    assert tuple(level.label for level in HORROR_LEVELS) == HORROR_LEVEL_NAMES


def test_exposed_players_are_asked_to_roll(play):
    from campaigns.models import Notification
    from systems.hitos.horror import services as horror_services

    horror_services.horror_start(
        scene=play.scene,
        actor=play.gm,
        level="miedo",
        description="Un rostro en la ventana",
        exposures=[(play.ines, 0, ""), (play.npc, 0, "")],
    )
    notification = Notification.objects.get(kind=Notification.Kind.REQUEST)
    assert notification.user == play.ana
    assert "Inés Salcedo" in notification.text and "tira Entereza" in notification.text
    assert notification.url.endswith(f"/escenas/{play.scene.pk}/horror/")
