"""The rolls' part of the campaign archive (``campaigns.archive``).

Export: every roll this reader may read (``readable_rolls``, as the roll log
and the permalink decide), each with the bundle its permalink's download
(``/r/<permalink>.json``) gives this reader, so every roll of the archive
verifies offline with ``verify_roll``. Built in a fixed number of queries
however many rolls.

Import: a roll cannot be signed again by another log, so an imported roll is
never a live one: each bundle is verified against the key it names, and its
post in the new campaign keeps it as structured data (``Post.archived_rolls``,
shown by ``campaigns/_archived_rolls.html`` apart from the post's note, which
is the archive's user text), with the original permalink the archive's bundle
answers to. It is called verifiable only when that key is this site's log key
and the archive is proven («tirada archivada, verificable»), or the key is one
the proven GM chose to trust, named by its fingerprint; this site's roll in an
archive nothing proves is this site's, by the account its signed entry names,
but its tie to the post is not verified; any other key is only named
(«firmada con una clave ajena», with its fingerprint): anyone can make a key
and sign whatever they like with it.

The seal (``ARCHIVE_SEAL``): the archive itself is signed with the site's key,
``Ed25519.sign(SEAL_DOMAIN + SHA-256(SEAL_DOMAIN + body))`` over the
archive's canonical bytes (``campaigns.archive.signed_bytes``), domain
separated so that it can never pass for a roll's or a checkpoint's signature.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Any

from cryptography.exceptions import InvalidSignature
from django.conf import settings
from django.utils.translation import gettext as _

from accounts.models import User
from campaigns.extensions import ArchivePart, ArchiveSeal, Provenance
from campaigns.models import Post
from campaigns.permissions import Access
from rolls import rollog, verify_roll
from rolls.models import RollEntry, intact_head
from rolls.permissions import readable_rolls
from rolls.views import key_fingerprint

KEY = "rolls"
SEAL_DOMAIN = b"hitos/campaign-export/v1\n"
SEAL_FORMAT = "hitos-campaign-export-signature/1"


def _bundles(entries: list[RollEntry], campaign) -> dict[int, dict[str, Any]]:
    """The bundle of each readable entry (``rolls.views._bundle`` with
    ``readable=True``), with the shared rows loaded once."""
    if not entries:
        return {}
    keys = settings.ROLLOG_KEYS
    head = intact_head(campaign)  # LogHeadMismatch: the page that explains, not bundles of a bad head
    head_entry = RollEntry.objects.get(campaign=campaign, seq=head.seq)
    epochs = {
        e.epoch: e
        for e in RollEntry.objects.filter(
            campaign=campaign, kind=RollEntry.Kind.EPOCH_OPEN, epoch__in={e.epoch for e in entries}
        )
    }
    parents = {p.pk: p for p in RollEntry.objects.filter(pk__in=[e.parent_id for e in entries if e.parent_id])}
    children: dict[int, list[str]] = {}
    for parent_id, permalink in RollEntry.objects.filter(parent__in=[e.pk for e in entries]).values_list(
        "parent_id", "permalink"
    ):
        children.setdefault(parent_id, []).append(permalink)
    bundles = {}
    for entry in entries:
        parent = parents.get(entry.parent_id)
        bundles[entry.pk] = rollog.roll_bundle(
            entry.signed,
            epoch_open=epochs[entry.epoch].signed,
            public_key=keys.public_key_hex,
            parent=parent.signed if parent else None,
            parent_opening=bytes(parent.opening) if parent is not None and parent.is_sealed else None,
            opening=bytes(entry.opening) if entry.is_sealed else None,
            head=head_entry.signed,
            children=children.get(entry.pk, []),
        )
    return bundles


def rolls_export(access: Access, posts: set[int]) -> list[dict[str, Any]]:
    """The rolls the reader may read, in log order, each with its bundle and
    the post (of the archive) and scene it belongs to."""
    entries = list(readable_rolls(access).order_by("seq"))
    bundles = _bundles(entries, access.campaign)
    return [
        {
            "permalink": e.permalink,
            "post": e.post_id if e.post_id in posts else None,
            "scene": e.scene_id,
            "bundle": bundles[e.pk],
        }
        for e in entries
    ]


def _public_key(bundle: dict[str, Any]):
    return verify_roll.parse_public_key(str(bundle.get("public_key", "")))


def rolls_check(data: Any) -> list[str]:
    """Every roll of the archive verifies offline against the key its bundle
    names (the original site's)."""
    if not isinstance(data, list):
        return [_("Las tiradas del archivo no tienen el formato esperado.")]
    problems = []
    for item in data:
        permalink = item.get("permalink") if isinstance(item, dict) else None
        if not isinstance(permalink, str) or not (item.get("post") is None or type(item["post"]) is int):
            problems.append(_("Una tirada del archivo no tiene el formato esperado."))
            continue
        try:
            bundle = item["bundle"]
            verify_roll.verify_bundle(bundle, _public_key(bundle))
            # The permalink the post's note will name is the one the signed bytes give.
            verify_roll.check(bundle["permalink"] == permalink, "bad_bundle", "Otro enlace permanente.")
        except (KeyError, TypeError, ValueError, AttributeError, binascii.Error, verify_roll.RollogError):
            problems.append(
                _("La tirada %(permalink)s no se verifica: el archivo está dañado o alterado.")
                % {"permalink": permalink or "?"}
            )
        if len(problems) >= 10:
            problems.append(_("… y más tiradas que no se verifican."))
            break
    return problems


def _key_of(item: dict[str, Any]) -> str:
    return str(item["bundle"].get("public_key", "")).strip().lower()


def rolls_foreign_keys(data: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The keys the archive's rolls are signed with that are not this site's,
    with their fingerprints (``rolls_check`` has verified every bundle)."""
    ours = settings.ROLLOG_KEYS.public_key_hex
    keys = sorted({_key_of(item) for item in data} - {ours})
    return [(key, key_fingerprint(key)) for key in keys]


def _standing(key: str, trusted, proven: bool) -> str:
    """What an archived roll may be called, by the key that signed it and
    what proves the post it is tied to (``Post.archived_rolls``): ``site``
    (this site's roll, in an archive this site proves), ``site_unbound``
    (this site's roll, tied by an archive nothing proves to a post that may
    be forged), ``trusted`` (a key the GM trusts) or ``foreign``."""
    if key == settings.ROLLOG_KEYS.public_key_hex:
        return "site" if proven else "site_unbound"
    return "trusted" if key in trusted else "foreign"


def _what_it_says(bundle: dict[str, Any]) -> dict[str, Any]:
    """The roll's content as its bundle discloses it (its opening for a
    sealed roll, which the archive holds only for readers allowed to see it)."""
    if bundle.get("opening_b64"):
        return json.loads(base64.b64decode(bundle["opening_b64"]))
    return bundle.get("entry") or {}


def _rollers(items: list[dict[str, Any]]) -> dict[str, str]:
    """The public names of this site's accounts that rolled ``items``, by the
    signed entry's own pseudonymous id (``u<id>``), in one query."""
    ours = settings.ROLLOG_KEYS.public_key_hex
    ids = {}
    for item in items:
        user = str(_what_it_says(item["bundle"]).get("user", ""))
        if _key_of(item) == ours and user[:1] == "u" and user[1:].isdigit():
            ids[user] = int(user[1:])
    names = {pk: user.public_name for pk, user in User.objects.in_bulk(list(ids.values())).items()}
    return {signed: names[pk] for signed, pk in ids.items() if pk in names}


def _record(item: dict[str, Any], imported, rollers: dict[str, str]) -> dict[str, Any]:
    content = _what_it_says(item["bundle"])
    key = _key_of(item)
    return {
        "standing": _standing(key, imported.trusted_keys, imported.trust.proven),
        "fingerprint": key_fingerprint(key),
        "purpose": str(content.get("purpose", "")),
        "dice": ", ".join(str(d) for d in content.get("dice", [])),
        "permalink": str(item["permalink"]),
        "by": rollers.get(str(content.get("user", "")), ""),
    }


def rolls_load(campaign, data: list[dict[str, Any]], imported) -> None:
    """Each roll tied to an imported post is kept with that post as an
    archived roll (``Post.archived_rolls``, shown by the post's template, not
    in its note), verifiable or not as its key and the archive's proof say
    (``_standing``), with its original permalink; the rest (free rolls, rolls
    of posts left out) are counted for the GM."""
    by_post: dict[int, list[dict[str, Any]]] = {}
    loose = 0
    for item in data:
        post = imported.posts.get(item.get("post"))
        if post is None:
            loose += 1
        else:
            by_post.setdefault(post.pk, []).append(item)
    rollers = _rollers([item for items in by_post.values() for item in items])
    for post in Post.objects.filter(pk__in=by_post):
        post.archived_rolls = [_record(item, imported, rollers) for item in by_post[post.pk]]
        post.save(update_fields=["archived_rolls"])
    kept = len(data) - loose
    if data:
        imported.notes.append(
            _(
                "Tiradas archivadas en sus mensajes: %(kept)s (no se vuelven a tirar ni a firmar); tiradas sin "
                "mensaje importado: %(loose)s. Guarda el archivo: sus paquetes se verifican sin conexión con "
                "verify.py."
            )
            % {"kept": kept, "loose": loose}
        )


ROLLS_PART = ArchivePart(
    key=KEY, export=rolls_export, load=rolls_load, check=rolls_check, foreign_keys=rolls_foreign_keys
)


# --- the seal of the whole archive --------------------------------------------------------


def _seal_message(body: bytes) -> bytes:
    return SEAL_DOMAIN + hashlib.sha256(SEAL_DOMAIN + body).digest()


def archive_sign(body: bytes) -> dict[str, str]:
    """The signature block of an archive's canonical bytes, with the site's key."""
    keys = settings.ROLLOG_KEYS
    return {
        "format": SEAL_FORMAT,
        "public_key": keys.public_key_hex,
        "fingerprint": key_fingerprint(keys.public_key_hex),
        "sig": keys.signing_key.sign(_seal_message(body)).hex(),
    }


def archive_provenance(body: bytes, block: Any) -> Provenance:
    """Who signed ``body``, as the signature ``block`` proves (the block's own
    fingerprint is never believed: it is computed from its key)."""
    if block is None:
        return Provenance(Provenance.UNSIGNED)
    try:
        key_hex = str(block["public_key"]).strip().lower()
        key = verify_roll.parse_public_key(key_hex)
        key.verify(bytes.fromhex(str(block["sig"])), _seal_message(body))
    except (KeyError, TypeError, ValueError, InvalidSignature, verify_roll.RollogError):
        return Provenance(Provenance.ALTERED)
    if key_hex == settings.ROLLOG_KEYS.public_key_hex:
        return Provenance(Provenance.SITE, key_fingerprint(key_hex))
    return Provenance(Provenance.FOREIGN, key_fingerprint(key_hex))


ARCHIVE_SEAL = ArchiveSeal(sign=archive_sign, provenance=archive_provenance)
