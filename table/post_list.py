"""The scene page's posts for one reader, assembled from what the cache
keeps (``table.fragments``), so that reading a scene again costs neither
the posts' queries nor their rendering.

Kept under the scene's version (``campaigns.versions``: a post, its rolls
and the moves on them move it), and shared by every reader who sees the
same posts:

- the scene's **index**: which posts a reader sees, in order (every reader
  the same when the scene has no whispers; otherwise the GM, readers without
  an account and each member their own);
- a page's **facts**: each post's state (``PostFacts``) and its table rolls
  with what their actions read (character, activations).

Kept under what they show, so that a change elsewhere in the scene leaves
them be:

- each post's **fragment**, its whole article for one class of reader: the
  key holds the post's state (``PostFacts.stamp``: its edit, whether it is
  hidden, its scene, its recipients, its quote's state, its rolls' latest
  versions) and what the reader may see and do with it (``Viewer``: the
  GM's view, its hidden text and history, the unread mark, quoting,
  editing, reporting, moderating), so a fragment made for the GM or for
  the post's author never reaches a reader who may see less;
- each roll's **actions** for a reader (a hole in its post's fragment):
  the key holds the scene's version and everything the actions show.

What depends on the reader alone (what they may do with each post and
roll, whether it is new to them) is worked out from the facts each time,
without a query; the roll actions of attacks and opposed rolls also ask
whether they may still be re-rolled (``GameSystem.page_actions``), and the
time, whether an answer is overdue.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.core.cache import cache
from django.core.paginator import Page, Paginator
from django.db.models import Model, Prefetch, prefetch_related_objects
from django.db.models.base import ModelState
from django.template.loader import get_template

from accounts.models import User
from campaigns import bylines
from campaigns import fragments as site_fragments
from campaigns import permissions as perms
from campaigns.models import Post, Scene
from campaigns.permissions import Access
from campaigns.threads import POSTS_PER_PAGE, decorate_posts
from sheets.models import Character
from table import cards, fragments
from table.models import TableRoll

# What a roll's actions read of its table roll and character.
ROLL_FACT_FIELDS = (
    "campaign",
    "scene",
    "post",
    "first",
    "latest",
    "kind",
    "owner",
    "character",
    "difficulty",
    "difficulty_hidden",
    "position",
    "facts",
    "character__owner",
    "character__kind",
    "character__campaign",
)


@dataclass
class PostFacts:
    """What a page needs of a post before rendering it: who wrote it, its
    state for the reader's rights, and ``stamp``, which changes whenever
    what its fragment shows changes."""

    pk: int
    author_id: int
    hidden: bool
    edited: bool
    stamp: str
    roll_ids: tuple[int, ...]
    # The owner the post was written for, when someone played their character
    # (only the direction edits such a post: ``can_edit_post``).
    on_behalf_of_id: int | None = None
    # The scene (set for each request, for the permission predicates).
    scene: Any = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class Viewer:
    """What one reader may see and do with one post: with the post's stamp,
    everything its fragment depends on."""

    is_gm: bool
    signed_in: bool
    show_text: bool
    can_history: bool
    unread: bool
    can_quote: bool
    can_edit: bool
    can_report: bool
    can_manage: bool


@dataclass
class PageFacts:
    posts: list[PostFacts]
    rolls: list[TableRoll]

    def __getstate__(self) -> dict:
        # Kept as plain values: a pickled model instance with its prefetched
        # querysets costs ten times as much to read back.
        return {"posts": self.posts, "rolls": [_pack(table_roll) for table_roll in self.rolls]}

    def __setstate__(self, state: dict) -> None:
        self.posts = state["posts"]
        self.rolls = [_unpack(*packed) for packed in state["rolls"]]


@dataclass
class PostList:
    """One page of posts as a reader sees them: ``parts`` (a fragment whose
    only holes are CSRF tokens), ``page`` and ``posts`` (the page's
    ``PostFacts``), and the ids the read markers need."""

    parts: fragments.Parts
    page: Page
    posts: list[PostFacts]
    visible_ids: list[int]

    @property
    def latest_id(self) -> int:
        return self.posts[-1].pk if self.posts else 0


def page_of_posts(
    access: Access,
    scene: Scene,
    *,
    page,
    version: int,
    can_post: bool,
    last_read: int,
    has_character: bool | None,
) -> PostList:
    """The page ``page`` (a number, "last", or anything else for the first)
    of the posts ``access`` may read, with their roll cards and what the
    reader may do with them. ``last_read`` marks the unread posts;
    ``has_character`` is whether the reader has an approved character, when
    the caller knows."""
    visible = _index(access, scene, version)
    paginator = Paginator(visible, POSTS_PER_PAGE)
    page_obj = paginator.get_page(paginator.num_pages if page == "last" else page)
    facts, loaded = _page_facts(scene, version, list(page_obj.object_list))
    for post in facts.posts:
        post.scene = scene

    def viewer_of(post: PostFacts) -> Viewer:
        return _viewer(post, access, can_post=can_post, last_read=last_read)

    viewers = {post.pk: viewer_of(post) for post in facts.posts}
    post_keys = {post.pk: fragments.key("scene-post", post.pk, post.stamp, viewers[post.pk]) for post in facts.posts}
    actions = cards.roll_actions(facts.rolls, access=access, has_character=has_character)
    action_keys = {
        pk: fragments.key("roll-actions", scene.pk, version, pk, fragments.plain(card)) for pk, card in actions.items()
    }
    found = fragments.many([*post_keys.values(), *action_keys.values()])

    outer = fragments.new_holes()
    kept = {}
    missing = [post for post in facts.posts if post_keys[post.pk] not in found]
    if missing:
        rendered, keep = _render_posts(missing, facts.rolls, access, scene, viewer_of, post_keys, loaded)
        found.update(rendered)
        kept.update(keep)
    for pk, card in actions.items():
        if action_keys[pk] not in found:
            found[action_keys[pk]] = kept[action_keys[pk]] = _render_actions(card)
    fragments.keep(kept)

    fillers = {fragments.CSRF: outer.csrf}
    for pk, action_key in action_keys.items():
        fillers[f"actions:{pk}"] = fragments.fill(found[action_key], fillers)
    html = "".join(
        fragments.fill(found[post_keys[post.pk]], fillers) for post in facts.posts if post_keys[post.pk] in found
    )
    shown = [post for post in facts.posts if post_keys[post.pk] in found]
    return PostList(parts=outer.split(html), page=page_obj, posts=shown, visible_ids=visible)


def _audience(access: Access) -> str:
    """Whose posts index a reader shares when the scene has whispers: the
    user's with their standing, since a member who leaves or is removed no
    longer reads the whispers once addressed to them (``chosen_readers``)."""
    if access.is_gm:
        return "gm"
    return site_fragments.viewer(access.user, access.standing)


def _index(access: Access, scene: Scene, version: int) -> list[int]:
    """The ids of the posts of the scene the reader may read, in order."""
    every = f"scene-index:{scene.pk}:{version}"
    own = f"{every}:{_audience(access)}"
    found = cache.get_many([every, own])
    index = found.get(every)
    if index is None:
        rows = list(Post.objects.filter(scene=scene).order_by("pk").values_list("pk", "recipients"))
        index = {"ids": [pk for pk, _ in rows], "whispers": any(r != Post.Recipients.ALL for _, r in rows)}
        cache.set(every, index, fragments.SECONDS)
    # The GM reads every post; without whispers, so does everyone.
    if access.is_gm or not index["whispers"]:
        return index["ids"]
    ids = found.get(own)
    if ids is None:
        addressed = Post.objects.filter(scene=scene).addressed_to(access.user, is_gm=False)
        ids = list(addressed.order_by("pk").values_list("pk", flat=True))
        cache.set(own, ids, fragments.SECONDS)
    return ids


def _page_facts(scene: Scene, version: int, ids: list[int]) -> tuple[PageFacts, dict[int, Post]]:
    """The page's facts, and the posts themselves when they were read with
    them (never: the facts come from their columns alone, and the posts
    whose fragments the cache lacks, after a change mostly the new one, are
    read when rendered)."""
    cache_key = f"scene-page:{scene.pk}:{version}:{fragments.digest(ids)}"
    facts = cache.get(cache_key)
    if facts is not None:
        return facts, {}
    facts = _facts_of_ids(scene, ids)
    cache.set(cache_key, facts, fragments.SECONDS)
    return facts, {}


# What a post's facts are made of, read as plain values (``_facts_of_ids``).
_FACT_COLUMNS = (
    "pk",
    "author_id",
    "on_behalf_of_id",
    "scene_id",
    "recipients",
    "hidden",
    "hidden_at",
    "edited_at",
    "quote_of_id",
    "quote_of__scene_id",
    "quote_of__recipients",
    "quote_of__hidden",
    "quote_of__hidden_at",
    "quote_of__edited_at",
)


def _facts_of_ids(scene: Scene, ids: list[int]) -> PageFacts:
    """The page's facts from the posts' columns, without loading the posts
    (one query, two with whispers to chosen members), and its table rolls
    (``_rolls_of``)."""
    rows = list(Post.objects.filter(pk__in=list(ids)).order_by("pk").values_list(*_FACT_COLUMNS))
    chosen_posts = [row[0] for row in rows if row[3] == Post.Recipients.CHOSEN]
    chosen: dict[int, list[int]] = defaultdict(list)
    if chosen_posts:
        through = Post.chosen_recipients.through.objects.filter(post_id__in=chosen_posts)
        for post_id, user_id in through.order_by("user_id").values_list("post_id", "user_id"):
            chosen[post_id].append(user_id)
    rolls = _rolls_of(scene, [row[0] for row in rows])
    by_post = _rolls_by_post(rolls)
    posts = []
    for pk, author_id, on_behalf_of_id, scene_id, recipients, hidden, hidden_at, edited_at, quote_id, *quote in rows:
        posts.append(
            PostFacts(
                pk=pk,
                author_id=author_id,
                on_behalf_of_id=on_behalf_of_id,
                hidden=hidden,
                edited=edited_at is not None,
                stamp=_stamp(
                    scene_id,
                    recipients,
                    chosen[pk],
                    hidden,
                    hidden_at,
                    edited_at,
                    quote_id,
                    tuple(quote) if quote_id is not None else None,
                    by_post[pk],
                ),
                roll_ids=tuple(tr.pk for tr in by_post[pk]),
            )
        )
    return PageFacts(posts=posts, rolls=rolls)


def _posts_to_render(ids: Iterable[int]) -> list[Post]:
    """The posts with what their fragments show, in one query (two with
    whispers to chosen members)."""
    posts = list(
        Post.objects.filter(pk__in=list(ids))
        .select_related("author", "character", "quote_of__author", "quote_of__character", "on_behalf_of")
        .order_by("pk")
    )
    chosen = [post for post in posts if post.recipients == Post.Recipients.CHOSEN]
    if chosen:
        prefetch_related_objects(chosen, Prefetch("chosen_recipients", queryset=User.objects.order_by("pk")))
    return posts


def _rolls_of(scene: Scene, post_ids: list[int]) -> list[TableRoll]:
    """The posts' table rolls with only the columns the actions read (one
    query, two with activations; none without posts)."""
    if not post_ids:
        return []
    return list(
        TableRoll.objects.filter(post_id__in=post_ids)
        .select_related("character")
        .only(*ROLL_FACT_FIELDS)
        .prefetch_related(*cards.card_prefetches(scene.campaign))
        .order_by("post_id", "position", "pk")
    )


def _rolls_by_post(rolls: Iterable[TableRoll]) -> dict[int, list[TableRoll]]:
    by_post: dict[int, list[TableRoll]] = defaultdict(list)
    for roll in rolls:
        by_post[roll.post_id].append(roll)
    return by_post


def _facts(post: Post, rolls: list[TableRoll]) -> PostFacts:
    chosen = [user.pk for user in post.chosen_recipients.all()] if post.recipients == Post.Recipients.CHOSEN else []
    quote = post.quote_of
    quoted = (quote.scene_id, quote.recipients, quote.hidden, quote.hidden_at, quote.edited_at) if quote else None
    stamp = _stamp(
        post.scene_id,
        post.recipients,
        chosen,
        post.hidden,
        post.hidden_at,
        post.edited_at,
        post.quote_of_id,
        quoted,
        rolls,
    )
    return PostFacts(
        pk=post.pk,
        author_id=post.author_id,
        on_behalf_of_id=post.on_behalf_of_id,
        hidden=post.hidden,
        edited=post.edited_at is not None,
        stamp=stamp,
        roll_ids=tuple(tr.pk for tr in rolls),
    )


def _stamp(scene_id, recipients, chosen, hidden, hidden_at, edited_at, quote_id, quoted, rolls) -> str:
    """What a post's fragment shows of its state: the same from a loaded
    post (``_facts``) as from its columns (``_facts_of_ids``)."""
    return fragments.digest(
        scene_id,
        recipients,
        chosen,
        hidden,
        hidden_at,
        edited_at,
        quote_id,
        quoted,
        [(tr.pk, tr.first_id, tr.latest_id) for tr in rolls],
    )


def _viewer(post: PostFacts, access: Access, *, can_post: bool, last_read: int) -> Viewer:
    """What this reader may see and do with the post (``campaigns.permissions``)."""
    signed_in = access.user.is_authenticated
    return Viewer(
        is_gm=access.is_gm,
        signed_in=signed_in,
        show_text=not post.hidden or perms.can_see_hidden_text(access, post),
        can_history=post.edited and perms.can_see_revisions(access, post),
        unread=bool(last_read) and post.pk > last_read,
        can_quote=signed_in and can_post and not post.hidden,
        can_edit=signed_in and perms.can_edit_post(access, post),
        can_report=signed_in and perms.can_report_post(access, post),
        can_manage=signed_in and perms.can_manage(access),
    )


def _render_posts(
    missing: list[PostFacts],
    rolls: list[TableRoll],
    access: Access,
    scene: Scene,
    viewer_of: Callable[[PostFacts], Viewer],
    keys: dict[int, str],
    loaded: dict[int, Post],
) -> tuple[dict[str, fragments.Parts], dict[str, fragments.Parts]]:
    """The fragments of the posts the cache lacks (rendered, and those to
    keep), from the posts ``loaded`` with the facts or read now, and their
    cards, in a constant number of queries.

    A post read after its facts may have changed in between: its fragment
    is then rendered as it is now, for this request only, as its key
    describes the post it was before."""
    posts = {pk: loaded[pk] for pk in (p.pk for p in missing) if pk in loaded}
    if not_loaded := [p.pk for p in missing if p.pk not in posts]:
        posts.update((post.pk, post) for post in _posts_to_render(not_loaded))
    decorate_posts(posts.values(), access, scene)
    bylines.mark_written_for(posts.values(), scene.campaign)
    by_post = _rolls_by_post(rolls)
    bodies = cards.card_bodies([tr for p in missing for tr in by_post[p.pk]], access=access)
    holes = fragments.new_holes()
    template = get_template("table/_post.html")
    rendered, keep = {}, {}
    for facts in missing:
        post = posts.get(facts.pk)
        if post is None:  # deleted meanwhile: not shown
            continue
        now = _facts(post, by_post[facts.pk])
        now.scene = scene
        still = now == facts
        viewer = viewer_of(now)
        post.roll_cards = []
        for table_roll in by_post[facts.pk]:
            card = dict(bodies[table_roll.pk])
            if card.get("actions_template"):
                card["actions_hole"] = holes(f"actions:{table_roll.pk}")
            post.roll_cards.append(card)
        parts = holes.split(template.render({"post": post, "viewer": viewer, "csrf_token": holes.csrf}))
        rendered[keys[facts.pk]] = parts
        if still:
            keep[keys[facts.pk]] = parts
    return rendered, keep


# What the kept facts hold of a person a loaded row points at (an
# activation's activator …): never their e-mail or password hash.
USER_FIELDS = ("id", "username", "display_name")


def _row(instance: Model) -> tuple[str | None, tuple[str, ...], tuple]:
    """A model instance's loaded columns (of a user, only ``USER_FIELDS``)."""
    loaded = [f.attname for f in instance._meta.concrete_fields if f.attname in instance.__dict__]
    if isinstance(instance, User):
        loaded = [name for name in loaded if name in USER_FIELDS]
    return instance._state.db, tuple(loaded), tuple(instance.__dict__[name] for name in loaded)


