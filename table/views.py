"""The scene page: the forum's posts with the table around them (roll cards
and their actions, the post form's roll rows, the chance before rolling, the
GM's requests and secret rolls).

Every view loads the scene through ``table.access.scene_for``: outsiders get
404 for anything private, members without the right get 403.
"""

from __future__ import annotations

import secrets
from types import SimpleNamespace

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.cache import patch_vary_headers
from django.utils.safestring import mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe

from accounts.models import User
from campaigns import permissions as perms
from campaigns import services as forum
from campaigns.models import Post, Scene, SceneRead
from campaigns.permissions import Access
from campaigns.threads import POSTS_PER_PAGE, decorate_posts, members_of, scene_posts
from campaigns.versions import scene_version
from hitos_site.htmx import HtmxHttpRequest, form_again, page_or_fragment, redirect_after, wants_fragment
from sheets.models import Character
from table import post_rolls, services, systems
from table.access import scene_for
from table.cards import card_prefetches, cards_for
from table.forms import ROLL_ROWS, TablePostForm
from table.models import TableRoll
from table.roll_requests import services as roll_requests


def _post_form(access: Access, scene: Scene, data=None, initial=None) -> TablePostForm:
    system = systems.for_campaign(scene.campaign)
    loaded = system.characters if system is not None else (lambda queryset: queryset)
    characters, npcs, requests = [], [], []
    if access.user.is_authenticated:
        characters = list(loaded(Character.objects.filter(campaign=scene.campaign, owner=access.user).approved()))
        if characters:
            requests = roll_requests.open_requests(scene=scene, user=access.user)
    can_npc = perms.can_write_as_npc(access)
    if can_npc:
        npcs = list(loaded(Character.objects.filter(campaign=scene.campaign).npcs()))
    if data is None:
        # A fresh key each time the form is shown; a re-shown form keeps its own.
        initial = {**(initial or {}), "submission_key": secrets.token_urlsafe(24)}
    return TablePostForm(
        data,
        system=system,
        initial=initial,
        characters=characters,
        can_npc=can_npc,
        npcs=npcs,
        requests=requests,
        members=members_of(scene.campaign).exclude(pk=access.user.pk)
        if access.user.is_authenticated
        else User.objects.none(),
    )


def _attach_roll_cards(posts: list[Post], access: Access, scene: Scene, *, has_character: bool | None) -> None:
    """Each post's roll cards (``post.roll_cards``), in a constant number of
    queries: the posts' table rolls with their versions and the activations
    the card's actions read (``table.cards.cards_for``)."""
    for post in posts:
        post.roll_cards = []
    by_post = {p.pk: p for p in posts}
    table_rolls = list(
        TableRoll.objects.filter(post__in=list(by_post))
        .select_related("character", "owner", "first__user", "latest__user")
        .prefetch_related(*card_prefetches(scene.campaign))
        .order_by("post_id", "position", "pk")
    )
    for table_roll in table_rolls:
        table_roll.scene = scene
        table_roll.post = by_post[table_roll.post_id]
    cards = cards_for(table_rolls, access=access, has_character=has_character)
    for table_roll in table_rolls:
        table_roll.post.roll_cards.append(cards[table_roll.pk])


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
    key = f"scene-posts:{scene.pk}:{version}:{page}:{get_language()}:{timezone.get_current_timezone_name()}"
    cached = cache.get(key)
    if cached is None:
        context = _posts_context(request, access, scene, page=page, form=None, version=version)
        html = render_to_string("table/scene_detail.html#post-list", context, request=request)
        cached = {"html": html, "latest_id": context["latest_id"], "has_next": context["page_obj"].has_next()}
        cache.set(key, cached, ANONYMOUS_POSTS_SECONDS)
    return {
        "post_list_html": mark_safe(cached["html"]),  # our own template's output, escaped when rendered
        "page_obj": SimpleNamespace(has_next=cached["has_next"]),
        "latest_id": cached["latest_id"],
        "last_read": 0,
        "first_unread": None,
    }


def _scene_context(request: HttpRequest, access: Access, scene: Scene, *, page, form) -> dict:
    """What the scene page shows: one page of posts, read markers, the form."""
    # Before the posts: a post published meanwhile moves the version past this one.
    version = scene_version(scene.pk)
    posts_part = None
    if not request.user.is_authenticated:
        posts_part = _anonymous_posts(request, access, scene, page=page, version=version)
    if posts_part is None:
        posts_part = _posts_context(request, access, scene, page=page, form=form, version=version)
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
        **_game_context(scene, access, form),
    }


def _posts_context(request: HttpRequest, access: Access, scene: Scene, *, page, form, version: int) -> dict:
    """One page of posts with their cards, and the reader's read markers."""
    posts = scene_posts(access, scene)
    page_obj = Paginator(posts, POSTS_PER_PAGE).get_page(page)
    page_posts = list(page_obj.object_list)
    decorate_posts(page_posts, access, scene)
    # A player's approved characters are the post form's (when they may post).
    has_character = bool(form.characters) if form is not None and access.is_player else None
    _attach_roll_cards(page_posts, access, scene, has_character=has_character)
    last_read = 0
    first_unread = None
    if request.user.is_authenticated and access.is_member:
        last_read = (
            SceneRead.objects.filter(scene=scene, user=request.user).values_list("last_post_id", flat=True).first() or 0
        )
        first_unread = posts.filter(pk__gt=last_read).exclude(author=request.user).values_list("pk", flat=True).first()
        if page_posts:
            forum.scene_mark_read(user=request.user, scene=scene, last_post_id=page_posts[-1].pk)
    return {
        "campaign": scene.campaign,
        "scene": scene,
        "access": access,
        "page_obj": page_obj,
        "posts": page_posts,
        "last_read": last_read,
        "first_unread": first_unread,
        "latest_id": page_posts[-1].pk if page_posts else 0,
        "scene_version": version,
        "can_post": form is not None,
        "can_manage": perms.can_manage(access),
    }


def _game_context(scene: Scene, access: Access, form: TablePostForm | None) -> dict:
    system = systems.for_campaign(scene.campaign)
    if system is None:
        return {}
    # The viewer's characters (the form already loaded them).
    characters = list(form.characters.values()) if form is not None else []
    return system.scene_context(scene, access, characters=characters)


@require_safe
def scene_detail(request: HtmxHttpRequest, slug: str, scene_id: int) -> HttpResponse:
    scene, access = scene_for(request, slug, scene_id, offgame=True)
    form = None
    if access.user.is_authenticated and perms.can_post_in_scene(access, scene):
        quote_id = request.GET.get("cita", "")
        form = _post_form(access, scene, initial={"quote_of": quote_id} if quote_id.isdigit() else None)
    context = _scene_context(request, access, scene, page=request.GET.get("pagina"), form=form)
    return page_or_fragment(request, "table/scene_detail.html", "post-list", context)


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
    form = _post_form(access, scene, request.POST)
    if form.is_valid() and (planned := _plan_rolls(form, scene)) is not None:
        data = form.cleaned_data
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
