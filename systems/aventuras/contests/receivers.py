"""Reactions, competitions and cooperations listen to ``roll_settled`` here."""

from __future__ import annotations

from django.dispatch import receiver

from systems.aventuras.signals import roll_settled


@receiver(roll_settled, dispatch_uid="aventuras-contests-settled")
def contest_roll_settled(sender, table_roll, **kwargs) -> None:
    """A13/A19 — a participant's roll became final: resolve its contest once
    everyone's is (in the transaction that settled the roll). Reactions need
    nothing here: the card reads their result from the final rolls."""
    from systems.aventuras.contests.services import on_settled

    on_settled(table_roll)
