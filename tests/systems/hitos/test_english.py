"""HITOS in English (issue 14): what the rules hand back as keys and numbers
(derived-score formulas, skill categories, the creation budget, the
Degeneración levels, health and mental states, the steps of a Defensa, a
critical's proposal) is worded in the reader's language on the sheet and
the combat page, and the Spanish stays as it was."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import translation

from campaigns.permissions import campaign_access
from rules.hitos_drama import DEGENERACION_LEVELS
from rules.hitos_options import HitosOptions
from rules.hitos_scores import SKILL_CATEGORIES, BudgetWarning, Characteristics, derived_scores
from systems.hitos import texts
from systems.hitos.combat import services as combat_services
from systems.hitos.models import Combatant, HitosSheet, Skill
from tests.conftest import client_for

HTMX = {"HX-Request": "true"}


@pytest.fixture(autouse=True)
def _language_restored():
    """A request by an English reader leaves English active in the thread
    (the middleware activates the reader's language): later tests in this
    process expect the language they started with."""
    language = translation.get_language()
    yield
    translation.activate(language)


def _speak(*users, language: str = "en") -> None:
    for user in users:
        user.language = language
        user.save(update_fields=["language"])


def _prepare_sheet(play) -> HitosSheet:
    """Inés with Subterfugio and Degeneración 2 (her factory sheet: Fortaleza 5,
    Reflejos 6, Voluntad 5, Intelecto 5, Combate 4)."""
    Skill.objects.create(character=play.ines, name="Sigilo", category="subterfugio", value=3)
    sheet = play.ines.hitos
    sheet.degeneracion = 2
    sheet.save(update_fields=["degeneracion"])
    return sheet


# --- the words, from the rules' data -------------------------------------------------


# H31 — «Es igual a su Fortaleza más la mitad de su Voluntad, redondeando hacia abajo»
# H33 — «La Defensa de un personaje es su característica Reflejos más su habilidad de»
def test_the_formulas_read_as_before_in_spanish_and_in_english():
    scores = texts.shown_scores(derived_scores(Characteristics(4, 3, 5, 7), combate=3, defence_skill=1))
    with translation.override("es"):
        assert scores["aguante"].label == "Aguante"
        assert scores["aguante"].formula == "Fortaleza + Voluntad ÷ 2 (redondeando hacia abajo)"
        assert scores["defensa"].formula == "Reflejos + la habilidad de combate o defensa más alta + 5"
        assert scores["bono_cuerpo_a_cuerpo"].label == "Bonificación al daño cuerpo a cuerpo"
        assert scores["bono_cuerpo_a_cuerpo"].formula == "(Fortaleza + Combate) ÷ 4 (redondeando hacia abajo)"
        assert scores["estabilidad"].formula == "Entereza × 3"
    with translation.override("en"):
        assert scores["aguante"].formula == "Fortaleza + Voluntad ÷ 2 (rounding down)"
        assert scores["defensa"].formula == "Reflejos + the higher combat or defence skill + 5"
        assert scores["bono_cuerpo_a_cuerpo"].label == "Melee damage bonus"
        assert scores["bono_distancia"].label == "Ranged damage bonus"
        assert scores["resistencia"].formula == "Aguante × 3"
    assert scores["aguante"].worked == "4 + 5 ÷ 2 = 6"


# K10 — the rounding option: halves rounded to nearest read «redondeando» / «rounding».
def test_the_rounding_option_is_worded():
    scores = texts.shown_scores(derived_scores(Characteristics(4, 3, 5, 7), options=HitosOptions(rounding="nearest")))
    with translation.override("es"):
        assert scores["iniciativa"].formula == "Reflejos + Intelecto ÷ 2 (redondeando)"
    with translation.override("en"):
        assert scores["iniciativa"].formula == "Reflejos + Intelecto ÷ 2 (rounding)"


def test_every_key_the_rules_hand_back_has_words():
    assert set(texts.SKILL_CATEGORY_LABELS) == set(SKILL_CATEGORIES)
    assert set(texts.DEGENERACION_TEXTS) == set(DEGENERACION_LEVELS)
    scores = derived_scores(Characteristics(4, 3, 5, 7))
    assert set(texts.SCORE_LABELS) == set(scores)
    assert {term for score in scores.values() for term in score.terms} <= set(texts.TERM_LABELS)


def test_skill_categories_are_translated_choices():
    with translation.override("es"):
        assert [str(label) for _key, label in texts.SKILL_CATEGORY_CHOICES][:3] == [
            "Forma Física",
            "Combate",
            "Interacción",
        ]
    with translation.override("en"):
        labels = dict((key, str(label)) for key, label in texts.SKILL_CATEGORY_CHOICES)
        assert labels["forma_fisica"] == "Physical Fitness"
        assert labels["subterfugio"] == "Subterfuge"
        assert labels["arcana"] == "Arcane Skill"


# S000 — «Elige al menos una habilidad de profesión para tu personaje».
def test_budget_warnings_are_worded_in_each_language():
    warnings = [BudgetWarning("characteristics", 21, 20), BudgetWarning("profesion_missing")]
    with translation.override("es"):
        assert texts.budget_warning_texts(warnings) == [
            "Características: 21 puntos repartidos; la partida prevé 20.",
            "Falta al menos una habilidad de Profesión.",
        ]
    with translation.override("en"):
        assert texts.budget_warning_texts(warnings) == [
            "Characteristics: 21 points spent; the campaign expects 20.",
            "At least one Profession skill is missing.",
        ]
    with pytest.raises(ValueError, match="Unknown budget warning"):
        texts.budget_warning_text(BudgetWarning("dinero", 1, 2))


# S001 «Interpretar los puntos de degeneración» — «0: El personaje es completamente humano.»
def test_degeneracion_levels_keep_s001s_words_in_spanish_and_read_in_english():
    with translation.override("es"):
        assert texts.degeneracion_text(0) == "El personaje es completamente humano."
        assert texts.degeneracion_text(10).endswith("controlado por del director de juego.")
        spanish = [texts.degeneracion_text(level) for level in range(len(DEGENERACION_LEVELS))]
    with translation.override("en"):
        assert texts.degeneracion_text(0) == "The character is completely human."
        assert texts.degeneracion_text(10).endswith("controlled by the game master.")
        english = [texts.degeneracion_text(level) for level in range(len(DEGENERACION_LEVELS))]
    # Every level is translated: none reads in Spanish in English.
    assert all(es != en for es, en in zip(spanish, english, strict=True))
    with pytest.raises(ValueError):
        texts.degeneracion_text(11)


# --- the sheet -----------------------------------------------------------------------


def test_the_sheet_reads_in_english_for_an_english_reader(play, django_assert_max_num_queries):
    _prepare_sheet(play)
    _speak(play.gm)
    client = client_for(play.gm)
    with django_assert_max_num_queries(12):
        page = client.get(play.ines.get_absolute_url())
    html = page.content.decode()
    assert "<html" in html
    assert "Fortaleza + Voluntad ÷ 2 (rounding down): 5 + 5 ÷ 2 = 7" in html
    assert "Reflejos + the higher combat or defence skill + 5: 6 + 4 + 5 = 15" in html
    assert "Melee damage bonus" in html and "Ranged damage bonus" in html
    assert "(Subterfuge)" in html
    assert "The change advances far enough for the character to realise that it is not normal." in html
    assert "Characteristics: 21 points spent; the campaign expects 20." in html
    assert "At least one Profession skill is missing." in html
    assert "State: Unhurt." in html
    for spanish in ("redondeando", "Bonificación", "(Subterfugio)", "El cambio avanza", "la partida prevé", "Sano"):
        assert spanish not in html, spanish
    # The meters' fragment (htmx) names the states in English too.
    fragment = client.get(play.ines.get_absolute_url(), headers=HTMX).content.decode()
    assert "<html" not in fragment
    assert "State: Unhurt." in fragment and "Wounded" in fragment


def test_the_sheet_reads_as_before_in_spanish(play):
    _prepare_sheet(play)
    html = client_for(play.gm).get(play.ines.get_absolute_url()).content.decode()
    assert "Fortaleza + Voluntad ÷ 2 (redondeando hacia abajo): 5 + 5 ÷ 2 = 7" in html
    assert "Reflejos + la habilidad de combate o defensa más alta + 5: 6 + 4 + 5 = 15" in html
    assert "Bonificación al daño cuerpo a cuerpo" in html
    assert "(Subterfugio)" in html
    assert "El cambio avanza lo suficiente como para que el personaje se dé cuenta de que no es normal." in html
    assert "Características: 21 puntos repartidos; la partida prevé 20." in html
    assert "Estado: Sano." in html


def test_the_live_preview_is_worded_in_english(play):
    _speak(play.ana)
    url = reverse("sheets:sheet-create", args=[play.campaign.slug])
    data = {
        "name": "Julia",
        "fortaleza": "9",
        "reflejos": "5",
        "voluntad": "8",
        "intelecto": "5",
        "skills-TOTAL_FORMS": "1",
        "skills-INITIAL_FORMS": "0",
        "skills-0-name": "Historia",
        "skills-0-category": "cultura",
        "skills-0-value": "3",
        "weapons-TOTAL_FORMS": "0",
        "weapons-INITIAL_FORMS": "0",
        "drama": "5",
        "preview": "1",
    }
    response = client_for(play.ana).post(url, data, headers=HTMX)
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="sheet-preview"')
    assert "Fortaleza + Voluntad ÷ 2 (rounding down): 9 + 8 ÷ 2 = 13" in html
    assert "Characteristics: 27 points spent; the campaign expects 20." in html
    assert "At least one Profession skill is missing." in html
    # The full form offers the categories in English.
    form = client_for(play.ana).get(url).content.decode()
    assert '<option value="forma_fisica">Physical Fitness</option>' in form


# --- the combat page -----------------------------------------------------------------


def _combat_with_a_critical(play, dice):
    combat = combat_services.combat_start(
        scene=play.scene,
        access=campaign_access(play.gm, play.campaign),
        characters=[play.ines, play.tomas, play.npc],
    )
    dice.extend([[10, 10, 3]])
    combat_services.attack_make(
        combat=combat,
        access=campaign_access(play.gm, play.campaign),
        attacker=Combatant.objects.get(combat=combat, character=play.ines),
        target=Combatant.objects.get(combat=combat, character=play.npc),
        weapon=play.ines.weapons.get(),
    )
    return combat


def test_the_combat_page_reads_in_english(play, dice):
    _combat_with_a_critical(play, dice)
    _speak(play.gm)
    url = reverse("hitos:combat", args=[play.campaign.slug, play.scene.pk])
    html = client_for(play.gm).get(url).content.decode()
    assert "<title>Combat · El vestíbulo" in html
    assert '<h1 class="h3">Combat</h1>' in html
    assert ">Roll initiative</button>" in html
    assert html.count(">caught off guard</span>") == 2
    # H38 — the unprepared target's Defensa, step by step.
    assert "Defensa 15, caught off guard -2 = 13" in html
    # H48 — a double 10 proposes a temporary after-effect on the target for a scene.
    assert "Proposal: temporary after-effect for El mayordomo (one scene)." in html
    for spanish in ("Roll Iniciativa", "Tirar iniciativa", "desprevenido", "Propuesta", "una escena"):
        assert spanish not in html, spanish
    fragment = client_for(play.gm).get(url, headers=HTMX).content.decode()
    assert "<html" not in fragment and fragment.lstrip().startswith('<div id="combat-board">')
    assert ">Roll initiative</button>" in fragment and "caught off guard -2" in fragment


def test_the_combat_page_reads_as_before_in_spanish(play, dice):
    _combat_with_a_critical(play, dice)
    url = reverse("hitos:combat", args=[play.campaign.slug, play.scene.pk])
    html = client_for(play.gm).get(url).content.decode()
    assert '<h1 class="h3">Combate</h1>' in html
    assert ">Tirar iniciativa</button>" in html
    assert html.count(">desprevenido</span>") == 2
    assert "Defensa 15, desprevenido -2 = 13" in html
    assert "Propuesta: secuela temporal para El mayordomo (una escena)." in html


# --- the roll-request page -----------------------------------------------------------


def test_the_roll_request_page_reads_in_english(play):
    _speak(play.gm)
    url = reverse("table:request-create", args=[play.campaign.slug, play.scene.pk])
    html = client_for(play.gm).get(url).content.decode()
    assert "<title>Request a roll · El vestíbulo" in html
    assert "The player will see it in the post form" in html
    assert ">Request the roll</button>" in html
    assert "Hidden difficulty" in html and "What for" in html
    for spanish in ("Pedir", "El jugador la verá", "Dificultad oculta", "Para qué"):
        assert spanish not in html, spanish
    fragment = client_for(play.gm).get(url, headers=HTMX).content.decode()
    assert "<html" not in fragment and 'id="peticion"' in fragment and "Request the roll" in fragment
