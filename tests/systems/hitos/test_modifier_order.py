"""Every roll form asks for a modifier, then its reason (issue 14): the post
form's roll rows, the attack and the opposed roll."""

from __future__ import annotations

from systems.hitos.checks.forms import PostRollForm
from systems.hitos.combat.forms import AttackForm
from systems.hitos.horror.forms import OpposedStartForm


def _before(names: list[str], first: str, then: str) -> bool:
    return names.index(first) < names.index(then)


def test_a_post_roll_row_asks_each_modifier_then_its_reason():
    names = list(PostRollForm().fields)
    assert _before(names, "value_1", "reason_1")
    assert _before(names, "reason_1", "value_2")
    assert _before(names, "value_2", "reason_2")


def test_an_attack_asks_the_modifier_then_its_reason():
    names = list(AttackForm(combatants=[], attackers=[]).fields)
    assert _before(names, "modifier", "modifier_reason")


def test_each_side_of_an_opposed_roll_asks_the_modifier_then_its_reason():
    form = OpposedStartForm()
    # The page draws each side's fields in this order (hitos/opposed.html).
    for side, (_legend, fields) in zip(("primero", "segundo"), form.side_fields(), strict=True):
        names = [field.name for field in fields]
        assert _before(names, f"{side}_modificador", f"{side}_motivo")
