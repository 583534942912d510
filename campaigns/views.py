"""Campaign, scene and post pages.

Every view loads its objects through the access helpers at the top: outsiders
get 404 for anything private, members without the right get 403.
"""

from __future__ import annotations

import functools
from copy import copy

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db import connection
from django.db.models import Count, Q
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from accounts.limits import refusal_message
from campaigns import absences, context_processors, extensions, fragments, invitations, notify, services, status
from campaigns import permissions as perms
from campaigns.access import campaign_for
from campaigns.forms import (
    ApplicationForm,
    CampaignForm,
    DecisionForm,
    InvitationForm,
    OptionalReasonForm,
    PostEditForm,
    ReasonForm,
    RoleForm,
    SceneForm,
    SearchForm,
)
from campaigns.models import (
    Application,
    Campaign,
    Invitation,
    Membership,
    ModerationLog,
    Notification,
    Post,
    PostReport,
    Role,
    Scene,
    SceneRead,
)
from campaigns.permissions import Access, Standing, campaign_access
from campaigns.threads import POSTS_PER_PAGE, members_of
from hitos_site.htmx import HtmxHttpRequest, after_action, page_or_fragment, redirect_after

HOME_PAGE_SIZE = 20
SEARCH_LIMIT = 50


# --- access helpers -------------------------------------------------------


def _campaign_for(request: HttpRequest, slug: str, *, manage: bool = False) -> tuple[Campaign, Access]:
    return campaign_for(
        request,
        slug,
        need=perms.can_manage if manage else None,
        denied=_("Solo la dirección de la partida puede hacer esto."),
    )


def _scene_for(request: HttpRequest, slug: str, scene_id: int, *, manage: bool = False) -> tuple[Scene, Access]:
    campaign, access = _campaign_for(request, slug, manage=manage)
    scene = get_object_or_404(perms.visible_scenes(access), pk=scene_id)
    scene.campaign = campaign
    return scene, access


def _post_for(request: HttpRequest, post_id: int) -> tuple[Post, Access]:
    post = get_object_or_404(Post.objects.select_related("scene__campaign__gm", "author", "character"), pk=post_id)
    access = campaign_access(request.user, post.scene.campaign)
    if not perms.can_read_post(access, post):
        raise Http404
    return post, access


def _unread_counts(user, campaigns) -> dict[int, int]:
    """New posts per campaign for a signed-in user, in one query.

    Counts posts in the scenes the user can see (everyone's scenes and the
    ones they were chosen for; every scene for campaigns they direct),
    addressed to them, not theirs, after their read marker.
    """
    if not user.is_authenticated or not campaigns:
        return {}
    ids = [c.pk for c in campaigns]
    cogm_of = Membership.objects.active().filter(user=user, role=Role.COGM).values_list("campaign", flat=True)
    directed = Campaign.objects.filter(Q(pk__in=[c.pk for c in campaigns if c.gm_id == user.pk]) | Q(pk__in=cogm_of))
    rows = (
        Post.objects.filter(scene__campaign__in=ids)
        .readable_by_member(user, directed=directed.values("pk"))
        .unread_by(user)
        .values("scene__campaign")
        .annotate(n=Count("pk", distinct=True))
    )
    return {row["scene__campaign"]: row["n"] for row in rows}


def _count_by_scene(posts) -> dict[int, int]:
    rows = posts.order_by().values("scene").annotate(n=Count("pk", distinct=True))
    return {row["scene"]: row["n"] for row in rows}


# --- home and campaigns ----------------------------------------------------


# What the home page's campaign lists show of a campaign and its GM.
LISTED_CAMPAIGN_FIELDS = ("title", "slug", "system", "visibility", "gm_id", "gm__username", "gm__display_name")


