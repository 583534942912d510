"""Whose turn it is and the deadlines, on the pages: the parts the status
module puts around the cached pages (``scene_part``, ``campaign_part``,
``home_part``, ``dashboard_part``). The direction's actions are in
``campaigns.waiting_actions``.

The parts change with the clock, so they are rendered on every request and
never cached; each runs a constant number of queries.
"""

from __future__ import annotations

from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils import timezone

from campaigns import deadlines, extensions, forms_waiting, waiting
from campaigns import permissions as perms
from campaigns.models import Deadline, Scene
from campaigns.permissions import Access
from hitos_site.htmx import wants_fragment

# --- the parts around the pages ------------------------------------------------------------


def scene_context(
    request: HttpRequest, scene: Scene, access: Access, *, error: str = "", form=None, open: bool = False
) -> dict:
    """``open``: unfolded even as a fragment (after one of the direction's
    actions, which answer htmx with the region again)."""
    campaign = scene.campaign
    items = waiting.waiting_in([campaign], scene_ids=[scene.pk], viewer_access=access)
    deadline = deadlines.open_for(deadlines.SCENE, [scene.pk]).get(scene.pk)
    if deadline is not None:
        deadline.campaign = campaign
    can_manage = perms.can_manage(access)
    if can_manage and form is None:
        initial = {}
        if deadline is not None:
            zone = deadlines.campaign_zone(campaign)
            initial = {
                "plazo": timezone.localtime(deadline.due_at, zone).strftime("%Y-%m-%dT%H:%M"),
                "recordar": str(int(deadline.remind_before.total_seconds())),
            }
        form = forms_waiting.SceneDeadlineForm(campaign=campaign, initial=initial)
    return {
        "campaign": campaign,
        "scene": scene,
        "access": access,
        "rows": waiting.rows(items, [campaign], nudges=can_manage),
        "deadline": deadline,
        "deadline_passed": deadline is not None and deadline.due_at <= timezone.now(),
        "can_manage": can_manage,
        "form": form,
        "error": error,
        # Folded on the scene page (loaded by htmx above the posts, where a
        # phone must still show the first post), open on a page of its own,
        # and open again when it has something to say (an error, a refused
        # form) or after the direction's action in it.
        "open": open or not wants_fragment(request) or bool(error) or bool(form is not None and form.errors),
    }


def scene_part(request, scene, access, **extra) -> str:
    """This scene: who is awaited for what, its deadline, and for the
    direction the nudge buttons and the deadline form (``extra``: an error,
    a refused form to show again, ``open`` after an action)."""
    context = scene_context(request, scene, access, **extra)
    return render_to_string("campaigns/waiting/scene.html", context, request=request)


def campaign_part(request, campaign, access) -> str:
    """Per open scene the viewer sees, «Esperando a Ana, Bruno» and the
    scene's soonest deadline."""
    visible = list(
        perms.visible_scenes(access)
        .filter(status=Scene.Status.OPEN, is_offgame=False)
        .order_by()
        .values_list("pk", flat=True)
    )
    if not visible:
        return ""
    items = waiting.waiting_in([campaign], scene_ids=visible, viewer_access=access)
    scenes: dict[int, dict] = {}
    for row in waiting.rows(items, [campaign]):
        entry = scenes.setdefault(row.scene.pk, {"scene": row.scene, "rows": [], "deadline": None})
        entry["rows"].append(row)
        if row.deadline is not None and (entry["deadline"] is None or row.deadline.due_at < entry["deadline"].due_at):
            entry["deadline"] = row.deadline
    if not scenes:
        return ""
    context = {"campaign": campaign, "scenes": list(scenes.values())}
    return render_to_string("campaigns/waiting/campaign.html", context, request=request)


def dashboard_part(request, campaign, access) -> str:
    """For the direction: the deadlines that passed and wait to be settled,
    and the open ones."""
    if not perms.can_manage(access):
        return ""
    now = timezone.now()
    passed, upcoming = [], []
    found = list(Deadline.objects.open().filter(campaign=campaign).select_related("scene").order_by("due_at", "pk"))
    for deadline in found:
        deadline.campaign = campaign
    # Where to answer each one, a constant number of queries per kind.
    urls = deadlines.target_urls(found)
    for deadline in found:
        kind = extensions.deadline_kind(deadline.kind)
        deadline.kind_label = kind.label() if kind else deadline.kind
        deadline.target_url = urls[deadline.pk]
        (passed if deadline.due_at <= now else upcoming).append(deadline)
    context = {"campaign": campaign, "passed": passed, "upcoming": upcoming}
    return render_to_string("campaigns/waiting/dashboard.html", context, request=request)


def home_part(request) -> str:
    """«Pendiente»: what waits for the signed-in user across their active
    campaigns, soonest deadline first (the digest's list too)."""
    user = request.user
    if not user.is_authenticated:
        return ""
    campaigns = list(waiting.active_campaigns_of(user))
    if not campaigns:
        # Someone who plays nowhere yet: the home page's own empty state says what to do.
        return ""
    items = waiting.waiting_in(campaigns, user_id=user.pk)
    context = {"rows": waiting.rows(items, campaigns)}
    return render_to_string("campaigns/waiting/home.html", context, request=request)
