"""The campaign archive (``hitos-campaign-export/2``): everything a member may
read of a campaign, in one JSON document signed by this site, and a new
campaign made from one.

What the archive holds is decided by the same predicates as the pages
(``campaigns.permissions``): scenes by ``visible_scenes``, posts by
``readable_posts``, edit histories by ``can_see_revisions``; the apps above
the forum add their own parts through ``extensions.provide_archive_part``
(the rolls' signed bundles, the game's sheets) and read them back on import.
The app that keeps the site's key signs the archive's canonical bytes
(``signed_bytes``, ``extensions.ArchiveSeal``), naming the site in
``origin``.

An archive is believed only as far as that signature proves it
(``archive_trust``):

- signed by this site, unchanged, and exported for the account importing it:
  its people are this site's users of the same usernames (a post whose
  author has no account here any more is kept as the GM's, as an NPC under
  the author's archived name marked «antiguo miembro»);
- anything else (unsigned, edited, another site's, someone else's export):
  nobody is linked to an account here; every author, editor, recipient and
  sheet owner is an archived name, text marked «nombre archivado, sin
  verificar», and every post the importer's own (as an NPC's);
- only the archive's GM, proven so, re-creates the campaign to play on, and
  never more public than it was; anyone else gets a private, read-only copy
  for themselves (whispers and GM-only posts keep their recipients either way);
- nobody is made a member: the GM invites whoever should play;
- rolls cannot be signed again: the rolls part keeps each roll's bundle as an
  archived record of its post, called verifiable only against a key this
  site knows, and never makes a live roll.

Every value goes through the limits of the forms that would have written it,
and a file that is not an archive gets Spanish reasons and changes nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts.limits import max_length_of, number_field
from accounts.models import User
from campaigns import extensions
from campaigns.extensions import Provenance
from campaigns.markup import render_markdown
from campaigns.models import Campaign, CampaignStatus, Membership, Post, PostRevision, Scene, Visibility
from campaigns.permissions import Access, can_see_revisions, readable_posts, visible_scenes

FORMAT = "hitos-campaign-export/2"
# What one archive may hold: a guard on what an upload may create.
MAX_BYTES = 50 * 1024 * 1024
MAX_SCENES = 2000
MAX_POSTS = 100_000
# Deeper than any archive this site writes (a sheet's rows inside a scene's post).
MAX_DEPTH = 32
# The limits of the forms that would have written what the archive holds.
NPC_NAME_MAX = max_length_of(Post, "npc_name")
NOTE_MAX = max_length_of(Post, "note")
REASON_MAX = max_length_of(Post, "hidden_reason")
SCENE_DESCRIPTION_MAX = max_length_of(Scene, "description")
POSITION = number_field(Scene, "position")
# The mark of a post whose author has no account here (see the docstring).
FORMER_MEMBER = gettext_lazy("antiguo miembro")
# The mark of a name nothing proves (see the docstring).
ARCHIVED_NAME = gettext_lazy("nombre archivado, sin verificar")


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def signed_bytes(data: dict[str, Any]) -> bytes:
    """The canonical bytes of an archive that its signature covers: the whole
    document but its ``signature``, keys sorted, no spaces, ASCII escapes."""
    body = {key: value for key, value in data.items() if key != "signature"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode()


def archived_name(name: str, *, limit: int = NPC_NAME_MAX) -> str:
    """``name`` as text nothing proves, marked so, within ``limit`` characters."""
    mark = f" ({ARCHIVED_NAME})"
    return " ".join(name.split())[: limit - len(mark)] + mark


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
    archive["origin"] = settings.SITE_URL
    # Signed as it is read back: plain JSON values.
    archive = json.loads(json.dumps(archive, cls=DjangoJSONEncoder))
    seal = extensions.archive_seal()
    if seal is not None:
        archive["signature"] = seal.sign(signed_bytes(archive))
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
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except RecursionError:
        raise ArchiveError([_too_deep()]) from None
    except (UnicodeDecodeError, ValueError):
        raise ArchiveError([_("El archivo no es JSON: no es una partida exportada desde este sitio.")]) from None
    problems = archive_problems(data)
    if problems:
        raise ArchiveError(problems)
    return data


def _no_constant(name: str) -> None:
    """``NaN`` and ``Infinity`` are not JSON."""
    raise ValueError(name)


def _too_deep() -> str:
    return _("El archivo anida más de %(n)s niveles: no es una partida exportada desde este sitio.") % {"n": MAX_DEPTH}


def _value_problems(data: Any) -> list[str]:
    """What no value of an archive may be, whatever its place: nested deeper
    than ``MAX_DEPTH``, or text with a NUL or a lone surrogate (no form takes
    them, and the database refuses them). Walked without recursion."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            return [_too_deep()]
        if isinstance(value, dict):
            stack.extend((item, depth + 1) for pair in value.items() for item in pair)
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)
        elif isinstance(value, str):
            if "\x00" in value:
                return [_("El archivo contiene caracteres nulos: no es una partida exportada desde este sitio.")]
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return [_("El archivo contiene texto que no es UTF-8 válido: no se puede importar.")]
    return []