def _public_campaigns(request: HttpRequest, page: str | None) -> str:
    """The home page's list of public campaigns, one page of it, rendered."""
    public = Campaign.objects.public().select_related("gm").only(*LISTED_CAMPAIGN_FIELDS)
    page_obj = Paginator(public, HOME_PAGE_SIZE).get_page(page)
    return render_to_string(
        "campaigns/home.html#public-campaigns",
        {"public_campaigns": page_obj.object_list, "page_obj": page_obj},
        request=request,
    )


@functools.cache
def _read_marks_sql(*, in_campaign: bool) -> str:
    """The query ``_read_marks`` would build with the ORM, built once (every
    page view of a member asks it, and building it costs several times
    running it), with the navbar's unread notifications in the same trip."""
    quote = connection.ops.quote_name
    read, scene = SceneRead._meta, Scene._meta
    sql = (
        f"SELECT ({context_processors.unread_count_sql()}), "
        f"COUNT(*), SUM(r.{quote(read.get_field('last_post_id').column)}) FROM {quote(read.db_table)} r "
        f"WHERE r.{quote(read.get_field('user').column)} = %s"
    )
    if in_campaign:
        sql += (
            f" AND r.{quote(read.get_field('scene').column)} IN (SELECT s.{quote(scene.pk.column)} "
            f"FROM {quote(scene.db_table)} s WHERE s.{quote(scene.get_field('campaign').column)} = %s)"
        )
    return sql


def _read_marks(request: HttpRequest, campaign: Campaign | None = None) -> str:
    """Where the user's read markers stand (in ``campaign``, or everywhere):
    they only move forward, so their number and sum change whenever the user
    reads on (a key for what their unread counts depend on besides the posts)."""
    user = request.user
    with connection.cursor() as cursor:
        if campaign is None:
            cursor.execute(_read_marks_sql(in_campaign=False), [user.pk, user.pk])
        else:
            cursor.execute(_read_marks_sql(in_campaign=True), [user.pk, user.pk, campaign.pk])
        notifications, count, upto = cursor.fetchone()
    context_processors.unread_counted(request, notifications)
    return f"{count}.{upto or 0}"


def _my_campaigns(request: HttpRequest, mine: list[Campaign] | None = None) -> str:
    """The signed-in user's campaigns (``mine`` when already loaded) with
    their unread posts, rendered."""
    if mine is None:
        mine = list(Campaign.objects.of_user(request.user).select_related("gm").only(*LISTED_CAMPAIGN_FIELDS))
    unread = _unread_counts(request.user, mine)
    for campaign in mine:
        campaign.unread = unread.get(campaign.pk, 0)
    return render_to_string("campaigns/home.html#my-campaigns", {"my_campaigns": mine}, request=request)


def _my_campaigns_html(request: HttpRequest):
    """``_my_campaigns`` as the cache keeps it: until the user joins or
    leaves a campaign, one of them changes (a post, a scene, a member) or the
    user reads on."""
    user = request.user
    loaded: dict[str, list[Campaign]] = {}

    def load() -> list[int]:
        loaded["mine"] = list(Campaign.objects.of_user(user).select_related("gm").only(*LISTED_CAMPAIGN_FIELDS))
        return [campaign.pk for campaign in loaded["mine"]]

    member, people, ids, campaign_versions = fragments.member_campaigns(user, load)
    mine = loaded.get("mine")
    key = fragments.key(
        "my-campaigns", user.pk, member, people, fragments.digest(ids, campaign_versions), _read_marks(request)
    )
    return fragments.fragment(request, key, lambda: _my_campaigns(request, mine))


