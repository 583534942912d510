"""Reactions, competitions and cooperations listen to ``roll_settled`` here."""
