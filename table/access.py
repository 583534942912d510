"""The table's access helpers, shared by the table's and the game systems'
views (the campaign itself: ``campaigns.access.campaign_for``).

Each loads what the user may see and says 404 otherwise (outsiders of a
private campaign, a scene they cannot see, a whisper); ``need`` is a
predicate on the ``Access`` (``perms.can_manage``, ``perms.can_play`` …)
and a member it refuses gets 403 with ``denied`` as the message.
"""

from __future__ import annotations

from django.http import Http404, HttpRequest
from django.shortcuts import get_object_or_404

from campaigns import fragments as site_fragments
from campaigns import permissions as perms
from campaigns.access import Need, campaign_for, require
from campaigns.models import Campaign, Scene
from campaigns.permissions import Access
from rolls.models import LogHeadMismatch, head_broken
from table.models import TableRoll


def scene_for(
    request: HttpRequest,
    slug: str,
    scene_id: int,
    *,
    need: Need | None = None,
    denied: str | None = None,
    offgame: bool = False,
) -> tuple[Scene, Access]:
    """The scene of a tool at the table if the user may read it (404:
    private campaign, hidden scene, or the off-game scene, which has no
    table tools: only the scene page itself asks with ``offgame=True``),
    and ``need`` allows (403)."""
    campaign, access = campaign_for(request, slug)
    scene = get_object_or_404(Scene, campaign=campaign, pk=scene_id)
    if scene.is_offgame and not offgame:
        raise Http404
    # Who was chosen matters only for a scene not open to every member.
    chosen = set() if scene.everyone or access.is_gm else set(scene.participants.values_list("pk", flat=True))
    if not perms.can_view_scene(access, scene, chosen):
        raise Http404
    scene.campaign = campaign
    require(access, need, denied)
    return scene, access


def scene_for_reading(request: HttpRequest, slug: str, scene_id: int) -> tuple[Scene, Access, tuple[int, ...]]:
    """``scene_for`` (with the off-game scene) for a page that only reads:
    the membership as the cache keeps it under the campaign's content
    version (``campaigns.fragments.reader_access``), and that version with
    the people's, for the page's cached parts: ``(scene, access, versions)``.
    Actions load the scene with ``scene_for``, which asks the database.
    The scene's rolls are not shown under a log head that does not name the
    last entry (``LogHeadMismatch``, checked in the campaign's own query)."""
    campaign = get_object_or_404(
        Campaign.objects.select_related("gm").annotate(roll_log_broken=head_broken()), slug=slug
    )
    content_versions = site_fragments.versions(site_fragments.campaign_scope(campaign.pk), site_fragments.PEOPLE)
    access = site_fragments.reader_access(request.user, campaign, content_versions[0])
    if not perms.can_view_campaign(access):
        raise Http404
    scene = get_object_or_404(Scene, campaign=campaign, pk=scene_id)
    chosen = set() if scene.everyone or access.is_gm else set(scene.participants.values_list("pk", flat=True))
    if not perms.can_view_scene(access, scene, chosen):
        raise Http404
    if campaign.roll_log_broken:
        raise LogHeadMismatch(campaign)
    scene.campaign = campaign
    return scene, access, content_versions


def may_read_table_roll(access: Access, table_roll: TableRoll) -> bool:
    """Whether the roll is in sight: a post the user may read, or a scene they see."""
    if not perms.can_view_campaign(access):
        return False
    if table_roll.post is not None:
        table_roll.post.scene.campaign = table_roll.campaign
        return perms.can_read_post(access, table_roll.post)
    return not table_roll.scene_id or perms.visible_scenes(access).filter(pk=table_roll.scene_id).exists()
