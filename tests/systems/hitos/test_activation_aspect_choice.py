"""The aspect re-roll forms choose no aspect for the player (issue 14): the
list opens on an empty "Elige un aspecto" and asks for a choice; only when
there is exactly one aspect, and it is not a complication, is it chosen
beforehand. The in-card form (htmx) is the same form."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from systems.hitos.activations.forms import NegativeActivationForm, PositiveActivationForm
from systems.hitos.activations.services import AspectOption
from systems.hitos.models import Activation, Aspect
from tests.conftest import client_for
from tests.factories import AspectFactory
from tests.systems.hitos.test_activations import counts, roll_for

HTMX = {"HX-Request": "true"}
PAYMENTS = [("point", "Un punto dramático")]


@pytest.fixture
def roll(play):
    # Inés's complication sorts first among her aspects ("complication" < "hito").
    AspectFactory(character=play.ines, kind=Aspect.Kind.COMPLICATION, phrase="Miedo a la oscuridad")
    return roll_for(play)


def _select(html: str, name: str = "aspect") -> str:
    found = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', html, re.S)
    assert found is not None
    return found.group(1)


def _selected(html: str) -> list[str]:
    return re.findall(r'<option value="([^"]*)"[^>]*\bselected\b', _select(html))


@pytest.mark.parametrize("headers", [{}, HTMX], ids=["page", "htmx"])
def test_the_positive_form_chooses_no_aspect(play, roll, headers):
    response = client_for(play.ana).get(reverse("hitos:activation-positive", args=[roll.pk]), headers=headers)
    html = response.content.decode()
    assert response.status_code == 200 and ("<html" in html) == (not headers)
    options = _select(html)
    assert options.lstrip().startswith('<option value="" selected>Elige un aspecto</option>')
    assert "Miedo a la oscuridad (Inés Salcedo)" in options
    assert _selected(html) == [""]


@pytest.mark.parametrize("headers", [{}, HTMX], ids=["page", "htmx"])
def test_the_negative_form_chooses_no_aspect(play, roll, headers):
    response = client_for(play.gm).get(reverse("hitos:activation-negative", args=[roll.pk]), headers=headers)
    html = response.content.decode()
    assert response.status_code == 200
    assert "Miedo a la oscuridad (Inés Salcedo)" in _select(html)
    assert _selected(html) == [""]


def test_no_aspect_chosen_is_refused_in_spanish_and_changes_nothing(play, roll):
    before = counts()
    response = client_for(play.ana).post(
        reverse("hitos:activation-positive", args=[roll.pk]), {"aspect": "", "payment": "point", "dice": ["0"]}
    )
    assert response.status_code == 200
    assert "Elige el aspecto que activas." in response.content.decode()
    assert counts() == before
    response = client_for(play.gm).post(
        reverse("hitos:activation-negative", args=[roll.pk]), {"aspect": "", "dice": ["0"]}, headers=HTMX
    )
    assert response["HX-Retarget"] == f"#activacion-{roll.pk}"
    assert "Elige el aspecto que activas." in response.content.decode()
    assert counts() == before and not Activation.objects.exists()


def _option(kind: str, pk: int = 1) -> AspectOption:
    aspect = Aspect(pk=pk, kind=kind, phrase=f"Aspecto {kind}")
    return AspectOption(f"a{pk}", f"Aspecto {kind} (Inés)", aspect.phrase, aspect=aspect, own=True)


def test_a_single_aspect_is_chosen_beforehand_unless_it_is_a_complication():
    hito = PositiveActivationForm(aspects=[_option(Aspect.Kind.HITO)], payments=PAYMENTS)
    assert hito["aspect"].value() == "a1"
    complication = PositiveActivationForm(aspects=[_option(Aspect.Kind.COMPLICATION)], payments=PAYMENTS)
    assert complication["aspect"].value() == ""
    scene = AspectOption("s1", "Oscuridad (situación)", "Oscuridad")
    assert PositiveActivationForm(aspects=[scene], payments=PAYMENTS)["aspect"].value() == "s1"
    two = [_option(Aspect.Kind.HITO, 1), _option(Aspect.Kind.CONCEPT, 2)]
    assert PositiveActivationForm(aspects=two, payments=PAYMENTS)["aspect"].value() == ""
    # The GM may also write an aspect of their own: nothing is chosen for them.
    assert not NegativeActivationForm(aspects=[_option(Aspect.Kind.HITO)], free_text=True)["aspect"].value()
    assert NegativeActivationForm(aspects=[_option(Aspect.Kind.HITO)], free_text=False)["aspect"].value() == "a1"
