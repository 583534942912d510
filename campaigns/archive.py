"""The campaign archive (``hitos-campaign-export/2``): everything a member may
read of a campaign, in one JSON document, and a new campaign made from one.

What the archive holds is decided by the same predicates as the pages
(``campaigns.permissions``): scenes by ``visible_scenes``, posts by
``readable_posts``, edit histories by ``can_see_revisions``; the apps above
the forum add their own parts through ``extensions.provide_archive_part``
(the rolls' signed bundles, the game's sheets) and read them back on import.

An import never rewrites history as if it had happened here:

- authors are this site's users of the same username; a post whose author
  has no account here is kept as the GM's, written as an NPC under the
  author's archived public name with the mark «antiguo miembro», so nobody is
  shown as having written what they did not write here;
- nobody is made a member: the GM invites whoever should play;
- rolls cannot be signed again: the rolls part keeps each roll's bundle as an
  archived record of its post, which still verifies offline against the
  original site's key, and never makes a live roll.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts.models import User
from campaigns import extensions
from campaigns.markup import render_markdown
from campaigns.models import Campaign, CampaignStatus, Membership, Post, PostRevision, Scene, Visibility
from campaigns.permissions import Access, can_see_revisions, readable_posts, visible_scenes

FORMAT = "hitos-campaign-export/2"
# What one archive may hold: a guard on what an upload may create.
MAX_BYTES = 50 * 1024 * 1024
MAX_SCENES = 2000
MAX_POSTS = 100_000
# The mark of a post whose author has no account here (see the docstring).
FORMER_MEMBER = gettext_lazy("antiguo miembro")


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


# --- export -----------------------------------------------------------------------------


def _people(access: Access) -> list[dict[str, Any]]:
    """The GM and the active members: public name and role, never an e-mail
    address or a feed token."""
    campaign = access.campaign
    people = [{"username": campaign.gm.username, "public_name": campaign.gm.public_name, "role": "gm"}]
    for membership in Membership.objects.active().filter(campaign=campaign).select_related("user"):
        people.append(
            {"username": membership.user.username, "public_name": membership.user.public_name, "role": membership.role}
        )
    return people


def _post(post: Post, revisions: list[PostRevision]) -> dict[str, Any]:
    return {
        "id": post.pk,
        "author": post.author.username,
        "author_name": post.author.public_name,
        "speaker": post.speaker_name,
        "voice": post.voice,
        "character": post.character_id,
        "npc_name": post.npc_name,
        "recipients": post.recipients,
        "chosen_recipients": [u.username for u in post.chosen_recipients.all()],
        "created_at": _time(post.created_at),
        "edited_at": _time(post.edited_at),
        "hidden": post.hidden,
        "hidden_reason": post.hidden_reason if post.hidden else "",
        "quote_of": post.quote_of_id,
        "body": post.body,
        "note": post.note,
        "revisions": [
            {
                "editor": r.editor.username,
                "editor_name": r.editor.public_name,
                "created_at": _time(r.created_at),
                "body": r.body,
                "note": r.note,
                "reason": r.reason,
            }
            for r in revisions
        ],
    }


def campaign_export(*, access: Access) -> dict[str, Any]:
    """The archive of what ``access.user`` may read of the campaign (see the
    module's docstring), JSON-ready. Its queries do not grow with the number
    of scenes, posts or revisions."""
    campaign = access.campaign
    scenes = list(visible_scenes(access).prefetch_related("participants", *extensions.scene_prefetch()))
    for scene in scenes:
        scene.campaign = campaign
    posts = list(
        readable_posts(access)
        .select_related("author", "character")
        .prefetch_related("chosen_recipients")
        .order_by("pk")
    )
    # The edit history, as the post's history page shows it to this reader.
    with_history = [p.pk for p in posts if can_see_revisions(access, p)]
    revisions: dict[int, list[PostRevision]] = {}
    for revision in (
        PostRevision.objects.filter(post__in=with_history).select_related("editor").order_by("created_at", "pk")
    ):
        revisions.setdefault(revision.post_id, []).append(revision)
    by_scene: dict[int, list] = {s.pk: [] for s in scenes}
    for post in posts:
        by_scene.setdefault(post.scene_id, []).append(_post(post, revisions.get(post.pk, [])))
    post_ids = {p.pk for p in posts}
    archive: dict[str, Any] = {
        "format": FORMAT,
        "exported_at": timezone.now().isoformat(),
        "exported_by": access.user.username,
        "reader": {"username": access.user.username, "standing": str(access.standing)},
        "campaign": {
            "slug": campaign.slug,
            "title": campaign.title,
            "system": campaign.system,
            "gm": campaign.gm.username,
            "description": campaign.description,
            "visibility": campaign.visibility,
            "status": campaign.status,
            "rules_options": campaign.rules_options,
            "created_at": _time(campaign.created_at),
        },
        "members": _people(access),
        "scenes": [
            {
                "id": s.pk,
                "title": s.title,
                "description": s.description,
                "status": s.status,
                "offgame": s.is_offgame,
                "position": s.position,
                "everyone": s.everyone,
                "participants": [] if s.everyone else sorted(u.username for u in s.participants.all()),
                **extensions.scene_export(s),
                "posts": by_scene.get(s.pk, []),
            }
            for s in scenes
        ],
    }
    for part in extensions.archive_parts(campaign.system):
        exported = part.export(access, post_ids)
        if exported is not None:
            archive[part.key] = exported
    return archive


# --- reading an archive -----------------------------------------------------------------


class ArchiveError(ValueError):
    """An archive this site cannot import; ``problems`` says why, in Spanish."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


def archive_read(raw: bytes) -> dict[str, Any]:
    """The archive in ``raw`` (the bytes of an uploaded or given file),
    checked before anything is written (``ArchiveError`` otherwise)."""
    if len(raw) > MAX_BYTES:
        raise ArchiveError(
            [_("El archivo ocupa más de %(mb)s MB: es demasiado grande para importarlo.") % {"mb": MAX_BYTES // 2**20}]
        )
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ArchiveError([_("El archivo no es JSON: no es una partida exportada desde este sitio.")]) from None
    problems = archive_problems(data)
    if problems:
        raise ArchiveError(problems)
    return data


def _is_text(value: Any, *, limit: int, blank: bool = True) -> bool:
    return isinstance(value, str) and len(value) <= limit and (blank or bool(value.strip()))


def _names(value: Any) -> bool:
    """A list of usernames."""
    return isinstance(value, list) and all(_is_text(name, limit=150) for name in value)


def _revisions(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(r, dict) and _is_text(r.get("editor"), limit=150) and _is_text(r.get("body"), limit=50000)
        for r in value
    )


def _check_post(post: Any, where: str, problems: list[str]) -> None:
    if not isinstance(post, dict) or type(post.get("id")) is not int:
        problems.append(_("%(where)s: un mensaje no tiene el formato esperado.") % {"where": where})
        return
    label = _("%(where)s, mensaje %(id)s") % {"where": where, "id": post["id"]}
    if not _is_text(post.get("author"), limit=150, blank=False):
        problems.append(_("%(post)s: falta su autor.") % {"post": label})
    if not _is_text(post.get("body"), limit=50000, blank=False):
        problems.append(_("%(post)s: el texto falta o pasa de 50 000 caracteres.") % {"post": label})
    if post.get("voice") not in Post.Voice.values:
        problems.append(_("%(post)s: «escrito como» no es válido.") % {"post": label})
    if post.get("recipients") not in Post.Recipients.values:
        problems.append(_("%(post)s: los destinatarios no son válidos.") % {"post": label})
    if not _names(post.get("chosen_recipients", [])) or not _revisions(post.get("revisions", [])):
        problems.append(
            _("%(post)s: su historial o sus destinatarios no tienen el formato esperado.") % {"post": label}
        )
    for name in ("character", "quote_of"):
        if post.get(name) is not None and type(post[name]) is not int:
            problems.append(_("%(post)s: su personaje o su cita no tienen el formato esperado.") % {"post": label})
            break


def _campaign_problems(campaign: dict[str, Any]) -> list[str]:
    problems = []
    if not _is_text(campaign.get("title"), limit=120, blank=False):
        problems.append(_("El título de la partida falta o pasa de 120 caracteres."))
    if not _is_text(campaign.get("description", ""), limit=20000):
        problems.append(_("La descripción de la partida pasa de 20 000 caracteres."))
    systems = [key for key, _label in Campaign._meta.get_field("system").choices]
    if campaign.get("system") not in systems:
        problems.append(
            _("La partida es del sistema «%(system)s», que este sitio no tiene.") % {"system": campaign.get("system")}
        )
    if campaign.get("visibility") not in Visibility.values:
        problems.append(_("La visibilidad de la partida no es válida."))
    if not isinstance(campaign.get("rules_options", {}), dict):
        problems.append(_("Las opciones de reglas no tienen el formato esperado."))
    return problems


def _scene_problems(scene: Any, where: str) -> list[str]:
    if not isinstance(scene, dict) or not isinstance(scene.get("posts"), list):
        return [_("%(where)s: no tiene el formato esperado.") % {"where": where}]
    problems = []
    if not _is_text(scene.get("title"), limit=120, blank=False):
        problems.append(_("%(where)s: el título falta o pasa de 120 caracteres.") % {"where": where})
    if scene.get("status") not in Scene.Status.values:
        problems.append(_("%(where)s: su estado no es válido.") % {"where": where})
    if not _names(scene.get("participants", [])):
        problems.append(_("%(where)s: sus participantes no tienen el formato esperado.") % {"where": where})
    for post in scene["posts"]:
        _check_post(post, where, problems)
    return problems


def _scenes_problems(scenes: list[Any]) -> list[str]:
    if len(scenes) > MAX_SCENES:
        return [_("El archivo tiene más de %(n)s escenas.") % {"n": MAX_SCENES}]
    total = sum(len(s["posts"]) for s in scenes if isinstance(s, dict) and isinstance(s.get("posts"), list))
    if total > MAX_POSTS:
        return [_("El archivo tiene más de %(n)s mensajes.") % {"n": MAX_POSTS}]
    ids = [p.get("id") for s in scenes if isinstance(s, dict) for p in s.get("posts", []) if isinstance(p, dict)]
    if len(ids) != len(set(map(str, ids))):
        return [_("Dos mensajes del archivo tienen el mismo número.")]
    problems: list[str] = []
    for number, scene in enumerate(scenes, start=1):
        problems += _scene_problems(scene, _("Escena %(n)s") % {"n": number})
        if len(problems) > 20:
            return [*problems[:20], _("… y más problemas.")]
    return problems


def archive_problems(data: Any) -> list[str]:
    """What is wrong with ``data`` as an archive (an empty list when nothing):
    its format, its shape, its sizes, and what each part says of its own."""
    if not isinstance(data, dict):
        return [_("El archivo no es una partida exportada desde este sitio.")]
    found = data.get("format")
    if found != FORMAT:
        if isinstance(found, str) and found.startswith("hitos-campaign-export/"):
            return [
                _("El archivo es del formato «%(found)s»; solo se importa «%(expected)s». Expórtala de nuevo.")
                % {"found": found, "expected": FORMAT}
            ]
        return [_("El archivo no es una partida exportada desde este sitio.")]
    campaign = data.get("campaign")
    if not isinstance(campaign, dict):
        return [_("Al archivo le falta la partida.")]
    problems = _campaign_problems(campaign)
    if not isinstance(data.get("scenes"), list):
        return [*problems, _("Al archivo le faltan las escenas.")]
    problems += _scenes_problems(data["scenes"])
    if problems:
        return problems
    for part in extensions.archive_parts(campaign["system"]):
        if part.key in data:
            problems.extend(part.check(data[part.key]))
    return problems


# --- import -----------------------------------------------------------------------------


@dataclass
class Imported:
    """What an import made, by the archive's ids, and what the GM should know."""

    campaign: Campaign
    users: dict[str, User] = field(default_factory=dict)
    scenes: dict[int, Scene] = field(default_factory=dict)
    posts: dict[int, Post] = field(default_factory=dict)
    characters: dict[int, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    former: set[str] = field(default_factory=set)


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if timezone.is_aware(moment) else None


def _usernames(data: dict[str, Any]) -> set[str]:
    members = data.get("members") if isinstance(data.get("members"), list) else []
    names = {m.get("username") for m in members if isinstance(m, dict) and isinstance(m.get("username"), str)}
    for scene in data["scenes"]:
        names.update(scene.get("participants", []))
        for post in scene["posts"]:
            names.add(post["author"])
            names.update(post.get("chosen_recipients", []))
            names.update(r["editor"] for r in post.get("revisions", []))
    return {n for n in names if isinstance(n, str)}


def _import_post(imported: Imported, scene: Scene, item: dict[str, Any], gm: User) -> Post:
    author = imported.users.get(item["author"])
    voice, npc_name, character = item["voice"], str(item.get("npc_name", ""))[:80], None
    if voice == Post.Voice.CHARACTER:
        character = imported.characters.get(item.get("character"))
        if character is None:
            # The sheet did not come with the archive: the post keeps its
            # speaker's name as an NPC's.
            voice, npc_name = Post.Voice.NPC, str(item.get("speaker", ""))[:80]
    if author is None:
        # The author has no account here: the GM keeps the post, under the
        # author's archived name, marked as a former member's.
        imported.former.add(item["author"])
        name = str(item.get("author_name") or item["author"])
        if voice != Post.Voice.NPC:
            npc_name = f"{name} ({FORMER_MEMBER})"[:80]
        voice, character, author = Post.Voice.NPC, None, gm
    note = str(item.get("note", ""))
    post = Post(
        scene=scene,
        author=author,
        voice=voice,
        character=character,
        npc_name=npc_name if voice == Post.Voice.NPC else "",
        body=item["body"],
        body_html=render_markdown(item["body"]),
        note=note,
        note_html=render_markdown(note),
        recipients=item["recipients"],
        hidden=bool(item.get("hidden")),
        hidden_reason=str(item.get("hidden_reason", ""))[:500],
    )
    post.full_clean(validate_constraints=False)
    post.save()
    chosen = [imported.users[n] for n in item.get("chosen_recipients", []) if n in imported.users]
    if post.recipients == Post.Recipients.CHOSEN:
        post.chosen_recipients.set(chosen)
    # The archive's times, not the import's (``auto_now_add`` set them on save).
    created = _parse_time(item.get("created_at"))
    edited = _parse_time(item.get("edited_at"))
    if created or edited:
        Post.objects.filter(pk=post.pk).update(created_at=created or post.created_at, edited_at=edited)
    for revision in item.get("revisions", []):
        if not isinstance(revision, dict) or not isinstance(revision.get("body"), str):
            continue
        old = PostRevision.objects.create(
            post=post,
            editor=imported.users.get(revision.get("editor"), gm),
            body=revision["body"],
            body_html=render_markdown(revision["body"]),
            note=str(revision.get("note", "")),
            note_html=render_markdown(str(revision.get("note", ""))),
            reason=str(revision.get("reason", ""))[:500],
        )
        when = _parse_time(revision.get("created_at"))
        if when:
            PostRevision.objects.filter(pk=old.pk).update(created_at=when)
    return post


def _scene_values(campaign: Campaign, item: dict[str, Any]) -> dict[str, Any]:
    """What the game exported of a scene, cleaned by its own scene-form
    fields as if typed there (a list is one value per line)."""
    values = {}
    for name, form_field in extensions.scene_fields(campaign).items():
        raw = item.get(name)
        if isinstance(raw, list):
            raw = "\n".join(str(line) for line in raw)
        try:
            values[name] = form_field.clean(raw)
        except ValidationError as exc:
            raise ArchiveError(
                [_("Escena «%(title)s»: %(problem)s") % {"title": item["title"], "problem": " ".join(exc.messages)}]
            ) from None
    return values


def _new_campaign(info: dict[str, Any], gm: User) -> Campaign:
    from campaigns import services

    try:
        campaign = services.campaign_create(
            gm=gm,
            title=info["title"],
            system=info["system"],
            visibility=info["visibility"],
            description=info.get("description", ""),
            status=info.get("status") if info.get("status") in CampaignStatus.values else None,
        )
        if info.get("rules_options"):
            services.campaign_update(campaign=campaign, rules_options=info["rules_options"])
    except ValidationError as exc:
        raise ArchiveError(exc.messages) from None
    return campaign


def _import_scene(imported: Imported, item: dict[str, Any], offgame: Scene) -> Scene:
    """The archive's off-game scene is the new campaign's own; any other is made."""
    if item.get("offgame"):
        return offgame
    description = str(item.get("description", ""))
    scene = Scene(
        campaign=imported.campaign,
        title=item["title"],
        description=description,
        description_html=render_markdown(description),
        status=item["status"],
        everyone=bool(item.get("everyone", True)),
        position=item["position"] if type(item.get("position")) is int and item["position"] >= 0 else 0,
    )
    scene.full_clean()
    scene.save()
    if not scene.everyone:
        scene.participants.set([imported.users[n] for n in item.get("participants", []) if n in imported.users])
    extensions.scene_saved(scene, _scene_values(imported.campaign, item))
    return scene


def _import_notes(imported: Imported, gm: User) -> None:
    if imported.former:
        imported.notes.append(
            _(
                "Estos autores no tienen cuenta aquí: sus mensajes quedan a tu nombre, como PNJ con su nombre y "
                "la marca «%(mark)s»: %(names)s."
            )
            % {"mark": FORMER_MEMBER, "names": ", ".join(sorted(imported.former))}
        )
    others = sorted(n for n in imported.users if n != gm.username)
    if others:
        imported.notes.append(
            _("Nadie entra en la partida sin invitación: invita a quien deba jugar (%(names)s).")
            % {"names": ", ".join(others)}
        )


@transaction.atomic
def campaign_import(*, data: dict[str, Any], gm: User) -> Imported:
    """A new campaign directed by ``gm`` from an archive (checked again
    here: ``ArchiveError`` when it is wrong, and nothing is written).

    Side effects: the campaign with its off-game scene and roll log
    (``services.campaign_create``), its rules options, its scenes and posts
    with their recipients and histories, and whatever the parts add (the
    game's sheets, the archived rolls); all or nothing. Nobody is notified
    and nobody is made a member."""
    problems = archive_problems(data)
    if problems:
        raise ArchiveError(problems)
    campaign = _new_campaign(data["campaign"], gm)
    imported = Imported(campaign)
    imported.users = {u.username: u for u in User.objects.filter(username__in=_usernames(data))}
    parts = extensions.archive_parts(campaign.system)
    for part in parts:
        if part.before_posts and part.key in data:
            part.load(campaign, data[part.key], imported)
    offgame = Scene.objects.get(campaign=campaign, is_offgame=True)
    for item in data["scenes"]:
        scene = _import_scene(imported, item, offgame)
        if type(item.get("id")) is int:
            imported.scenes[item["id"]] = scene
        for post_item in item["posts"]:
            imported.posts[post_item["id"]] = _import_post(imported, scene, post_item, gm)
    # Quotes point at the new posts (a quoted post left out of the archive is
    # quoted no more).
    for item in (p for s in data["scenes"] for p in s["posts"]):
        quoted = imported.posts.get(item.get("quote_of"))
        if quoted is not None:
            Post.objects.filter(pk=imported.posts[item["id"]].pk).update(quote_of=quoted)
    for part in parts:
        if not part.before_posts and part.key in data:
            part.load(campaign, data[part.key], imported)
    _import_notes(imported, gm)
    return imported
