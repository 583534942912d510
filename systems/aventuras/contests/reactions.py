"""Reactions to an action (A14–A18). Interface used by the rolls package;
the reactions helper fills it in."""

from __future__ import annotations


def open_reactions(action, targets, *, by) -> list:
    """One open reaction per target of ``action`` (A18), in the caller's transaction."""
    return []


def open_for(character):
    """The open reactions ``character`` may answer from a post."""
    from systems.aventuras.models import AventurasReaction

    return AventurasReaction.objects.none()


def answer(reaction, table_roll, *, by) -> None:
    """``table_roll`` is ``reaction``'s roll (made from a post's row)."""


def card_reactions(table_rolls, *, access) -> dict[int, dict]:
    """Per action roll id, what its card shows of its reactions, in constant queries."""
    return {}
