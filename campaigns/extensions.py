"""Where the game adds to the forum without the forum importing it.

The forum (this app) knows nothing of sheets, rolls or game systems. Apps of
higher layers register, in their ``AppConfig.ready()``, a provider for a page
of the forum; the forum's view asks every provider what it adds, in the order
of ``INSTALLED_APPS``, and the template shows it where the page has room:

- ``links``: buttons in the page's bar, ``(label, url)``;
- ``panels``: sections, ``(template, context)``, included with their own
  context plus ``campaign`` and ``access``.

Pages with room for additions: ``PAGES``. A provider returns ``None`` when
it adds nothing (the viewer may not see it, the campaign's game has no such
thing). Events (a campaign was created) are the signals in
``campaigns.signals``.

The scene form has room too (``SceneFields``): a game adds its own fields
(HITOS: the situation aspects), gets them back when the scene is saved, in
the same transaction, and adds what they hold to the campaign's export.

The campaign archive has room too (``ArchivePart``): an app adds its own
records to the archive of what a member may read (the rolls' signed bundles,
a game's sheets, under the key ``sheets``) and reads them back when an archive
becomes a new campaign (``campaigns.archive``). The app that keeps the site's
key signs the archive and says who signed one (``ArchiveSeal``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from django import forms
from django.http import HttpRequest
from django.utils.html import format_html_join

from campaigns.permissions import Access

# The campaign page and the GM's dashboard.
PAGES = ("campaign_page", "dashboard")


@dataclass(frozen=True)
class Additions:
    links: list[tuple[str, str]] = field(default_factory=list)
    panels: list[tuple[str, dict]] = field(default_factory=list)


Provider = Callable[[HttpRequest, Access], Additions | None]
_providers: dict[str, list[Provider]] = {page: [] for page in PAGES}


def provide(page: str, provider: Provider) -> None:
    """Register ``provider`` for ``page`` (once: a second registration of the
    same function is ignored, so a re-run ``ready()`` adds nothing)."""
    if page not in _providers:
        raise ValueError(f"the forum has no page {page!r} for additions: {PAGES}")
    if provider not in _providers[page]:
        _providers[page].append(provider)


def additions(page: str, request: HttpRequest, access: Access) -> Additions:
    """Everything the providers add to ``page`` for this viewer."""
    found = Additions()
    for provider in _providers[page]:
        added = provider(request, access)
        if added is not None:
            found.links.extend(added.links)
            found.panels.extend(added.panels)
    return found


# --- the scene form -------------------------------------------------------------------


@dataclass(frozen=True)
class SceneFields:
    """What a game adds to a scene. ``fields(campaign)``: form fields by name
    (none for a campaign of another game); ``initial(scene)``: their values
    for an existing scene; ``save(scene, values)``: store the cleaned values
    (called inside the scene's saving transaction); ``export(scene)``: what
    the campaign's export says of them; ``prefetch``: what the export's scene
    query should prefetch for ``export``."""

    fields: Callable[[Any], dict[str, forms.Field]]
    initial: Callable[[Any], dict[str, Any]]
    save: Callable[[Any, dict[str, Any]], None]
    export: Callable[[Any], dict[str, Any]]
    prefetch: tuple[str, ...] = ()


_scene_fields: list[SceneFields] = []


def provide_scene_fields(part: SceneFields) -> None:
    if part not in _scene_fields:
        _scene_fields.append(part)


def scene_fields(campaign) -> dict[str, forms.Field]:
    """The games' fields for ``campaign``'s scene form, by name."""
    found: dict[str, forms.Field] = {}
    for part in _scene_fields:
        found.update(part.fields(campaign))
    return found


def scene_initial(scene) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for part in _scene_fields:
        if part.fields(scene.campaign):
            found.update(part.initial(scene))
    return found


def scene_saved(scene, values: dict[str, Any]) -> None:
    """Hand each game the cleaned values of its own fields."""
    for part in _scene_fields:
        names = part.fields(scene.campaign)
        if names:
            part.save(scene, {name: values[name] for name in names if name in values})


def scene_export(scene) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for part in _scene_fields:
        if part.fields(scene.campaign):
            found.update(part.export(scene))
    return found


def scene_prefetch() -> list[str]:
    return [name for part in _scene_fields for name in part.prefetch]


# --- the campaign archive -------------------------------------------------------------


@dataclass(frozen=True)
class ArchivePart:
    """What a higher layer adds to the campaign archive (``campaigns.archive``)
    under its own ``key``, and reads back when an archive is imported.

    ``export(access, posts)``: JSON-ready data of what this reader may read
    (``posts``: the ids of the posts the archive holds, so the part can tie
    its records to them); ``None`` when the part has nothing for this campaign
    (another game's sheets). ``load(campaign, data, imported)``: recreate it
    in the new ``campaign`` inside the import's transaction; ``imported`` maps
    the archive's ids to the new rows (``imported.posts``, ``imported.users``)
    and collects notes for whoever imports (``imported.notes``); the part
    records what it made in ``imported`` (``imported.characters``).
    ``check(data)``: the Spanish problems of the part's data, before anything
    is written."""

    key: str
    export: Callable[[Access, set[int]], Any]
    load: Callable[[Any, Any, Any], None]
    check: Callable[[Any], list[str]] = lambda data: []
    # The keys the part's records are signed with that this site does not know,
    # ``[(key hex, fingerprint)]``: the importer may choose to trust them
    # (``imported.trusted_keys``).
    foreign_keys: Callable[[Any], list[tuple[str, str]]] = lambda data: []
    # The game whose campaigns have this part ("": every campaign).
    system: str = ""
    # Parts loaded before the posts (the sheets that voice them).
    before_posts: bool = False


_archive_parts: list[ArchivePart] = []


def provide_archive_part(part: ArchivePart) -> None:
    """Register ``part`` (once per key and game: a re-run ``ready()`` adds nothing)."""
    if all((p.key, p.system) != (part.key, part.system) for p in _archive_parts):
        _archive_parts.append(part)


def options_part(system: str, problems: Callable[[dict[str, Any]], list[str]]) -> ArchivePart:
    """The part that holds an archived campaign's rules options to what the
    game's options page lets a GM choose: ``problems(options)`` gets the
    stored ``rules_options`` (a dict; the forum refuses anything else) and
    says in Spanish what is wrong, before anything is written. The options
    travel in the forum's own ``campaign`` block: the part only checks them."""

    def check(info: Any) -> list[str]:
        stored = info.get("rules_options", {}) if isinstance(info, dict) else None
        return problems(stored) if isinstance(stored, dict) else []

    return ArchivePart(
        key="campaign", export=lambda access, posts: None, load=lambda *args: None, check=check, system=system
    )


def archive_parts(system: str) -> list[ArchivePart]:
    """The parts of the archive of a campaign of ``system``."""
    return [part for part in _archive_parts if part.system in ("", system)]


@dataclass(frozen=True)
class Provenance:
    """Who vouches for an archive's bytes: ``kind`` is ``SITE`` (this site's
    key signed them, unchanged), ``FOREIGN`` (another key signed them,
    unchanged: its ``fingerprint`` names it), ``ALTERED`` (a signature that
    does not match them) or ``UNSIGNED``."""

    SITE: ClassVar[str] = "site"
    FOREIGN: ClassVar[str] = "foreign"
    ALTERED: ClassVar[str] = "altered"
    UNSIGNED: ClassVar[str] = "unsigned"

    kind: str
    fingerprint: str = ""


@dataclass(frozen=True)
class ArchiveSeal:
    """The site's signature of its archives, from the app that keeps the
    site's key. ``sign(body)``: the signature block of the archive's canonical
    bytes; ``provenance(body, block)``: who signed those bytes."""

    sign: Callable[[bytes], dict[str, str]]
    provenance: Callable[[bytes, Any], Provenance]


_archive_seal: list[ArchiveSeal] = []


def provide_archive_seal(seal: ArchiveSeal) -> None:
    """Register the site's seal (once: a re-run ``ready()`` adds nothing)."""
    if not _archive_seal:
        _archive_seal.append(seal)


def archive_seal() -> ArchiveSeal | None:
    """The site's seal (None when no app keeps a key: archives go unsigned)."""
    return _archive_seal[0] if _archive_seal else None


# --- Feeds: what a post's entry carries beyond its text -------------------------------------

# feed_extras(posts, access) -> {post id: HTML (already escaped, a SafeString)}; one or two
# queries for the whole feed, whatever its size.
FeedExtras = Callable[[Sequence, Access], dict[int, str]]
_feed_extras: list[FeedExtras] = []


def provide_feed_extras(provider: FeedExtras) -> None:
    """Register what the apps above add to a post's feed entry (its rolls)."""
    if provider not in _feed_extras:
        _feed_extras.append(provider)


def feed_extras(posts: Sequence, access: Access) -> dict[int, str]:
    """For each post, the HTML the providers add to its entry, for this reader."""
    found: dict[int, list[str]] = {}
    for provider in _feed_extras:
        for post_id, html in provider(posts, access).items():
            found.setdefault(post_id, []).append(html)
    # format_html_join escapes any part that is not already safe HTML.
    return {post_id: format_html_join("", "{}", ((part,) for part in parts)) for post_id, parts in found.items()}


# --- Whose turn it is: what a scene waits for --------------------------------------------


@dataclass(frozen=True)
class Awaited:
    """One thing a scene waits for from one member: a post (the forum's own),
    a roll request, a combat turn, a pending activation or reaction (the
    layers above). ``text`` is already in the active language and plain (the
    templates escape it); ``private``: only the awaited member and the
    direction may see it (it comes from a whisper or a sealed roll).
    ``public_text``: what the other members read instead of ``text`` (the
    awaited member and the direction read ``text``), when ``text`` may give
    a secret away; "" for the same as ``text``."""

    user_id: int
    scene_id: int
    kind: str
    text: str
    url: str
    character: str = ""
    deadline: Any = None  # campaigns.models.Deadline, when the direction gave one
    private: bool = False
    public_text: str = ""


# waiting(campaigns, scene_ids, user_id) -> what those campaigns wait for: in the
# scenes ``scene_ids`` (None: every open scene), from ``user_id`` (None: anyone).
# One or two queries for the whole call, whatever the number of campaigns.
WaitingProvider = Callable[[Sequence, Any, Any], list[Awaited]]
_waiting: list[WaitingProvider] = []


def provide_waiting(provider: WaitingProvider) -> None:
    if provider not in _waiting:
        _waiting.append(provider)


def waiting_providers() -> list[WaitingProvider]:
    return list(_waiting)


# --- Deadlines: what the layers above give a date to answer by ------------------------------


@dataclass(frozen=True)
class DeadlineKind:
    """A kind of thing the direction may give a deadline (``Deadline.kind``).

    ``label()``: its name ("petición de tirada"); ``awaited(deadline)``: the
    users reminded before it passes (none once its target is answered or
    closed); ``url(deadline)``: where to answer it; ``options(deadline,
    actor)``: what the direction may do once it passed, ``[(key, label)]``,
    as the rules of the campaign's game allow, never an action the player
    did not choose (what a character may do without its player: hold its
    action, not react, let a request close); ``settle(deadline, key, actor,
    client_seed=None)``: carry one out inside the caller's transaction and
    return the sentence recorded (``Deadline.settlement``); an option that
    rolls dice draws them with ``client_seed``, the seed the direction's
    browser sent (rollog/v1 §3.3; None without JavaScript); raises
    ``django.core.exceptions.ValidationError`` with a Spanish message when it
    no longer applies.

    Optional hooks, each with a default that needs nothing from the kind:
    ``urls(deadlines)``: ``{deadline id: url}`` for many at once in a
    constant number of queries (the direction's dashboard); without it (or
    for an id it leaves out) a deadline links to its scene. ``moved(deadline)``:
    the direction gave it more time (``deadline.due_at`` is the new date),
    inside the caller's transaction: a kind that keeps the date on its own
    row too updates it there. ``stays_open(deadline)``: asked after
    ``settle``; true when the deadline still awaits someone else (a round
    with more characters to act), so it is not closed: the direction is told
    again at the next clock round and settles for the next one."""

    kind: str
    label: Callable[[], str]
    awaited: Callable[[Any], list]
    url: Callable[[Any], str]
    options: Callable[[Any, Any], list[tuple[str, str]]]
    settle: Callable[..., str]
    urls: Callable[[list], dict[int, str]] | None = None
    moved: Callable[[Any], None] | None = None
    stays_open: Callable[[Any], bool] | None = None


_deadline_kinds: dict[str, DeadlineKind] = {}


def provide_deadline_kind(kind: DeadlineKind) -> None:
    _deadline_kinds.setdefault(kind.kind, kind)


def deadline_kind(kind: str) -> DeadlineKind | None:
    return _deadline_kinds.get(kind)


# --- Away and back: what the layers above do when a member returns -----------------------

# returned(campaign, user) -> lines for the member's "while you were away" summary (plain
# text, already translated), e.g. the posts someone wrote for their character.
ReturnHook = Callable[[Any, Any], list[str]]
_return_hooks: list[ReturnHook] = []


def provide_return_hook(hook: ReturnHook) -> None:
    if hook not in _return_hooks:
        _return_hooks.append(hook)


def member_returned(campaign, user) -> list[str]:
    """Ask every layer what happened in ``user``'s name while away."""
    return [line for hook in _return_hooks for line in hook(campaign, user)]


# --- The roll log's head: what e-mails and feeds say of it --------------------------------

# log_heads(campaign ids) -> {campaign id: (seq, head hash hex)} of the campaigns whose
# roll log has entries, in one query whatever the number of campaigns.
LogHeads = Callable[[Sequence[int]], dict[int, tuple[int, str]]]
_log_heads: list[LogHeads] = []


def provide_log_heads(provider: LogHeads) -> None:
    """Register the app that keeps the roll log (once: a re-run ``ready()`` adds nothing)."""
    if provider not in _log_heads:
        _log_heads.append(provider)


def log_heads(campaign_ids: Sequence[int]) -> dict[int, tuple[int, str]]:
    """The head of each campaign's roll log ({} when no app keeps one, and no query
    for no campaign): e-mails and feeds print it so that readers can keep it."""
    ids = sorted(set(campaign_ids))
    found: dict[int, tuple[int, str]] = {}
    if not ids:
        return found
    for provider in _log_heads:
        found.update(provider(ids))
    return found