def _from_row(model: type[Model], db: str | None, names: tuple[str, ...], values: tuple) -> Model:
    """The instance back, as unpickling makes it (its other columns deferred)."""
    instance = model.__new__(model)
    instance._state = ModelState()
    instance._state.adding = False
    instance._state.db = db
    instance.__dict__.update(zip(names, values, strict=True))
    return instance


def _pack(table_roll: TableRoll) -> tuple:
    """A table roll of the facts as plain values: its columns, its
    character's, and the rows prefetched for its actions (each with what it
    has loaded, but the way back to the roll, put back by ``_unpack``)."""
    character = table_roll.character
    prefetched = {}
    for name, rows in getattr(table_roll, "_prefetched_objects_cache", {}).items():
        prefetched[name] = []
        for row in rows:
            related = {k: v for k, v in row._state.fields_cache.items() if v is not table_roll}
            prefetched[name].append(
                (type(row), _row(row), {k: (type(v), _row(v)) if v is not None else None for k, v in related.items()})
            )
    return _row(table_roll), (_row(character) if character is not None else None), prefetched


def _unpack(roll: tuple, character: tuple | None, prefetched: dict) -> TableRoll:
    table_roll = _from_row(TableRoll, *roll)
    if character is not None:
        table_roll.character = _from_row(Character, *character)
    cache = {}
    for name, rows in prefetched.items():
        manager = getattr(table_roll, name)
        objects = []
        for model, row, related in rows:
            obj = _from_row(model, *row)
            for key, value in related.items():
                obj._state.fields_cache[key] = _from_row(value[0], *value[1]) if value is not None else None
            manager.field.set_cached_value(obj, table_roll)
            objects.append(obj)
        # As ``prefetch_related`` leaves it: the relation's queryset, already read.
        queryset = manager.get_queryset()
        queryset._result_cache = objects
        queryset._prefetch_done = True
        cache[name] = queryset
    table_roll._prefetched_objects_cache = cache
    return table_roll


def _render_actions(card: dict[str, Any]) -> fragments.Parts:
    holes = fragments.new_holes()
    html = get_template(card["actions_template"]).render({"card": card, "csrf_token": holes.csrf})
    return holes.split(html)