def _is_time(value: Any) -> bool:
    """Absent, or a moment with its time zone that the database can store."""
    return value is None or _parse_time(value) is not None


def _is_position(value: Any) -> bool:
    """A scene's order, as the scene form takes it (an integer the database stores)."""
    try:
        POSITION.clean(value)
    except ValidationError:
        return False
    return type(value) is int


def _is_text(value: Any, *, limit: int, blank: bool = True) -> bool:
    return isinstance(value, str) and len(value) <= limit and (blank or bool(value.strip()))


def _names(value: Any) -> bool:
    """A list of usernames."""
    return isinstance(value, list) and all(_is_text(name, limit=150) for name in value)


def _revisions(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(r, dict)
        and _is_text(r.get("editor"), limit=150)
        and _is_text(r.get("editor_name", ""), limit=150)
        and _is_text(r.get("body"), limit=50000)
        and _is_text(r.get("note", ""), limit=NOTE_MAX)
        and _is_text(r.get("reason", ""), limit=REASON_MAX)
        and _is_time(r.get("created_at"))
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
    if not _is_text(post.get("npc_name", ""), limit=NPC_NAME_MAX, blank=post.get("voice") != Post.Voice.NPC):
        problems.append(
            _("%(post)s: un mensaje de PNJ necesita el nombre del PNJ, de %(n)s caracteres como mucho.")
            % {"post": label, "n": NPC_NAME_MAX}
        )
    if not _is_text(post.get("note", ""), limit=NOTE_MAX):
        problems.append(_("%(post)s: la nota de juego pasa de %(n)s caracteres.") % {"post": label, "n": NOTE_MAX})
    if not _is_text(post.get("hidden_reason", ""), limit=REASON_MAX):
        problems.append(
            _("%(post)s: el motivo de ocultarlo pasa de %(n)s caracteres.") % {"post": label, "n": REASON_MAX}
        )
    if not all(_is_text(post.get(name, ""), limit=150) for name in ("author_name", "speaker")):
        problems.append(_("%(post)s: el nombre de su autor no tiene el formato esperado.") % {"post": label})
    if not (_is_time(post.get("created_at")) and _is_time(post.get("edited_at"))):
        problems.append(_("%(post)s: su fecha no es válida.") % {"post": label})
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
    if not _is_text(campaign.get("gm", ""), limit=150):
        problems.append(_("La dirección de la partida no tiene el formato esperado."))
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
    if not _is_text(scene.get("description", ""), limit=SCENE_DESCRIPTION_MAX):
        problems.append(
            _("%(where)s: la descripción pasa de %(n)s caracteres.") % {"where": where, "n": SCENE_DESCRIPTION_MAX}
        )
    if not _names(scene.get("participants", [])):
        problems.append(_("%(where)s: sus participantes no tienen el formato esperado.") % {"where": where})
    if not _is_position(scene.get("position", 0)):
        problems.append(_("%(where)s: su orden no es válido.") % {"where": where})
    for post in scene["posts"]:
        _check_post(post, where, problems)
    return problems


def _scenes_problems(scenes: list[Any]) -> list[str]:
    if len(scenes) > MAX_SCENES:
        return [_("El archivo tiene más de %(n)s escenas.") % {"n": MAX_SCENES}]
    total = sum(len(s["posts"]) for s in scenes if isinstance(s, dict) and isinstance(s.get("posts"), list))
    if total > MAX_POSTS:
        return [_("El archivo tiene más de %(n)s mensajes.") % {"n": MAX_POSTS}]
    posts = [s["posts"] for s in scenes if isinstance(s, dict) and isinstance(s.get("posts"), list)]
    ids = [p.get("id") for scene_posts in posts for p in scene_posts if isinstance(p, dict)]
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
    hostile = _value_problems(data)
    if hostile:
        return hostile
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
    reader = data.get("reader")
    if not isinstance(reader, dict) or not all(_is_text(reader.get(k), limit=150) for k in ("username", "standing")):
        problems.append(_("El lector para quien se exportó el archivo no tiene el formato esperado."))
    if not isinstance(data.get("members", []), list) or not _is_text(data.get("origin", ""), limit=500):
        problems.append(_("Los miembros o el origen del archivo no tienen el formato esperado."))
    if not isinstance(data.get("scenes"), list):
        return [*problems, _("Al archivo le faltan las escenas.")]
    problems += _scenes_problems(data["scenes"])
    if problems:
        return problems
    for part in extensions.archive_parts(campaign["system"]):
        if part.key in data:
            problems.extend(part.check(data[part.key]))
    return problems


# --- what an archive proves -------------------------------------------------------------


@dataclass(frozen=True)
class Trust:
    """What an archive proves to the account importing it (see the module's
    docstring). ``proven``: this site signed it, unchanged, for this account,
    so its usernames are this site's users; ``gm``: besides, this account
    directed the archived campaign."""

    provenance: Provenance
    proven: bool = False
    gm: bool = False


def archive_trust(data: dict[str, Any], user: User) -> Trust:
    """What the checked archive ``data`` proves to ``user``."""
    seal = extensions.archive_seal()
    if seal is None:
        return Trust(Provenance(Provenance.UNSIGNED))
    provenance = seal.provenance(signed_bytes(data), data.get("signature"))
    reader = data["reader"]
    proven = provenance.kind == Provenance.SITE and reader["username"] == user.username
    gm = proven and reader["standing"] == "gm" and data["campaign"].get("gm") == user.username
    return Trust(provenance, proven, gm)


def trust_lines(trust: Trust, data: dict[str, Any]) -> list[str]:
    """What the importer is told of ``trust``, in Spanish."""
    provenance = trust.provenance
    fingerprint = {"fingerprint": provenance.fingerprint}
    lines = {
        Provenance.SITE: _("Firmado por este sitio (clave con huella %(fingerprint)s) y sin cambios.") % fingerprint,
        Provenance.FOREIGN: _(
            "Firmado por otro sitio, «%(origin)s», con una clave que este sitio no conoce (huella %(fingerprint)s)."
        )
        % {"origin": str(data.get("origin", "?")), **fingerprint},
        Provenance.ALTERED: _("La firma no corresponde: el archivo fue modificado después de exportarlo."),
        Provenance.UNSIGNED: _("El archivo no lleva la firma de ningún sitio."),
    }
    found = [lines[provenance.kind]]
    if provenance.kind == Provenance.SITE and not trust.proven:
        found.append(_("Pero se exportó para otra cuenta: no prueba nada de la tuya."))
    if not trust.proven:
        found.append(
            _(
                "Nadie queda enlazado a una cuenta de este sitio: autores, editores, destinatarios y dueños de "
                "fichas se muestran con su nombre archivado y la marca «%(mark)s», y sus mensajes quedan a tu "
                "nombre, como PNJ."
            )
            % {"mark": ARCHIVED_NAME}
        )
    if trust.gm:
        found.append(_("Dirigías la partida archivada: la vuelves a crear para seguir jugando."))
    else:
        found.append(
            _(
                "Solo quien dirigía la partida archivada la vuelve a crear para jugar: tú recibes una copia "
                "privada y de solo lectura, solo para ti."
            )
        )
    return found


def archive_summary(data: dict[str, Any]) -> list[tuple[str, int]]:
    """What the checked archive holds, counted for the importer to see
    before choosing: ``[(label, count)]``."""
    posts = [p for s in data["scenes"] for p in s["posts"]]
    recipients = [p["recipients"] for p in posts]
    counts = [
        (_("Escenas"), len(data["scenes"])),
        (_("Escenas solo para algunos miembros"), sum(1 for s in data["scenes"] if not s.get("everyone", True))),
        (_("Mensajes para todos"), recipients.count(Post.Recipients.ALL)),
        (_("Mensajes solo para la dirección"), recipients.count(Post.Recipients.GM)),
        (_("Mensajes a miembros elegidos"), recipients.count(Post.Recipients.CHOSEN)),
        (_("Mensajes ocultos"), sum(1 for p in posts if p.get("hidden"))),
        (_("Miembros"), len(data.get("members", []))),
    ]
    for key, label in (("sheets", _("Fichas")), ("rolls", _("Tiradas"))):
        if isinstance(data.get(key), list):
            counts.append((label, len(data[key])))
    return counts


def archive_foreign_keys(data: dict[str, Any]) -> list[tuple[str, str]]:
    """The keys the archive's parts are signed with that this site does not
    know, ``[(key hex, fingerprint)]``: the importer may trust them."""
    found = []
    for part in extensions.archive_parts(data["campaign"]["system"]):
        if part.key in data:
            found += [key for key in part.foreign_keys(data[part.key]) if key not in found]
    return found


# --- import -----------------------------------------------------------------------------


@dataclass
class Imported:
    """What an import made, by the archive's ids, and what the GM should know.
    ``users``: the archive's usernames that are this site's users (none when
    nothing proves them); ``trusted_keys``: the foreign keys the importer
    trusts; ``archived``: the names shown as archived, unverified names."""

    campaign: Campaign
    trust: Trust = field(default_factory=lambda: Trust(Provenance(Provenance.UNSIGNED)))
    users: dict[str, User] = field(default_factory=dict)
    scenes: dict[int, Scene] = field(default_factory=dict)
    posts: dict[int, Post] = field(default_factory=dict)
    characters: dict[int, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    former: set[str] = field(default_factory=set)
    archived: set[str] = field(default_factory=set)
    names: dict[str, str] = field(default_factory=dict)
    trusted_keys: set[str] = field(default_factory=set)

    def archived_name(self, name: str, *, limit: int = NPC_NAME_MAX) -> str:
        """``name`` as an archived, unverified name, remembered for the notes."""
        self.archived.add(" ".join(name.split()))
        return archived_name(name, limit=limit)

    def public_name(self, username: str) -> str:
        """The name the archive gives ``username`` (its members' list)."""
        return self.names.get(username) or username


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
        # The database stores it in UTC: a moment out of UTC's years is no date.
        moment.astimezone(UTC)
    except (ValueError, OverflowError):
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


def _speaker(imported: Imported, item: dict[str, Any]) -> tuple[User, str, str, Any]:
    """Who the post is by here: ``(author, voice, NPC name, character)``."""
    if not imported.trust.proven:
        # Nothing proves who wrote it: its speaker's archived name, never an account.
        name = str(item.get("speaker") or item.get("author_name") or item["author"])
        return imported.campaign.gm, Post.Voice.NPC, imported.archived_name(name), None
    author = imported.users.get(item["author"])
    voice, npc_name, character = item["voice"], str(item.get("npc_name", "")), None
    if voice == Post.Voice.CHARACTER:
        character = imported.characters.get(item.get("character"))
        if character is None:
            # The sheet did not come with the archive: the post keeps its
            # speaker's name as an NPC's.
            voice = Post.Voice.NPC
            npc_name = str(item.get("speaker") or item.get("author_name") or item["author"])[:NPC_NAME_MAX]
    if author is None:
        # The author has no account here: the GM keeps the post, under the
        # author's archived name, marked as a former member's.
        imported.former.add(item["author"])
        name = str(item.get("author_name") or item["author"])
        if voice != Post.Voice.NPC:
            npc_name = f"{name} ({FORMER_MEMBER})"[:NPC_NAME_MAX]
        voice, character, author = Post.Voice.NPC, None, imported.campaign.gm
    return author, voice, npc_name, character


def _note(imported: Imported, item: dict[str, Any]) -> str:
    """The post's game note; chosen recipients nobody can link to an account
    here are named in it, as archived names."""
    note = str(item.get("note", ""))
    if imported.trust.proven or item["recipients"] != Post.Recipients.CHOSEN:
        return note
    names = [imported.archived_name(imported.public_name(n), limit=200) for n in item.get("chosen_recipients", [])]
    line = _("Para: %(names)s") % {"names": ", ".join(names) or "—"}
    note = "\n\n".join(filter(None, [line, note]))
    if len(note) > NOTE_MAX:
        imported.notes.append(
            _("La nota de juego de un mensaje no cabía con sus destinatarios archivados: se ha recortado.")
        )
    return note[:NOTE_MAX]


def _import_revisions(imported: Imported, post: Post, item: dict[str, Any]) -> None:
    for revision in item.get("revisions", []):
        editor = imported.users.get(revision["editor"])
        reason = str(revision.get("reason", ""))
        if editor is None:
            # Nobody here is said to have made an edit nothing proves.
            editor = imported.campaign.gm
            name = str(revision.get("editor_name") or imported.public_name(revision["editor"]))
            by = _("edición de %(name)s") % {"name": imported.archived_name(name, limit=200)}
            reason = " · ".join(filter(None, [reason, by]))[:REASON_MAX]
        note = str(revision.get("note", ""))
        old = PostRevision.objects.create(
            post=post,
            editor=editor,
            body=revision["body"],
            body_html=render_markdown(revision["body"]),
            note=note,
            note_html=render_markdown(note),
            reason=reason,
        )
        when = _parse_time(revision.get("created_at"))
        if when:
            PostRevision.objects.filter(pk=old.pk).update(created_at=when)


def _import_post(imported: Imported, scene: Scene, item: dict[str, Any]) -> Post:
    author, voice, npc_name, character = _speaker(imported, item)
    note = _note(imported, item)
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
        hidden_reason=str(item.get("hidden_reason", "")),
    )
    post.full_clean(validate_constraints=False)
    post.save()
    if post.recipients == Post.Recipients.CHOSEN:
        # Only proven recipients are linked (``imported.users`` is empty otherwise).
        post.chosen_recipients.set(
            [imported.users[n] for n in item.get("chosen_recipients", []) if n in imported.users]
        )
    # The archive's times, not the import's (``auto_now_add`` set them on save).
    created = _parse_time(item.get("created_at"))
    edited = _parse_time(item.get("edited_at"))
    if created or edited:
        Post.objects.filter(pk=post.pk).update(created_at=created or post.created_at, edited_at=edited)
    _import_revisions(imported, post, item)
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


def _copy_visibility(info: dict[str, Any], trust: Trust, chosen: str | None) -> str:
    """The new campaign's visibility: the proven GM's choice, never more
    public than the archived campaign (it would publish its members' posts to
    everyone); private for anyone else's copy."""
    if not trust.gm:
        return Visibility.PRIVATE
    chosen = chosen or Visibility.PRIVATE
    if chosen == Visibility.PUBLIC and info["visibility"] != Visibility.PUBLIC:
        raise ArchiveError(
            [
                _(
                    "La partida archivada era privada: su copia no puede ser pública, o publicaría mensajes de sus "
                    "miembros."
                )
            ]
        )
    return chosen


def _new_campaign(info: dict[str, Any], gm: User, *, visibility: str, read_only: bool) -> Campaign:
    from campaigns import services

    status = info.get("status") if info.get("status") in CampaignStatus.values else None
    campaign = services.campaign_create(
        gm=gm,
        title=info["title"],
        system=info["system"],
        visibility=visibility,
        description=info.get("description", ""),
        status=CampaignStatus.FINISHED if read_only else status,
    )
    if info.get("rules_options"):
        services.campaign_update(campaign=campaign, rules_options=info["rules_options"])
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
        position=item.get("position", 0),
    )
    scene.full_clean()
    scene.save()
    if not scene.everyone:
        # A split scene keeps its proven participants; with none, only the GM reads it.
        scene.participants.set([imported.users[n] for n in item.get("participants", []) if n in imported.users])
    extensions.scene_saved(scene, _scene_values(imported.campaign, item))
    return scene


