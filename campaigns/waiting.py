"""(being written)"""

from __future__ import annotations


def digest_items(user) -> list[tuple[str, str, str]]:
    return []
