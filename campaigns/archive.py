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

- signed by this site (naming it as its ``origin``), unchanged, and
  exported for the account importing it (same username and id), who directed
  the campaign: its people are this site's accounts whose username and id
  both match the archive's ``accounts`` (a post whose author has no such
  account is kept as the GM's, as an NPC under the author's archived name
  marked «antiguo miembro»);
- the same, exported for a player, co-GM or reader: only the importer is
  linked; everyone else is an archived name marked «nombre archivado,
  verificado por este sitio»;
- anything else (unsigned, edited, another site's, someone else's export):
  nobody is linked to an account here; every author, editor, recipient and
  sheet owner is an archived name, text marked «nombre archivado, sin
  verificar», and every post the importer's own (as an NPC's);
- only the archive's GM, proven so, re-creates the campaign to play on, and
  never more public than it was; anyone else gets a private copy for
  themselves that nothing may write (``Campaign.read_only``, asked by every
  write's predicate; whispers and GM-only posts keep their recipients either
  way);
- nobody is made a member: the GM invites whoever should play;
- rolls cannot be signed again: the rolls part keeps each roll's bundle as an
  archived record of its post, called verifiable only against a key this
  site knows, and never makes a live roll.

Every value goes through the limits of the forms that would have written it,
and a file that is not an archive gets Spanish reasons and changes nothing.
"""

from __future__ import annotations

import json
import math
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts.limits import max_length_of, number_field
from accounts.models import User
from campaigns import extensions
from campaigns.extensions import Provenance
from campaigns.markup import render_markdown
from campaigns.models import (
    ArchiveUpload,
    Campaign,
    CampaignStatus,
    Membership,
    Post,
    PostRevision,
    Scene,
    Visibility,
)
from campaigns.permissions import Access, can_see_revisions, readable_posts, visible_scenes

FORMAT = "hitos-campaign-export/2"
# What one archive may hold: a guard on what an upload may create.
# A demo campaign weighs about 100 kB; a campaign of years, a few MB.
MAX_BYTES = 10 * 1024 * 1024
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
# The mark of a name this site's signature proves was in the archive, shown
# as text in a copy that links nobody else's account.
VERIFIED_NAME = gettext_lazy("nombre archivado, verificado por este sitio")
# How many names a message lists before «y N más».
NAMES_SHOWN = 20


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def signed_bytes(data: dict[str, Any]) -> bytes:
    """The canonical bytes of an archive that its signature covers: the whole
    document but its ``signature``, keys sorted, no spaces, ASCII escapes."""
    body = {key: value for key, value in data.items() if key != "signature"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode()


def plain_name(name: str) -> str:
    """``name`` without control or format characters (a right-to-left
    override would turn the mark around), its spaces collapsed."""
    return " ".join("".join(ch for ch in name if unicodedata.category(ch) not in ("Cc", "Cf")).split())


def archived_name(name: str, *, limit: int = NPC_NAME_MAX, mark=ARCHIVED_NAME) -> str:
    """``name`` as an archived name, marked so (``mark``), within ``limit`` characters."""
    suffix = f" ({mark})"
    return plain_name(name)[: limit - len(suffix)] + suffix


def names_list(names) -> str:
    """``names`` sorted, the first ``NAMES_SHOWN`` of them, and how many more."""
    names = sorted(names)
    shown = ", ".join(names[:NAMES_SHOWN])
    if len(names) <= NAMES_SHOWN:
        return shown
    return _("%(names)s y %(n)s más") % {"names": shown, "n": len(names) - NAMES_SHOWN}


# --- export -----------------------------------------------------------------------------


def _people(access: Access) -> list[tuple[User, str]]:
    """The GM and the active members, with their roles."""
    campaign = access.campaign
    members = Membership.objects.active().filter(campaign=campaign).select_related("user")
    return [(campaign.gm, "gm"), *((m.user, m.role) for m in members)]


def _accounts(access: Access, people, posts: list[Post], revisions: list[PostRevision]) -> dict[str, int]:
    """``{username: id}`` of the reader, the GM, the members, and every
    author, recipient, editor and owner written for that the posts name."""
    users = [access.user, *(user for user, _role in people)]
    for post in posts:
        users += [post.author, *post.chosen_recipients.all(), *filter(None, [post.on_behalf_of])]
    users += [r.editor for r in revisions]
    return {user.username: user.pk for user in users}


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
        "on_behalf_of": post.on_behalf_of.username if post.on_behalf_of else None,
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
        .select_related("author", "character", "on_behalf_of")
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
    people = _people(access)
    accounts = _accounts(access, people, posts, [r for rs in revisions.values() for r in rs])
    archive: dict[str, Any] = {
        "format": FORMAT,
        "exported_at": timezone.now().isoformat(),
        "exported_by": access.user.username,
        "reader": {"username": access.user.username, "id": access.user.pk, "standing": str(access.standing)},
        # Every account the archive names, by its id here: a username given to
        # someone else since is not the same person (``_linked_users``).
        "accounts": accounts,
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
            # A copy of someone else's campaign stays one, whoever exports it.
            "read_only": campaign.read_only,
        },
        # Public name and role, never an e-mail address or a feed token.
        "members": [{"username": u.username, "public_name": u.public_name, "role": role} for u, role in people],
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
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        raise ArchiveError([_too_deep()]) from None
    except _NotFinite:
        raise ArchiveError(
            [_("El archivo no es JSON válido: tiene un número infinito o que no es un número (NaN, 1e400…).")]
        ) from None
    except (UnicodeDecodeError, ValueError):
        raise ArchiveError([_("El archivo no es JSON: no es una partida exportada desde este sitio.")]) from None
    problems = archive_problems(data)
    if problems:
        raise ArchiveError(problems)
    return data


class _NotFinite(ValueError):
    """A number JSON cannot write back (``signed_bytes`` refuses it)."""


def _no_constant(name: str) -> None:
    """``NaN`` and ``Infinity`` are not JSON."""
    raise _NotFinite(name)


def _finite(text: str) -> float:
    """A JSON number with a fraction or exponent, refused when it overflows
    to infinity (``1e400``)."""
    number = float(text)
    if not math.isfinite(number):
        raise _NotFinite(text)
    return number


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
    if not all(_is_text(post.get(name) or "", limit=150) for name in ("author_name", "speaker", "on_behalf_of")):
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
    accounts = data.get("accounts", {})
    if not isinstance(accounts, dict) or not all(type(pk) is int for pk in accounts.values()):
        problems.append(_("Las cuentas que nombra el archivo no tienen el formato esperado."))
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
    docstring). ``proven``: this site signed it, unchanged, for this account
    (same username and id), so its names are the ones this site wrote;
    ``gm``: besides, this account directed the archived campaign, and only
    then are the other names this site's accounts; ``origin``: the site the
    archive says made it (believed only when this site's key signed it and
    it names this site)."""

    provenance: Provenance
    proven: bool = False
    gm: bool = False
    origin: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.provenance.kind,
            "fingerprint": self.provenance.fingerprint,
            "proven": self.proven,
            "gm": self.gm,
            "origin": self.origin,
        }

    @classmethod
    def from_json(cls, stored: dict[str, Any]) -> Trust:
        provenance = Provenance(stored["kind"], stored["fingerprint"])
        return cls(provenance, stored["proven"], stored["gm"], stored["origin"])


