"""(being written)"""

from __future__ import annotations


def campaign_part(request, campaign, access) -> str:
    return ""
