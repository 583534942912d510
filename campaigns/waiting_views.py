"""(being written)"""

from __future__ import annotations


def campaign_part(request, campaign, access) -> str:
    return ""


def scene_part(request, scene, access) -> str:
    return ""


def dashboard_part(request, campaign, access) -> str:
    return ""


def home_part(request) -> str:
    return ""
