"""The campaign's posting rhythm (issue 17 item 5), for the campaign page."""

from __future__ import annotations


def campaign_pace(campaign, access):
    """What the campaign page shows of the rhythm to this reader (``campaigns/_pace.html``), or None."""
    return None