@require_safe
def home(request: HtmxHttpRequest) -> HttpResponse:
    page = request.GET.get("pagina") or "1"
    if page.isascii() and page.isdigit() and len(page) <= 6:
        # Everyone sees the same list: kept until a campaign or a name changes.
        key = fragments.key("home-public", *fragments.versions(fragments.PUBLIC, fragments.PEOPLE), page)
        public_html = fragments.fragment(request, key, lambda: _public_campaigns(request, page))
    else:
        public_html = mark_safe(_public_campaigns(request, page))  # our own template's output
    mine_html = _my_campaigns_html(request) if request.user.is_authenticated else ""
    context = {
        "public_html": public_html,
        "my_campaigns_html": mine_html,
        "pending_html": status.home_status_html(request),
    }
    return render(request, "campaigns/home.html", context)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def campaign_create(request: HtmxHttpRequest) -> HttpResponse:
    form = CampaignForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        campaign = services.campaign_create(gm=request.user, **form.cleaned_data)
        messages.success(
            request, _("Partida creada. Empieza por escribir la primera escena e invitar a tus jugadores.")
        )
        return redirect(campaign)
    return render(request, "campaigns/campaign_form.html", {"form": form, "creating": True})


def _campaign_page(request: HttpRequest, campaign: Campaign, access: Access, *, pending: bool) -> str:
    """The campaign page's content for this reader, rendered."""
    scenes = list(
        perms.visible_scenes(access).only("campaign_id", "title", "status", "everyone", "position", "is_offgame")
    )
    # Count only the posts this user may read: whispers to others are not
    # even counted, and a scene's chosen members must not multiply the rows.
    readable = Post.objects.filter(scene__in=[s.pk for s in scenes]).addressed_to(request.user, is_gm=access.is_gm)
    post_counts = _count_by_scene(readable) if scenes else {}
    unread_by_scene = {}
    if access.is_member and scenes:
        unread_by_scene = _count_by_scene(readable.unread_by(request.user))
    for scene in scenes:
        scene.campaign = campaign
        scene.post_count = post_counts.get(scene.pk, 0)
        scene.unread = unread_by_scene.get(scene.pk, 0)
    memberships = list(
        Membership.objects.active()
        .filter(campaign=campaign)
        .select_related("user")
        .only("role", "user__username", "user__display_name")
    )
    # Who is away today, beside their name, for members (one query; the day
    # is in the page's key): a note may be personal.
    away = absences.away_for_request(request, campaign) if access.is_member else {}
    for membership in memberships:
        membership.absence = away.get(membership.user_id)
    context = {
        "campaign": campaign,
        "access": access,
        "scenes": scenes,
        # The story has not started while only the off-game scene is there.
        "story_started": any(not scene.is_offgame for scene in scenes),
        "offgame_scene": next((scene for scene in scenes if scene.is_offgame), None),
        "memberships": memberships,
        "gm_absence": away.get(campaign.gm_id),
        "additions": extensions.additions("campaign_page", request, access),
        "can_apply": perms.can_apply(access) and not pending,
        "pending_application": pending,
        "can_manage": perms.can_manage(access),
        # Only the direction handles reports: nobody else is told how many wait.
        "pending_reports": PostReport.objects.pending_in(campaign).count() if perms.can_manage(access) else 0,
        "can_leave": perms.can_leave(access),
        "unread_total": sum(unread_by_scene.values()),
        **fragments.csrf_context(),
    }
    return render_to_string("campaigns/campaign_detail.html#campaign-page", context, request=request)