def archive_trust(data: dict[str, Any], user: User) -> Trust:
    """What the checked archive ``data`` proves to ``user``. This site's key
    on an archive that names another site as its origin is that other
    site's claim (a key is never shared between sites: docs/verification.md)."""
    origin = str(data.get("origin", ""))
    seal = extensions.archive_seal()
    if seal is None:
        return Trust(Provenance(Provenance.UNSIGNED), origin=origin)
    provenance = seal.provenance(signed_bytes(data), data.get("signature"))
    if provenance.kind == Provenance.SITE and origin != settings.SITE_URL:
        provenance = Provenance(Provenance.FOREIGN, provenance.fingerprint)
    reader = data["reader"]
    proven = provenance.kind == Provenance.SITE and reader["username"] == user.username and reader.get("id") == user.pk
    info = data["campaign"]
    gm = proven and reader["standing"] == "gm" and info.get("gm") == user.username and info.get("read_only") is False
    return Trust(provenance, proven, gm, origin)


def trust_lines(trust: Trust) -> list[str]:
    """What the importer is told of ``trust``, in Spanish."""
    provenance = trust.provenance
    fingerprint = {"fingerprint": provenance.fingerprint}
    lines = {
        Provenance.SITE: _("Firmado por este sitio (clave con huella %(fingerprint)s) y sin cambios.") % fingerprint,
        Provenance.FOREIGN: _(
            "Firmado por un sitio que dice ser «%(origin)s», con una clave que no es la de este sitio para sus "
            "archivos (huella %(fingerprint)s)."
        )
        % {"origin": plain_name(trust.origin) or "?", **fingerprint},
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
    elif not trust.gm:
        found.append(
            _(
                "Solo tu cuenta queda enlazada: el resto de autores, editores, destinatarios y dueños de fichas "
                "se muestran con su nombre archivado y la marca «%(mark)s», y sus mensajes quedan a tu nombre, "
                "como PNJ."
            )
            % {"mark": VERIFIED_NAME}
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


SUMMARY = {
    "scenes": gettext_lazy("Escenas"),
    "split_scenes": gettext_lazy("Escenas solo para algunos miembros"),
    "public_posts": gettext_lazy("Mensajes para todos"),
    "gm_posts": gettext_lazy("Mensajes solo para la dirección"),
    "chosen_posts": gettext_lazy("Mensajes a miembros elegidos"),
    "hidden_posts": gettext_lazy("Mensajes ocultos"),
    "members": gettext_lazy("Miembros"),
    "sheets": gettext_lazy("Fichas"),
    "rolls": gettext_lazy("Tiradas"),
}


def archive_counts(data: dict[str, Any]) -> dict[str, int]:
    """What the checked archive holds, counted (``SUMMARY`` names each)."""
    posts = [p for s in data["scenes"] for p in s["posts"]]
    recipients = [p["recipients"] for p in posts]
    counts = {
        "scenes": len(data["scenes"]),
        "split_scenes": sum(1 for s in data["scenes"] if not s.get("everyone", True)),
        "public_posts": recipients.count(Post.Recipients.ALL),
        "gm_posts": recipients.count(Post.Recipients.GM),
        "chosen_posts": recipients.count(Post.Recipients.CHOSEN),
        "hidden_posts": sum(1 for p in posts if p.get("hidden")),
        "members": len(data.get("members", [])),
    }
    for key in ("sheets", "rolls"):
        if isinstance(data.get(key), list):
            counts[key] = len(data[key])
    return counts


def archive_summary(counts: dict[str, int]) -> list[tuple[str, int]]:
    """``archive_counts`` for the importer to read before choosing: ``[(label, count)]``."""
    return [(str(SUMMARY[key]), count) for key, count in counts.items()]


def archive_review(data: dict[str, Any], user: User) -> dict[str, Any]:
    """What the review page shows of the checked archive ``data`` to ``user``,
    JSON-ready, read once at upload (``ArchiveUpload.review``)."""
    info = data["campaign"]
    return {
        "campaign": {"title": info["title"], "system": info["system"], "visibility": info["visibility"]},
        "counts": archive_counts(data),
        "trust": archive_trust(data, user).as_json(),
        "foreign_keys": [list(pair) for pair in archive_foreign_keys(data)],
    }


def archive_foreign_keys(data: dict[str, Any]) -> list[tuple[str, str]]:
    """The keys the archive's parts are signed with that this site does not
    know, ``[(key hex, fingerprint)]``: the importer may trust them."""
    found = []
    for part in extensions.archive_parts(data["campaign"]["system"]):
        if part.key in data:
            found += [key for key in part.foreign_keys(data[part.key]) if key not in found]
    return found


# --- an upload, kept for its review -----------------------------------------------------


def upload_cutoff() -> datetime:
    """Uploads made before this moment are gone (``ArchiveUpload.UPLOAD_LIFETIME``)."""
    return timezone.now() - ArchiveUpload.UPLOAD_LIFETIME


@transaction.atomic
def upload_keep(owner: User, raw: bytes, data: dict[str, Any]) -> ArchiveUpload:
    """Keep ``raw`` (read as the checked archive ``data``) for ``owner`` to
    review, with what the review shows read once (``archive_review``);
    ``owner``'s earlier uploads and everyone's expired ones are deleted."""
    ArchiveUpload.objects.filter(Q(owner=owner) | Q(created_at__lt=upload_cutoff())).delete()
    return ArchiveUpload.objects.create(owner=owner, raw=raw, review=archive_review(data, owner))


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
        """``name`` as an archived name (verified by this site's signature
        when the archive is proven), remembered for the notes."""
        self.archived.add(plain_name(name))
        return archived_name(name, limit=limit, mark=VERIFIED_NAME if self.trust.proven else ARCHIVED_NAME)

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
            names.add(post.get("on_behalf_of"))
    return {n for n in names if isinstance(n, str)}


def _speaker(imported: Imported, item: dict[str, Any]) -> tuple[User, str, str, Any, User | None]:
    """Who the post is by here: ``(author, voice, NPC name, character,
    written for)``. Only a linked account (``imported.users``) is anyone's."""
    author = imported.users.get(item["author"])
    name = str(item.get("speaker") or item.get("author_name") or item["author"])
    behalf = item.get("on_behalf_of")
    written_for = imported.users.get(behalf) if behalf else None
    if (author is None and not imported.trust.gm) or (behalf and written_for is None):
        # Nothing links its author (or the owner it was written for) to an
        # account here: its speaker's archived name, never an account.
        if behalf:
            name = _("%(speaker)s, en nombre de %(owner)s") % {"speaker": name, "owner": imported.public_name(behalf)}
        return imported.campaign.gm, Post.Voice.NPC, imported.archived_name(name), None, None
    voice, npc_name, character = item["voice"], str(item.get("npc_name", "")), None
    if voice == Post.Voice.CHARACTER:
        character = imported.characters.get(item.get("character"))
        if character is None:
            # The sheet did not come with the archive: the post keeps its
            # speaker's name as an NPC's.
            voice, npc_name, written_for = Post.Voice.NPC, name[:NPC_NAME_MAX], None
    if author is None:
        # The proven GM's archive names an author with no account here: the
        # GM keeps the post, under the author's archived name, marked as a
        # former member's.
        imported.former.add(item["author"])
        name = str(item.get("author_name") or item["author"])
        if voice != Post.Voice.NPC:
            npc_name = f"{plain_name(name)} ({FORMER_MEMBER})"[:NPC_NAME_MAX]
        voice, character, author, written_for = Post.Voice.NPC, None, imported.campaign.gm, None
    return author, voice, npc_name, character, written_for


def _note(imported: Imported, item: dict[str, Any]) -> str:
    """The post's game note; chosen recipients nobody can link to an account
    here are named in it, as archived names."""
    note = str(item.get("note", ""))
    unlinked = [n for n in item.get("chosen_recipients", []) if n not in imported.users]
    if item["recipients"] != Post.Recipients.CHOSEN or not unlinked:
        return note
    names = [imported.archived_name(imported.public_name(n), limit=200) for n in unlinked]
    line = _("Para: %(names)s") % {"names": ", ".join(names)}
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
    author, voice, npc_name, character, written_for = _speaker(imported, item)
    note = _note(imported, item)
    post = Post(
        scene=scene,
        author=author,
        voice=voice,
        character=character,
        on_behalf_of=written_for,
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
        # Only linked recipients (``imported.users``); the others are named in the note.
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


def _import_notes(imported: Imported) -> None:
    if imported.former:
        imported.notes.append(
            _(
                "Estos autores no tienen cuenta aquí: sus mensajes quedan a tu nombre, como PNJ con su nombre y "
                "la marca «%(mark)s»: %(names)s."
            )
            % {"mark": FORMER_MEMBER, "names": names_list(imported.former)}
        )
    imported.notes += trust_lines(imported.trust)
    if imported.archived:
        imported.notes.append(_("Nombres archivados: %(names)s.") % {"names": names_list(imported.archived)})
    others = [n for n in imported.users if n != imported.campaign.gm.username]
    if others and imported.trust.gm:
        imported.notes.append(
            _("Nadie entra en la partida sin invitación: invita a quien deba jugar (%(names)s).")
            % {"names": names_list(others)}
        )


def _linked_users(data: dict[str, Any], gm: User, trust: Trust) -> dict[str, User]:
    """The archive's usernames that are this site's accounts: none when
    nothing proves the archive; only the importer in a copy of someone
    else's campaign; for the proven GM, every account whose username and id
    (``accounts``) both match (a username given to someone since is not the
    same person)."""
    if not trust.proven:
        return {}
    if not trust.gm:
        return {gm.username: gm}
    accounts = data.get("accounts", {})
    return {
        u.username: u for u in User.objects.filter(username__in=_usernames(data)) if accounts.get(u.username) == u.pk
    }


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
        if trust.gm:
            # Only the proven GM speaks for the new campaign's trust in a key.
            imported.trusted_keys = {key for key, _fingerprint in archive_foreign_keys(data)} & set(trusted_keys)
        imported.users = _linked_users(data, gm, trust)
        _import_content(imported, data)
    except ValidationError as exc:
        raise ArchiveError(exc.messages) from None
    if not trust.gm:
        # Someone else's campaign: a copy to read, that nothing may write (``permissions.writable``).
        Scene.objects.filter(campaign=campaign).update(status=Scene.Status.ARCHIVED)
        Campaign.objects.filter(pk=campaign.pk).update(read_only=True)
        campaign.read_only = True
    _import_notes(imported)
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
