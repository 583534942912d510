"""The table's rows around the signed log (stored in ``rolls`` until the models move)."""

from rolls.models import RollRequest, TableRoll, TableRollKind

__all__ = ["RollRequest", "TableRoll", "TableRollKind"]