@require_safe
def campaign_detail(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The campaign's page, as the cache keeps it for this reader until
    anything it shows changes (``campaigns.fragments``); where their read
    markers stand and a pending application are read each time and are part
    of the key."""
    campaign, access, content_versions = fragments.campaign_for_reading(request, slug)
    # Only someone who may apply can have an application waiting.
    pending = (
        access.standing == Standing.OUTSIDER
        and Application.objects.filter(campaign=campaign, user=request.user, status=Application.Status.PENDING).exists()
    )
    key = fragments.key(
        "campaign-page",
        campaign.pk,
        *content_versions,
        fragments.viewer(request.user, access.standing),
        int(pending),
        _read_marks(request, campaign) if access.is_member else "",
        # Absences start and end with the campaign's day (the badges by the names).
        absences.campaign_today(campaign),
    )
    content = fragments.fragment(request, key, lambda: _campaign_page(request, campaign, access, pending=pending))
    # What changes with the clock (absences, deadlines, pace) is never kept.
    content = status.fill_campaign_slot(content, status.campaign_status_html(request, campaign, access))
    return render(request, "campaigns/campaign_detail.html", {"campaign": campaign, "content": content})


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def campaign_edit(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    campaign, access = _campaign_for(request, slug, manage=True)
    # The form writes what it validates on its instance: give it a copy, so a
    # refused edit does not show up in the page's title and links.
    form = CampaignForm(
        request.POST if request.method == "POST" else None, instance=copy(campaign), submit_label=_("Guardar")
    )
    if request.method == "POST" and form.is_valid():
        services.campaign_update(campaign=campaign, **form.cleaned_data)
        messages.success(request, _("Partida guardada."))
        return redirect(campaign)
    return render(request, "campaigns/campaign_form.html", {"form": form, "campaign": campaign, "creating": False})


# --- membership ------------------------------------------------------------


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def application_create(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    campaign, access = _campaign_for(request, slug)
    if not perms.can_apply(access):
        raise PermissionDenied(_("Esta partida no admite solicitudes ahora."))
    form = ApplicationForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            services.application_create(campaign=campaign, user=request.user, text=form.cleaned_data["text"])
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, _("Solicitud enviada. Te avisaremos cuando la dirección responda."))
            return redirect(campaign)
    return render(request, "campaigns/application_form.html", {"form": form, "campaign": campaign})


@login_required
@require_POST
def application_decide(request: HtmxHttpRequest, slug: str, application_id: int) -> HttpResponse:
    campaign, access = _campaign_for(request, slug, manage=True)
    application = get_object_or_404(Application, pk=application_id, campaign=campaign)
    form = DecisionForm(request.POST)
    if not form.is_valid():
        messages.error(request, refusal_message(form, missing=_("Elige aceptar o rechazar.")))
    else:
        accept = form.cleaned_data["decision"] == "accept"
        try:
            services.application_decide(
                application=application, actor=request.user, accept=accept, answer=form.cleaned_data["answer"]
            )
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            name = application.user.public_name
            messages.success(
                request,
                (_("%(name)s ya es miembro de la partida.") if accept else _("Solicitud de %(name)s rechazada."))
                % {"name": name},
            )
    return redirect("campaigns:dashboard", slug=campaign.slug)


@login_required
@require_POST
def invitation_create(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    campaign, access = _campaign_for(request, slug, manage=True)
    form = InvitationForm(request.POST)
    if form.is_valid():
        invitation = services.invitation_create(campaign=campaign, actor=request.user, **form.cleaned_data)
        messages.success(
            request,
            _("Invitación creada: %(url)s") % {"url": notify.site_url(invitation.get_absolute_url())},
        )
    else:
        messages.error(
            request,
            _("Revisa los datos de la invitación: %(errors)s")
            % {"errors": " ".join(e for errs in form.errors.values() for e in errs)},
        )
    return redirect("campaigns:dashboard", slug=campaign.slug)


@login_required
@require_POST
def invitation_revoke(request: HtmxHttpRequest, slug: str, invitation_id: int) -> HttpResponse:
    campaign, access = _campaign_for(request, slug, manage=True)
    invitation = get_object_or_404(Invitation, pk=invitation_id, campaign=campaign)
    services.invitation_revoke(invitation=invitation, actor=request.user)
    messages.success(request, _("Invitación anulada."))
    return redirect("campaigns:dashboard", slug=campaign.slug)


def _invitation_unusable(request: HttpRequest, invitation: Invitation) -> HttpResponse:
    """Why a revoked, expired or used-up invitation no longer lets anyone in."""
    context = {"invitation": invitation, "campaign": invitation.campaign}
    return render(request, "campaigns/invitation_unusable.html", context, status=410)


@require_http_methods(["GET", "HEAD", "POST"])
def invitation_open(request: HtmxHttpRequest, token: str) -> HttpResponse:
    """An invitation link: the GM's consent to let whoever holds it in.

    Anyone with the link reads about the campaign. Without an account, its
    buttons lead to sign-up or log-in and back here. A signed-in outsider
    joins with one click ("Unirme a la partida": a POST, so that opening the
    link changes nothing) and lands in the campaign with a welcome that says
    what to do next. Members are sent to the campaign; someone the direction
    removed is told the link cannot bring them back (403); a revoked,
    expired or used-up link says so (410)."""
    invitation = get_object_or_404(Invitation.objects.select_related("campaign__gm"), token=token)
    campaign = invitation.campaign
    access = campaign_access(request.user, campaign)
    if access.is_member:
        messages.info(request, _("Ya formas parte de esta partida."))
        return redirect(campaign)
    if not invitation.is_usable:
        return _invitation_unusable(request, invitation)
    if request.method == "POST":
        if not request.user.is_authenticated:
            return redirect(f"{reverse('accounts:login')}?next={request.path}")
        try:
            membership = services.invitation_accept(invitation=invitation, user=request.user)
        except ValidationError as exc:
            refused = getattr(exc, "code", None)
            if refused == "member":
                messages.info(request, " ".join(exc.messages))
                return redirect(campaign)
            if refused == "unusable":
                invitation.refresh_from_db()
                return _invitation_unusable(request, invitation)
            if refused != "removed":
                # Anything else the service refuses is said as it is.
                messages.error(request, " ".join(exc.messages))
            # Removed from the campaign: the page below says so.
        else:
            messages.success(request, invitations.welcome(campaign, membership))
            return redirect(campaign)
    removed = request.user.is_authenticated and perms.was_removed(access)
    context = {"invitation": invitation, "campaign": campaign, "removed": removed}
    return render(request, "campaigns/invitation_open.html", context, status=403 if removed else 200)


@login_required
@require_POST
def membership_leave(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    campaign, access = _campaign_for(request, slug)
    if not perms.can_leave(access):
        raise PermissionDenied(_("La dirección no puede abandonar su partida: cédela antes a otro miembro."))
    services.membership_leave(membership=access.membership)
    messages.success(
        request, _("Has dejado la partida «%(title)s». Tus mensajes se quedan.") % {"title": campaign.title}
    )
    return redirect("home")


@login_required
@require_POST
def member_remove(request: HtmxHttpRequest, slug: str, membership_id: int) -> HttpResponse:
    campaign, access = _campaign_for(request, slug, manage=True)
    membership = get_object_or_404(
        Membership.objects.active().select_related("user"), pk=membership_id, campaign=campaign
    )
    if membership.role == Role.COGM and not access.is_owner:
        raise PermissionDenied(_("Solo quien dirige la partida puede expulsar a un codirector."))
    form = ReasonForm(request.POST)
    if not form.is_valid():
        messages.error(request, refusal_message(form, missing=_("Explica el motivo de la expulsión.")))
    else:
        services.member_remove(membership=membership, actor=request.user, reason=form.cleaned_data["reason"])
        messages.success(
            request, _("%(name)s ya no es miembro. Sus mensajes se quedan.") % {"name": membership.user.public_name}
        )
    return redirect("campaigns:dashboard", slug=campaign.slug)


@login_required
@require_POST
def member_role(request: HtmxHttpRequest, slug: str, membership_id: int) -> HttpResponse:
    campaign, access = _campaign_for(request, slug, manage=True)
    membership = get_object_or_404(Membership.objects.active(), pk=membership_id, campaign=campaign)
    form = RoleForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Papel desconocido."))
    elif Role.COGM in (form.cleaned_data["role"], membership.role) and not access.is_owner:
        raise PermissionDenied(_("Solo quien dirige la partida nombra o retira codirectores."))
    else:
        services.member_set_role(membership=membership, actor=request.user, role=form.cleaned_data["role"])
        messages.success(request, _("Papel cambiado."))
    return redirect("campaigns:dashboard", slug=campaign.slug)


@login_required
@require_POST
def campaign_hand_over(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    campaign, access = _campaign_for(request, slug, manage=True)
    if not perms.can_hand_over(access):
        raise PermissionDenied(_("Solo quien dirige la partida puede cederla."))
    raw_id = request.POST.get("membership", "")
    # ASCII digits only ("²" is a digit to str.isdigit() but not to int()), and
    # short enough for a database id.
    membership_id = int(raw_id) if raw_id.isascii() and raw_id.isdigit() and len(raw_id) <= 18 else 0
    membership = get_object_or_404(
        Membership.objects.active().select_related("user"), pk=membership_id, campaign=campaign
    )
    services.campaign_hand_over(campaign=campaign, actor=request.user, membership=membership)
    messages.success(
        request,
        _("La partida ahora la dirige %(name)s. Tú sigues como codirector.") % {"name": membership.user.public_name},
    )
    return redirect(campaign)


# --- GM dashboard and moderation log ---------------------------------------


@login_required
@require_safe
def dashboard(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    campaign, access = _campaign_for(request, slug, manage=True)
    context = {
        "campaign": campaign,
        "access": access,
        "applications": Application.objects.filter(campaign=campaign, status=Application.Status.PENDING).select_related(
            "user", "invitation"
        ),
        "hidden_posts": Post.objects.filter(scene__campaign=campaign, hidden=True).select_related(
            "author", "scene", "hidden_by", "character"
        ),
        "reports": PostReport.objects.filter(post__scene__campaign=campaign, resolved_at__isnull=True).select_related(
            "post__author", "post__scene", "reporter"
        ),
        "invitations": Invitation.objects.filter(campaign=campaign, revoked=False, expires_at__gt=timezone.now()),
        "memberships": Membership.objects.active().filter(campaign=campaign).select_related("user"),
        "additions": extensions.additions("dashboard", request, access),
        "invitation_form": InvitationForm(),
        "roles": Role.choices,
        "status_html": status.dashboard_status_html(request, campaign, access),
    }
    return render(request, "campaigns/dashboard.html", context)


@login_required
@require_safe
def moderation_log(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The GM sees every action; a member sees the actions on their content."""
    campaign, access = _campaign_for(request, slug)
    if not access.is_member:
        raise PermissionDenied(_("Solo los miembros ven el registro de moderación."))
    entries = ModerationLog.objects.filter(campaign=campaign).select_related("actor", "target_user", "post", "scene")
    if not access.is_gm:
        entries = entries.filter(target_user=request.user)
    page_obj = Paginator(entries, 50).get_page(request.GET.get("pagina"))
    context = {"campaign": campaign, "page_obj": page_obj, "access": access}
    return page_or_fragment(request, "campaigns/moderation_log.html", "log-entries", context)


@login_required
@require_POST
def report_resolve(request: HtmxHttpRequest, slug: str, report_id: int) -> HttpResponse:
    campaign, access = _campaign_for(request, slug, manage=True)
    report = get_object_or_404(
        PostReport.objects.select_related("post__scene__campaign", "post__author"),
        pk=report_id,
        post__scene__campaign=campaign,
    )
    form = OptionalReasonForm(request.POST)
    if not form.is_valid():
        messages.error(request, refusal_message(form, missing=""))
        return redirect("campaigns:dashboard", slug=campaign.slug)
    services.report_resolve(report=report, actor=request.user, reason=form.cleaned_data["reason"])
    messages.success(request, _("Denuncia resuelta sin ocultar el mensaje."))
    return redirect("campaigns:dashboard", slug=campaign.slug)


# --- scenes ----------------------------------------------------------------


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def scene_create(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    campaign, access = _campaign_for(request, slug, manage=True)
    form = SceneForm(
        request.POST if request.method == "POST" else None,
        campaign=campaign,
        members=members_of(campaign),
        creating=True,
    )
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        scene = services.scene_create(
            campaign=campaign,
            title=data["title"],
            description=data["description"],
            everyone=data["everyone"],
            participants=data["participants"],
            game_values=form.game_values(),
            actor=request.user,
        )
        messages.success(request, _("Escena creada."))
        return redirect(scene)
    return render(request, "campaigns/scene_form.html", {"form": form, "campaign": campaign, "creating": True})


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def scene_edit(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    scene, access = _scene_for(request, slug, scene_id, manage=True)
    form = SceneForm(
        request.POST if request.method == "POST" else None, instance=copy(scene), members=members_of(scene.campaign)
    )
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        services.scene_update(
            scene=scene,
            actor=request.user,
            game_values=form.game_values(),
            **{k: data[k] for k in ("title", "description", "everyone", "participants", "status", "position")},
        )
        messages.success(request, _("Escena guardada."))
        return redirect(scene)
    return render(
        request,
        "campaigns/scene_form.html",
        {"form": form, "campaign": scene.campaign, "scene": scene, "creating": False},
    )


# --- posts -----------------------------------------------------------------


@require_safe
def post_permalink(request: HtmxHttpRequest, post_id: int) -> HttpResponse:
    """Open the scene at the page that holds the post, scrolled to it."""
    post, access = _post_for(request, post_id)
    before = (
        Post.objects.filter(scene=post.scene, pk__lt=post.pk).addressed_to(request.user, is_gm=access.is_gm).count()
    )
    page = before // POSTS_PER_PAGE + 1
    url = f"{post.scene.get_absolute_url()}?pagina={page}#mensaje-{post.pk}"
    return redirect(url)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def post_edit(request: HtmxHttpRequest, post_id: int) -> HttpResponse:
    post, access = _post_for(request, post_id)
    if not perms.can_edit_post(access, post):
        raise PermissionDenied(
            _(
                "Solo su autor o la dirección pueden editar este mensaje; uno escrito en nombre de otro, solo la dirección."
            )
        )
    form = PostEditForm(
        request.POST if request.method == "POST" else None, initial={"body": post.body, "note": post.note}
    )
    if request.method == "POST" and form.is_valid():
        services.post_edit(
            access=access,
            post=post,
            body=form.cleaned_data["body"],
            note=form.cleaned_data["note"],
            reason=form.cleaned_data["reason"],
        )
        messages.success(request, _("Mensaje editado. La versión anterior queda en el historial."))
        return redirect(post.get_absolute_url())
    return render(request, "campaigns/post_edit.html", {"form": form, "post": post, "campaign": post.scene.campaign})


@login_required
@require_safe
def post_history(request: HtmxHttpRequest, post_id: int) -> HttpResponse:
    post, access = _post_for(request, post_id)
    if not perms.can_see_revisions(access, post):
        raise PermissionDenied(_("Solo su autor y la dirección ven el historial de un mensaje."))
    revisions = post.revisions.select_related("editor")
    return render(
        request, "campaigns/post_history.html", {"post": post, "revisions": revisions, "campaign": post.scene.campaign}
    )


@login_required
@require_POST
def post_hide(request: HtmxHttpRequest, post_id: int) -> HttpResponse:
    post, access = _post_for(request, post_id)
    if not perms.can_hide_post(access):
        raise PermissionDenied(_("Solo la dirección puede ocultar mensajes."))
    if post.hidden:
        services.post_show(post=post, actor=request.user)
        messages.success(request, _("El mensaje vuelve a estar visible."))
    else:
        form = ReasonForm(request.POST)
        if not form.is_valid():
            messages.error(
                request, refusal_message(form, missing=_("Para ocultar un mensaje hay que explicar el motivo."))
            )
        else:
            services.post_hide(post=post, actor=request.user, reason=form.cleaned_data["reason"])
            messages.success(request, _("Mensaje ocultado."))
    return redirect_after(request, post.get_absolute_url())


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def post_report(request: HtmxHttpRequest, post_id: int) -> HttpResponse:
    post, access = _post_for(request, post_id)
    if not perms.can_report_post(access, post):
        raise PermissionDenied(_("No puedes denunciar este mensaje."))
    form = ReasonForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        services.post_report(post=post, reporter=request.user, reason=form.cleaned_data["reason"])
        messages.success(request, _("Gracias. La dirección revisará el mensaje."))
        return redirect(post.get_absolute_url())
    return render(request, "campaigns/post_report.html", {"form": form, "post": post, "campaign": post.scene.campaign})


# --- search and export -----------------------------------------------------


@require_safe
def campaign_search(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    campaign, access = _campaign_for(request, slug)
    form = SearchForm(request.GET if "q" in request.GET else None)
    results = None
    if form.is_valid():
        query = form.cleaned_data["q"]
        posts = perms.readable_posts(access).select_related("scene", "author", "character")
        if connection.vendor == "postgresql":
            from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector

            vector = SearchVector("body", "note", config="spanish")
            search = SearchQuery(query, config="spanish", search_type="websearch")
            posts = posts.annotate(rank=SearchRank(vector, search)).filter(rank__gt=0).order_by("-rank", "-pk")
        else:
            posts = posts.filter(Q(body__icontains=query) | Q(note__icontains=query)).order_by("-pk")
        results = list(posts[:SEARCH_LIMIT])
    context = {"campaign": campaign, "form": form, "results": results, "limit": SEARCH_LIMIT}
    return page_or_fragment(request, "campaigns/search.html", "search-results", context)


@login_required
@require_safe
def campaign_export(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """A JSON archive of what the user can read (``campaigns.archive``):
    settings, members, scenes, posts with their histories, sheets and rolls
    with their signed bundles; ``manage.py campaign_import`` reads it back."""
    campaign, access = _campaign_for(request, slug)
    if not perms.can_export(access):
        raise PermissionDenied(_("Solo los miembros pueden descargar la partida."))
    archive = services.campaign_export(access=access)
    response = JsonResponse(archive, json_dumps_params={"ensure_ascii": False, "indent": 1})
    response["Content-Disposition"] = f'attachment; filename="{campaign.slug}.json"'
    return response


# --- notifications (the signed-in user's own) -----------------------------------------

NOTIFICATIONS_PAGE_SIZE = 30


def _notifications_page(request: HtmxHttpRequest) -> HttpResponse:
    notifications = Notification.objects.filter(user=request.user).select_related("campaign")
    page_obj = Paginator(notifications, NOTIFICATIONS_PAGE_SIZE).get_page(request.GET.get("pagina"))
    context = {"notifications": page_obj.object_list, "page_obj": page_obj}
    return page_or_fragment(request, "campaigns/notifications.html", "notification-list", context)


@login_required
@require_safe
def notifications(request: HtmxHttpRequest) -> HttpResponse:
    """The user's notifications, newest first, 30 a page; unread ones marked."""
    return _notifications_page(request)


@login_required
@require_safe
def notification_open(request: HttpRequest, notification_id: int) -> HttpResponse:
    """Mark one of the user's notifications read and go where it points.

    A GET is enough: it only changes the reader's own read marker. Only
    site-relative addresses are followed, so a stored URL can never send the
    user to another site.
    """
    notification = get_object_or_404(Notification, pk=notification_id, user=request.user)
    notify.notification_mark_read(notification=notification)
    target = notification.url
    if target.startswith("/") and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return redirect(target)
    return redirect("campaigns:notifications")


@login_required
@require_POST
def notifications_read_all(request: HtmxHttpRequest) -> HttpResponse:
    count = notify.notifications_mark_all_read(user=request.user)
    return after_action(
        request,
        fragment=lambda _error: _notifications_page(request),
        url=reverse("campaigns:notifications"),
        success=_("Todos los avisos están marcados como leídos.") if count else "",
    )