def _import_notes(imported: Imported, data: dict[str, Any]) -> None:
    if imported.former:
        imported.notes.append(
            _(
                "Estos autores no tienen cuenta aquí: sus mensajes quedan a tu nombre, como PNJ con su nombre y "
                "la marca «%(mark)s»: %(names)s."
            )
            % {"mark": FORMER_MEMBER, "names": ", ".join(sorted(imported.former))}
        )
    imported.notes += trust_lines(imported.trust, data)
    if imported.archived:
        imported.notes.append(
            _("Nombres archivados, sin verificar: %(names)s.") % {"names": ", ".join(sorted(imported.archived))}
        )
    others = sorted(n for n in imported.users if n != imported.campaign.gm.username)
    if others and imported.trust.gm:
        imported.notes.append(
            _("Nadie entra en la partida sin invitación: invita a quien deba jugar (%(names)s).")
            % {"names": ", ".join(others)}
        )


def _members_names(data: dict[str, Any]) -> dict[str, str]:
    return {
        m["username"]: m["public_name"]
        for m in data.get("members", [])
        if isinstance(m, dict) and isinstance(m.get("username"), str) and isinstance(m.get("public_name"), str)
    }


@transaction.atomic
def campaign_import(*, data: dict[str, Any], gm: User, visibility: str | None = None, trusted_keys=()) -> Imported:
    """A new campaign directed by ``gm`` from an archive (checked again
    here: ``ArchiveError`` when it is wrong, and nothing is written), as far
    as the archive proves it to ``gm`` (``archive_trust``): ``visibility`` is
    the proven GM's choice (private by default; anyone else's copy is private
    and read-only), ``trusted_keys`` the foreign keys (hex) whose rolls ``gm``
    trusts (``archive_foreign_keys``).

    Side effects: the campaign with its off-game scene and roll log
    (``services.campaign_create``), its rules options, its scenes and posts
    with their recipients and histories, and whatever the parts add (the
    game's sheets, the archived rolls); all or nothing. A copy that is not
    the proven GM's is finished and its scenes archived. Nobody is notified
    and nobody is made a member."""
    problems = archive_problems(data)
    if problems:
        raise ArchiveError(problems)
    trust = archive_trust(data, gm)
    try:
        campaign = _new_campaign(
            data["campaign"],
            gm,
            visibility=_copy_visibility(data["campaign"], trust, visibility),
            read_only=not trust.gm,
        )
        imported = Imported(campaign, trust, names=_members_names(data))
        imported.trusted_keys = {key for key, _fingerprint in archive_foreign_keys(data)} & set(trusted_keys)
        if trust.proven:
            imported.users = {u.username: u for u in User.objects.filter(username__in=_usernames(data))}
        _import_content(imported, data)
    except ValidationError as exc:
        raise ArchiveError(exc.messages) from None
    if not trust.gm:
        Scene.objects.filter(campaign=campaign).update(status=Scene.Status.ARCHIVED)
    _import_notes(imported, data)
    return imported


def _import_content(imported: Imported, data: dict[str, Any]) -> None:
    """The scenes, posts and parts of the archive, into ``imported.campaign``."""
    campaign = imported.campaign
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
            imported.posts[post_item["id"]] = _import_post(imported, scene, post_item)
    # Quotes point at the new posts (a quoted post left out of the archive is
    # quoted no more).
    for item in (p for s in data["scenes"] for p in s["posts"]):
        quoted = imported.posts.get(item.get("quote_of"))
        if quoted is not None:
            Post.objects.filter(pk=imported.posts[item["id"]].pk).update(quote_of=quoted)
    for part in parts:
        if not part.before_posts and part.key in data:
            part.load(campaign, data[part.key], imported)
