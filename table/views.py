"""The scene page: the forum's posts with the table around them (roll cards
and their actions, the post form's roll rows, the chance before rolling, the
GM's requests and secret rolls).

Every view loads the scene through ``table.access.scene_for``: outsiders get
404 for anything private, members without the right get 403.

The page is read far more than it changes: its posts come assembled from
cached fragments (``table.post_list``; readers without an account get the
whole list kept per version of the scene), and the empty post form comes
rendered from the cache (``_post_form_html``).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from functools import partial
from types import SimpleNamespace

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Q, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.cache import patch_vary_headers
from django.utils.functional import SimpleLazyObject
from django.utils.safestring import mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe

from accounts.models import User
from campaigns import fragments as site_fragments
from campaigns import permissions as perms
from campaigns import services as forum
from campaigns import versions
from campaigns.absences import campaign_today
from campaigns.context_processors import unread_count
from campaigns.models import Membership, Post, Role, Scene, SceneRead
from campaigns.permissions import Access
from campaigns.threads import members_of, scene_posts
from campaigns.versions import scene_version
from hitos_site.htmx import HtmxHttpRequest, form_again, page_or_fragment, redirect_after, wants_fragment
from sheets.models import Character
from table import fragments, post_list, post_rolls, services, systems
from table import takeover as takeovers
from table.access import scene_for, scene_for_reading
from table.forms import ROLL_ROWS, TablePostForm
from table.roll_requests import services as roll_requests


@dataclass
class _Writer:
    """What the post form is made of for one writer: their approved
    characters (with what the campaign's game reads of them), the NPCs they
    may speak as, the GM's open requests to them and the members they may
    whisper to."""

    system: systems.GameSystem | None
    characters: list[Character]
    can_npc: bool
    npcs: list[Character]
    requests: list
    members: QuerySet
    # What the game's rows show beyond these (``GameSystem.writer_facts``).
    game_facts: tuple = ()
    # The characters among ``characters`` the writer carries for an absent
    # owner (``table.takeover``): character id → (takeover id, owner's name).
    taken: dict = field(default_factory=dict)
    # A digest of ``rows()`` when the writer was kept in the cache.
    made_of: str = ""
    # The scene the post goes to (the game's rows may offer what it shows).
    scene_id: int | None = None

    def form(self, data=None, initial=None) -> TablePostForm:
        if data is None:
            # A fresh key each time the form is shown; a re-shown form keeps its own.
            initial = {"submission_key": secrets.token_urlsafe(24), **(initial or {})}
        return TablePostForm(
            data,
            system=self.system,
            initial=initial,
            characters=self.characters,
            can_npc=self.can_npc,
            npcs=self.npcs,
            requests=self.requests,
            members=self.members,
            taken={pk: owner for pk, (_takeover, owner) in self.taken.items()},
            scene_id=self.scene_id,
        )

    def rows(self) -> tuple:
        """Everything the form is made of, as plain values (the members read now)."""
        return (
            self.system.key if self.system is not None else "",
            self.can_npc,
            fragments.rows(self.characters),
            fragments.rows(self.npcs),
            fragments.rows(self.requests),
            fragments.rows(self.members),
            self.game_facts,
            sorted(self.taken.items()),
        )


# How long the scene page may keep what a writer's post form is made of (the
# versions in its key move at once with every row it holds).
WRITER_SECONDS = 300


def _reading_writer(access: Access, scene: Scene, *, version: int, content: tuple[int, ...]) -> _Writer:
    """``_writer`` for the scene page, which only shows the form: kept in
    the cache under what its rows come from — the campaign's content
    version (characters, their sheets, NPCs, memberships, a scene's chosen
    members), the people version (the members' names), the scene's version
    (the GM's requests) and the writer with their standing (``content``:
    the first two, as ``scene_for_reading`` read them) — so that a page
    read again reads none of them — and the campaign's day: a character
    carried for an absent owner is offered only while the owner is away
    (``takeover.voiceable``), and the absence's last day passes before
    the clock notices the return. Posting builds the writer anew."""
    viewer = site_fragments.viewer(access.user, access.standing)
    today = campaign_today(scene.campaign)
    cache_key = fragments.key("scene-writer", scene.pk, version, *content, viewer, today)
    kept = cache.get(cache_key)
    if kept is None:
        kept = _writer(access, scene)
        kept.made_of = fragments.digest(kept.rows())
        kept.system = None  # the registry's object is not kept: it is the campaign's
        cache.set(cache_key, kept, WRITER_SECONDS)
    kept.system = systems.for_campaign(scene.campaign)
    return kept


def _writer(access: Access, scene: Scene) -> _Writer:
    system = systems.for_campaign(scene.campaign)
    loaded = system.characters if system is not None else (lambda queryset: queryset)
    characters, npcs, requests, taken = [], [], [], {}
    if access.user.is_authenticated:
        # Their own, and those of absent players they carry in this scene
        # (``table.takeover``), in the same query.
        characters = list(loaded(takeovers.voiced_characters(access, scene)))
        own = [c for c in characters if c.owner_id == access.user.pk]
        if own:
            requests = roll_requests.open_requests(scene=scene, user=access.user)
        if len(own) < len(characters):
            carried = takeovers.voiceable(access, scene)
            characters = [c for c in characters if c.owner_id == access.user.pk or c.pk in carried]
            requests += takeovers.open_requests(scene, carried)
            taken = {pk: (t.pk, t.owner.public_name) for pk, t in carried.items()}
    can_npc = perms.can_write_as_npc(access)
    if can_npc:
        npcs = list(loaded(Character.objects.filter(campaign=scene.campaign).npcs()))
    return _Writer(
        system=system,
        characters=characters,
        can_npc=can_npc,
        npcs=npcs,
        requests=requests,
        taken=taken,
        scene_id=scene.pk,
        game_facts=system.writer_facts(characters, npcs, scene.pk) if system is not None else (),
        # Only what the choices show of each member.
        members=_whisper_members(access, scene).only("username", "display_name")
        if access.user.is_authenticated
        else User.objects.none(),
    )


def _whisper_members(access: Access, scene: Scene) -> QuerySet:
    """The members a post may be addressed to: those who read the scene (in a
    scene for chosen members, the direction and its participants), but the
    author."""
    members = members_of(scene.campaign).exclude(pk=access.user.pk)
    if scene.everyone:
        return members
    direction = Membership.objects.active().filter(campaign=scene.campaign, role=Role.COGM).values("user")
    return members.filter(Q(pk=scene.campaign.gm_id) | Q(pk__in=direction) | Q(pk__in=scene.participants.values("pk")))


def _post_form(access: Access, scene: Scene, data=None, initial=None) -> TablePostForm:
    return _writer(access, scene).form(data, initial)


# How long a reader without an account may be shown a rendered page of posts
# that nothing in the scene changed since (a change moves the scene's version
# and so the key; this only bounds what no event tracks, like a renamed user).
ANONYMOUS_POSTS_SECONDS = 300


def _anonymous_posts(request: HttpRequest, access: Access, scene: Scene, *, page, version: int) -> dict | None:
    """For a reader without an account, the page of posts as the cache has it
    rendered (every such reader sees the same), or rendered and kept now. The
    key holds the scene's version (``campaigns.versions``: a new post, an
    edit, a hidden post, a re-roll or an activation moves it), the page, the
    language and the time zone. None when the page number is not a plain one."""
    page = page or "1"
    if not (page.isdigit() and len(page) <= 6):
        return None
    key = f"scene-post-list:{scene.pk}:{version}:{page}:{get_language()}:{timezone.get_current_timezone_name()}"
    cached = cache.get(key)
    if cached is None:
        holes = fragments.new_holes()
        context = _posts_context(
            request, access, scene, page=page, can_post=False, characters=[], version=version, csrf=holes.csrf
        )
        html = render_to_string("table/scene_detail.html#post-list", context, request=request)
        cached = {
            "parts": holes.split(html),
            "latest_id": context["latest_id"],
            "has_next": context["page_obj"].has_next(),
        }
        cache.set(key, cached, ANONYMOUS_POSTS_SECONDS)
    return {
        "post_list_html": _with_csrf(request, cached["parts"]),
        "page_obj": SimpleNamespace(has_next=cached["has_next"]),
        "latest_id": cached["latest_id"],
        "last_read": 0,
        "first_unread": None,
    }


def _with_csrf(request: HttpRequest, parts: fragments.Parts) -> str:
    """A cached fragment with the request's own CSRF token in its forms."""
    html = fragments.fill(parts, {fragments.CSRF: get_token(request)}) if len(parts) > 1 else parts[0]
    return mark_safe(html)  # our own templates' output, escaped when rendered


def _scene_context(
    request: HttpRequest,
    access: Access,
    scene: Scene,
    *,
    page,
    form,
    characters: list[Character] | None = None,
    version: int | None = None,
    csrf: str | None = None,
) -> dict:
    """What the scene page shows: one page of posts, read markers, the form.
    ``characters``: the writer's approved characters (the form's when not
    given); ``version``: the scene's, read before anything else (read now
    when not given); ``csrf``: what the posts' forms get for a CSRF token
    (the request's own when not given)."""
    if characters is None:
        characters = list(form.characters.values()) if form is not None else []
    # Before the posts: a post published meanwhile moves the version past this one.
    if version is None:
        version = scene_version(scene.pk)
    posts_part = None
    if not request.user.is_authenticated:
        posts_part = _anonymous_posts(request, access, scene, page=page, version=version)
    if posts_part is None:
        posts_part = _posts_context(
            request,
            access,
            scene,
            page=page,
            can_post=form is not None,
            characters=characters,
            version=version,
            csrf=csrf,
        )
    can_manage = perms.can_manage(access)
    return {
        **posts_part,
        "campaign": scene.campaign,
        "scene": scene,
        "access": access,
        "scene_version": version,
        "can_post": form is not None,
        "can_manage": can_manage,
        "form": form,
        "roll_requests": roll_requests.scene_requests(scene=scene) if can_manage else [],
        # The game's part: its tools, its points, its secret rolls.
        **_game_context(scene, access, characters),
    }


def _posts_context(
    request: HttpRequest,
    access: Access,
    scene: Scene,
    *,
    page,
    can_post: bool,
    characters: list[Character],
    version: int,
    csrf: str | None = None,
) -> dict:
    """One page of posts with their cards (``table.post_list``), and the
    reader's read markers. ``characters``: the writer's approved characters;
    ``csrf`` goes where the posts' forms want a CSRF token (the request's own
    when not given)."""
    user = request.user
    reads = user.is_authenticated and access.is_member
    last_read = _last_read(scene, user, version) if reads else 0
    posts = _reader_posts(
        access,
        scene,
        page=page,
        version=version,
        can_post=can_post,
        last_read=last_read,
        # A player's approved characters are the post form's (when they may post).
        has_character=bool(characters) if can_post and access.is_player else None,
    )
    first_unread = None
    if reads:
        # Nothing the reader may see came after their marker: no unread post to look for.
        if posts.visible_ids and posts.visible_ids[-1] > last_read:
            first_unread = (
                Post.objects.filter(scene=scene, pk__gt=last_read)
                .addressed_to(user, is_gm=access.is_gm)
                .exclude(author=user)
                .order_by("pk")
                .values_list("pk", flat=True)
                .first()
            )
        if posts.latest_id > last_read:
            forum.scene_mark_read(user=user, scene=scene, last_post_id=posts.latest_id)
            cache.set(_last_read_key(scene, user, version), posts.latest_id, versions.FACT_SECONDS)
    if csrf is None:
        posts_html = _with_csrf(request, posts.parts)
    else:
        posts_html = mark_safe(fragments.fill(posts.parts, {fragments.CSRF: csrf}))  # our templates' output
    return {
        "campaign": scene.campaign,
        "scene": scene,
        "access": access,
        "page_obj": posts.page,
        "posts": posts.posts,
        "posts_html": posts_html,
        "last_read": last_read,
        "first_unread": first_unread,
        "latest_id": posts.latest_id,
        "scene_version": version,
        "can_post": can_post,
        "can_manage": perms.can_manage(access),
    }


def _reader_posts(access: Access, scene: Scene, *, page, version: int, **reader) -> post_list.PostList:
    """``post_list.page_of_posts`` for a signed-in reader, kept in the cache
    as the reader last saw it: the key holds the scene's version (its posts,
    rolls and moves on them), the campaign's content version and the
    people's (the sheets and memberships the cards' actions read, the
    names), the reader with their standing, the page and what else decides
    the page (``reader``: the read marker, whether they may post, whether
    they have a character). Readers without an account share a page kept by
    ``_anonymous_posts``."""
    if not access.user.is_authenticated or not (page is None or (page.isdigit() and len(page) <= 6) or page == "last"):
        return post_list.page_of_posts(access, scene, page=page, version=version, **reader)
    content = site_fragments.versions(site_fragments.campaign_scope(scene.campaign_id), site_fragments.PEOPLE)
    viewer = site_fragments.viewer(access.user, access.standing)
    cache_key = fragments.key("reader-posts", scene.pk, version, *content, viewer, page or "1", sorted(reader.items()))
    posts = cache.get(cache_key)
    if posts is None:
        posts = post_list.page_of_posts(access, scene, page=page, version=version, **reader)
        for post in posts.posts:
            post.scene = None  # each request's own
        cache.set(cache_key, posts, fragments.SECONDS)
    for post in posts.posts:
        post.scene = scene
    return posts


def _last_read_key(scene: Scene, user, version: int) -> str:
    return f"scene-read:{scene.pk}:{user.pk}:{version}"


def _last_read(scene: Scene, user, version: int) -> int:
    """The reader's read marker in the scene, kept under the scene's version:
    it moves only on this page (which keeps where it moved it) and when the
    reader posts (``forum.post_published``), which moves the version. Two
    pages read at once may keep the lower marker: the next page read puts
    it right, and the marker only decides which posts say "nuevo"."""
    key = _last_read_key(scene, user, version)
    last_read = cache.get(key)
    if last_read is None:
        last_read = SceneRead.objects.filter(scene=scene, user=user).values_list("last_post_id", flat=True).first() or 0
        cache.add(key, last_read, versions.FACT_SECONDS)
    return last_read


def _post_form_html(request: HttpRequest, context: dict, writer: _Writer, holes: fragments.Holes | None = None) -> str:
    """The scene page's empty post form, rendered once for everything it
    shows (its fields' choices and initial values, the reader's open
    requests, the scene) and kept: each request puts in its own CSRF token
    and the form's fresh submission key (``holes``: a page kept whole puts
    them in itself).

    What the form is made of (the writer's rows: characters, NPCs, requests,
    members) names the rendered form it makes, so that a page read again
    does not build the form to know it; a change to those rows that the form
    does not show (a drama point spent) builds it again, and finds it
    rendered."""
    form, scene = context["form"], context["scene"]
    submission_key = context["submission_key"]
    around = (scene.pk, scene.campaign.slug, context.get("roll_request_template", ""), context["can_manage"])
    made_of = fragments.key("post-form-rows", *around, writer.made_of or writer.rows(), context["form_initial"])
    form_key = cache.get(made_of)
    parts = cache.get(form_key) if form_key is not None else None
    if parts is None:
        requests_shown = [
            (r.pk, r.purpose, r.character.name, r.facts, r.difficulty, r.difficulty_hidden)
            for r in form.requests.values()
        ]
        form_key = fragments.key(
            "post-form",
            *around,
            requests_shown,
            fragments.form_signature(form, besides=["submission_key"]),
            [fragments.form_signature(row) for row in form.roll_forms],
        )

        def render(holes: fragments.Holes) -> str:
            html = render_to_string("table/scene_detail.html#post-form", {**context, "csrf_token": holes.csrf})
            return html.replace(submission_key, holes("submission-key"))

        parts = fragments.cached(form_key, render)
        cache.set(made_of, form_key, fragments.SECONDS)
    if holes is not None:  # for a page kept whole: its own holes
        fillers = {fragments.CSRF: holes.csrf, "submission-key": holes("submission-key")}
    else:
        fillers = {fragments.CSRF: get_token(request), "submission-key": submission_key}
    return mark_safe(fragments.fill(parts, fillers))  # our own template's output, escaped when rendered


def _game_context(scene: Scene, access: Access, characters: list[Character]) -> dict:
    system = systems.for_campaign(scene.campaign)
    if system is None:
        return {}
    return system.scene_context(scene, access, characters=characters)


# How long a reader's whole scene page may be kept (every change it shows
# moves a version its key holds, at once).
PAGE_SECONDS = 300
# A CSRF field whose value is not a hole: a part of the page put the
# request's own token in, and such a page is not kept.
_CSRF_VALUE = 'name="csrfmiddlewaretoken" value="'


def _kept_page_key(request: HtmxHttpRequest, access: Access, scene: Scene, version: int, content: tuple) -> str | None:
    """Where a reader's whole scene page is kept, or None when it is not:
    the direction's (its page shows what no version follows, such as its
    secret rolls as they are made), an htmx swap, and a page with messages
    to show once. The key holds the scene's version (posts, rolls, moves on
    them, requests, reveals, aspects), the campaign's and the people's
    (sheets, memberships, names), the reader with their standing (one class
    for every reader without an account), the address (page, quote), the
    campaign's day (the post form's, ``_reading_writer``), and a signed-in
    reader's unread notifications and read marker."""
    user = request.user
    if perms.can_manage(access) or wants_fragment(request):
        return None
    if len(messages.get_messages(request)):
        return None
    signed_in = user.is_authenticated
    if not _keepable_address(request, signed_in=signed_in):
        return None
    last_read = _last_read(scene, user, version) if signed_in and access.is_member else 0
    unread = unread_count(request) if signed_in else 0
    viewer = site_fragments.viewer(user, access.standing)
    path = request.get_full_path()
    today = campaign_today(scene.campaign)
    return fragments.key("scene-page", scene.pk, version, *content, viewer, path, today, unread, last_read)


def _keepable_address(request: HtmxHttpRequest, *, signed_in: bool) -> bool:
    """Whether the page's address is one kept pages may be made for: the
    scene's own for everyone; for a signed-in reader also a page number
    (``pagina``, four digits at most, or "last") and a quote (``cita``), so
    that nobody can fill the cache with pages for made-up addresses."""
    if not request.GET:
        return True
    if not signed_in or set(request.GET) - {"pagina", "cita"}:
        return False
    page, quote = request.GET.get("pagina", "1"), request.GET.get("cita", "1")
    return (page == "last" or (page.isdigit() and len(page) <= 4)) and quote.isdigit() and len(quote) <= 12


def _kept_page(request: HtmxHttpRequest, kept: dict) -> HttpResponse:
    """A kept page with this request's CSRF token and a fresh submission key."""
    fillers = {fragments.CSRF: get_token(request), "submission-key": secrets.token_urlsafe(24)}
    response = HttpResponse(fragments.fill(kept["parts"], fillers))
    patch_vary_headers(response, ("HX-Request",))
    return response


@require_safe
def scene_detail(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    scene, access, content = scene_for_reading(request, slug, scene_id)
    # Before the posts: a post published meanwhile moves the version past this one.
    version = scene_version(scene.pk)
    kept_key = _kept_page_key(request, access, scene, version, content)
    if kept_key is not None and (kept := cache.get(kept_key)) is not None:
        return _kept_page(request, kept)
    holes = fragments.new_holes() if kept_key is not None else None
    writer = form = None
    if access.user.is_authenticated and perms.can_post_in_scene(access, scene):
        writer = _reading_writer(access, scene, version=version, content=content)
        quote_id = request.GET.get("cita", "")
        shown = {"quote_of": quote_id} if quote_id.isdigit() else {}
        initial = {"submission_key": secrets.token_urlsafe(24), **shown}
        # Built only if the page needs it: a kept form is served without it.
        form = SimpleLazyObject(partial(writer.form, initial=initial))
    characters = writer.characters if writer is not None else []
    context = _scene_context(
        request,
        access,
        scene,
        page=request.GET.get("pagina"),
        form=form,
        characters=characters,
        version=version,
        csrf=holes.csrf if holes is not None else None,
    )
    if writer is not None and not wants_fragment(request):
        context |= {"submission_key": initial["submission_key"], "form_initial": shown}
        context["post_form_html"] = _post_form_html(request, context, writer, holes)
    if holes is None:
        return page_or_fragment(request, "table/scene_detail.html", "post-list", context)
    html = render_to_string("table/scene_detail.html", {**context, "csrf_token": holes.csrf}, request=request)
    kept = {"parts": holes.split(html)}
    if html.count(_CSRF_VALUE) == html.count(_CSRF_VALUE + holes.csrf):
        cache.set(kept_key, kept, PAGE_SECONDS)
    return _kept_page(request, kept)


@require_safe
def scene_poll(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    """The "hay mensajes nuevos" bar: how many posts arrived after ``despues``.
    With the scene's version it last saw (``v``) unchanged, nothing was
    published since: 204, no post read, and htmx keeps the bar it shows."""
    scene, access = scene_for(request, slug, scene_id, offgame=True)
    version = scene_version(scene.pk)
    if request.GET.get("v") == str(version):
        return HttpResponse(status=204)
    try:
        after = int(request.GET.get("despues", "0"))
    except ValueError:
        after = 0
    new = scene_posts(access, scene).filter(pk__gt=after)
    if request.user.is_authenticated:
        new = new.exclude(author=request.user)
    count = new.count()
    first_new = new.values_list("pk", flat=True).first() if count else None
    context = {
        "campaign": scene.campaign,
        "scene": scene,
        "new_count": count,
        "first_new": first_new,
        "latest_id": after,
        "scene_version": version,
    }
    return render(request, "table/scene_detail.html#new-posts-bar", context)


def _plan_rolls(form: TablePostForm, scene: Scene) -> list[post_rolls.PlannedRoll] | None:
    """The used roll rows as planned rolls (by the campaign's game); None when
    a row asks the sheet for something it does not have (the error is on that
    row, on the field the error's code names)."""
    rows = form.used_rolls()
    if not rows:
        return []
    system = post_rolls.system_of(scene.campaign)
    data = form.cleaned_data
    speaking_as = data["character"] if data["voice"] == Post.Voice.CHARACTER else None
    plans, ok = [], True
    for row in rows:
        try:
            plans.append(system.plan(row, speaking_as=speaking_as))
        except ValidationError as exc:
            row.add_error(exc.code if exc.code in row.fields else None, exc)
            ok = False
    return plans if ok else None


@login_required
@require_POST
def post_create(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    scene, access = scene_for(request, slug, scene_id, offgame=True)
    if not perms.can_post_in_scene(access, scene):
        if scene.status != Scene.Status.OPEN:
            message = _("La escena está cerrada: no se pueden escribir mensajes.")
        else:
            message = _("No puedes escribir en esta escena.")
        return render(
            request, "campaigns/forbidden.html", {"message": message, "back_url": scene.get_absolute_url()}, status=403
        )
    writer = _writer(access, scene)
    form = writer.form(request.POST)
    if form.is_valid() and (planned := _plan_rolls(form, scene)) is not None:
        data = form.cleaned_data
        # Written as a character the writer carries for its absent owner.
        carried = writer.taken.get(data["character"].pk) if data["character"] is not None else None
        quote = None
        if data.get("quote_of"):
            # Only a post the author can read may be quoted.
            quote = scene_posts(access, scene).filter(pk=data["quote_of"], hidden=False).first()
        try:
            post = services.post_with_rolls_create(
                access=access,
                scene=scene,
                voice=data["voice"],
                body=data["body"],
                note=data["note"],
                character=data["character"],
                npc_name=data["npc_name"],
                recipients=data["recipients"],
                chosen=data["chosen"],
                quote_of=quote,
                rolls=planned,
                answers=data.get("answers"),
                answer_seed=data.get("answer_seed") or None,
                submission_key=data["submission_key"] or None,
                takeover_id=carried[0] if carried is not None else None,
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, _("Mensaje publicado."))
            return redirect_after(request, post.get_absolute_url())
    # Nothing typed is lost: the last page comes back with the form and its errors.
    context = _scene_context(request, access, scene, page="last", form=form)
    response = page_or_fragment(request, "table/scene_detail.html", "post-form", context)
    return form_again(response, "#escribir") if wants_fragment(request) else response


@login_required
@require_safe
def post_roll_chance(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    """The chance of success of one roll row of the post form, with its
    modifiers (the sheet's penalties included). Never rolls."""
    scene, access = scene_for(request, slug, scene_id, offgame=True)
    if not perms.can_post_in_scene(access, scene):
        raise PermissionDenied(_("No puedes escribir en esta escena."))
    raw_row = request.GET.get("fila", "0")
    row_index = int(raw_row) if raw_row.isascii() and raw_row.isdigit() and int(raw_row) < ROLL_ROWS else 0
    # The purpose is asked for when publishing; the preview does not need it.
    data = request.GET.copy()
    data.setdefault(f"tirada-{row_index}-purpose", "")
    if not data[f"tirada-{row_index}-purpose"].strip():
        data[f"tirada-{row_index}-purpose"] = "-"
    form = _post_form(access, scene, data)
    if not form.roll_forms:
        raise Http404
    row = form.roll_forms[row_index]
    context = {"row_index": row_index, "plan": None, "chance_percent": None, "problem": ""}
    voice = request.GET.get("voice", "")
    if row.is_valid() and row.cleaned_data.get("used"):
        speaking_as = form.character_for(voice)
        if speaking_as is None and not access.is_gm and not row.cleaned_data.get("npc_character"):
            context["problem"] = _("Para tirar, escribe como tu personaje.")
        else:
            system = post_rolls.system_of(scene.campaign)
            try:
                plan = system.plan(row, speaking_as=speaking_as)
            except ValidationError as exc:
                context["problem"] = " ".join(exc.messages)
            else:
                context["plan"] = plan
                context["chance_detail_template"] = system.chance_template
                chance = system.chance(plan, scene.campaign)
                context["chance_percent"] = post_rolls.percent(chance) if chance is not None else None
    elif row.is_bound and row.errors:
        context["problem"] = " ".join(e for errors in row.errors.values() for e in errors)
    response = render(request, "table/scene_detail.html#roll-chance", context)
    patch_vary_headers(response, ("HX-Request",))
    return response
