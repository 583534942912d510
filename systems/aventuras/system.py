"""Hora de Aventuras as the table sees it (``table.systems.GameSystem``)."""

from __future__ import annotations

from django.utils.translation import gettext_lazy

from table.systems import GameSystem


class Aventuras(GameSystem):
    key = "aventuras"
    label = gettext_lazy("Hora de Aventuras")
