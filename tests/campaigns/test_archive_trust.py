"""What an imported archive may claim (issue 29, item 1): an archive is
trusted only as far as this site's signature proves it, a roll is verifiable
only against a key this site knows, private posts keep their recipients, only
the archive's GM re-creates the campaign as GM, and every hostile file gets a
Spanish message and changes nothing."""

from __future__ import annotations

import json

import pytest
from cryptography.fernet import Fernet
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from campaigns import archive, services
from campaigns.models import ArchiveUpload, Campaign, CampaignStatus, Post, Scene, Visibility
from campaigns.permissions import campaign_access
from rolls.keys import RollKeys
from rolls.views import key_fingerprint
from systems.hitos.models import Aspect
from tests.campaigns.test_archive import _export, _post_with_roll, archived_rolls_html
from tests.conftest import World, client_for, make_world
from tests.factories import AspectFactory, UserFactory

pytestmark = pytest.mark.django_db

MARK = "nombre archivado, sin verificar"
VERIFIED = "nombre archivado, verificado por este sitio"
IMPORT_URL = "/partidas/importar/"


@pytest.fixture
def world(db) -> World:
    world = make_world(Visibility.PRIVATE)
    # Sheets made on the site have a concept (the sheet form asks for one).
    for character in (world.ines, world.tomas):
        AspectFactory(character=character, kind=Aspect.Kind.CONCEPT, phrase="Un concepto")
    _post_with_roll(world, world.ana, world.scene, "Salto la verja.")
    services.post_create(
        access=campaign_access(world.gm, world.campaign),
        scene=world.scene,
        voice=Post.Voice.OOC,
        body="Solo para Bruno.",
        recipients=Post.Recipients.CHOSEN,
        chosen=[world.bruno],
    )
    return world


def _fresh_keys() -> RollKeys:
    return RollKeys(Ed25519PrivateKey.generate(), Fernet(Fernet.generate_key()))


def _roll_of_another_key(settings) -> tuple[dict, str]:
    """A roll item of another campaign whose log signs with a freshly made key,
    and that key."""
    real = settings.ROLLOG_KEYS
    settings.ROLLOG_KEYS = _fresh_keys()
    other = make_world(Visibility.PUBLIC)
    post = _post_with_roll(other, other.ana, other.scene, "Tirada de otro sitio")
    item = next(r for r in _export(other.gm, other.campaign)["rolls"] if r["post"] == post.pk)
    key = settings.ROLLOG_KEYS.public_key_hex
    settings.ROLLOG_KEYS = real
    return item, key


def _post(world: World, **fields) -> dict:
    return {
        "author": world.ana.username,
        "author_name": "Ana",
        "speaker": "Ana",
        "voice": "ooc",
        "npc_name": "",
        "character": None,
        "recipients": "all",
        "chosen_recipients": [],
        "revisions": [],
        "note": "",
        **fields,
    }


def _forged(world: World, settings) -> tuple[dict, str]:
    """Ana's own export, edited as issue 29 tells: Ana confesses to cheating,
    the GM cancels the campaign in a whisper to Bruno, and the confession
    carries a roll signed by a key this site does not know."""
    data = _export(world.ana, world.campaign)
    roll, key = _roll_of_another_key(settings)
    data["scenes"][0]["posts"] += [
        _post(world, id=900001, body="Confieso que hice trampas."),
        _post(
            world,
            id=900002,
            author=world.gm.username,
            author_name="Directora (DJ)",
            speaker="Directora (DJ)",
            body="Cancelo la partida.",
            recipients="chosen",
            chosen_recipients=[world.bruno.username],
        ),
    ]
    data["rolls"].append({**roll, "post": 900001})
    return data, key


def test_an_edited_export_puts_no_words_in_a_members_mouth_and_a_foreign_roll_is_not_verified(world, settings):
    data, key = _forged(world, settings)
    attacker = UserFactory(display_name="Recién llegada")
    imported = archive.campaign_import(data=archive.archive_read(json.dumps(data).encode()), gm=attacker)
    posts = Post.objects.filter(scene__campaign=imported.campaign)
    # Nobody's account signs anything of the archive: every author is an archived name.
    assert not posts.exclude(author=attacker).exists()
    confession = posts.get(body="Confieso que hice trampas.")
    assert (confession.voice, confession.npc_name) == (Post.Voice.NPC, f"Ana ({MARK})")
    whisper = posts.get(body="Cancelo la partida.")
    assert (whisper.npc_name, whisper.recipients) == (f"Directora (DJ) ({MARK})", Post.Recipients.CHOSEN)
    assert not whisper.chosen_recipients.exists()
    assert f"Bruno ({MARK})" in whisper.note
    # The roll of a key this site does not know is never called verifiable.
    shown = archived_rolls_html(confession)
    assert "verificable" not in shown
    assert f"firmada con una clave ajena (huella {key_fingerprint(key)})" in shown
    # A copy that proves nothing is private and read-only, for whoever imported it.
    campaign = imported.campaign
    assert (campaign.gm, campaign.visibility, campaign.status) == (
        attacker,
        Visibility.PRIVATE,
        CampaignStatus.FINISHED,
    )
    assert set(campaign.scenes.values_list("status", flat=True)) == {Scene.Status.ARCHIVED}
    assert any("modificado" in note for note in imported.notes)


def test_an_unchanged_export_of_this_site_maps_its_people_only_for_its_own_reader(world):
    data = _export(world.gm, world.campaign)
    assert data["signature"]["public_key"] == world_key()
    # The GM's own export: the GM's campaign again, people and recipients kept.
    again = archive.campaign_import(data=data, gm=world.gm, visibility=Visibility.PRIVATE)
    posts = Post.objects.filter(scene__campaign=again.campaign)
    assert posts.get(body="Salto la verja.").author == world.ana
    assert list(posts.get(body="Solo para Bruno.").chosen_recipients.all()) == [world.bruno]
    assert again.campaign.status != CampaignStatus.FINISHED
    assert "Tirada archivada, verificable" in archived_rolls_html(posts.get(body="Salto la verja."))
    # The same file in someone else's hands proves nothing about them.
    other = archive.campaign_import(data=data, gm=world.outsider)
    posts = Post.objects.filter(scene__campaign=other.campaign)
    assert not posts.exclude(author=world.outsider).exists()
    assert posts.get(body="Solo para Bruno.").recipients == Post.Recipients.CHOSEN


def world_key() -> str:
    from django.conf import settings

    return settings.ROLLOG_KEYS.public_key_hex


def test_a_players_own_export_becomes_a_private_read_only_copy_for_that_player(world):
    imported = archive.campaign_import(
        data=_export(world.bruno, world.campaign), gm=world.bruno, visibility=Visibility.PUBLIC
    )
    campaign = imported.campaign
    assert (campaign.gm, campaign.visibility, campaign.status) == (world.bruno, Visibility.PRIVATE, "finished")
    whisper = Post.objects.get(scene__campaign=campaign, body="Solo para Bruno.")
    # The GM's whisper is the GM's archived name in Bruno's copy, still to Bruno.
    assert (whisper.author, whisper.npc_name, list(whisper.chosen_recipients.all())) == (
        world.bruno,
        f"{world.gm.public_name} ({VERIFIED})",
        [world.bruno],
    )


def test_the_gm_may_not_make_a_private_campaigns_copy_public(world):
    with pytest.raises(archive.ArchiveError) as caught:
        archive.campaign_import(data=_export(world.gm, world.campaign), gm=world.gm, visibility=Visibility.PUBLIC)
    assert caught.value.problems == [
        "La partida archivada era privada: su copia no puede ser pública, o publicaría mensajes de sus miembros."
    ]


def test_a_foreign_sites_signature_is_named_by_its_fingerprint_and_proves_no_account(settings):
    real = settings.ROLLOG_KEYS
    settings.ROLLOG_KEYS = _fresh_keys()
    foreign = settings.ROLLOG_KEYS.public_key_hex
    other = make_world(Visibility.PUBLIC)
    for character in (other.ines, other.tomas):
        AspectFactory(character=character, kind=Aspect.Kind.CONCEPT, phrase="Un concepto")
    _post_with_roll(other, other.ana, other.scene, "Salto la verja.")
    data = _export(other.gm, other.campaign)  # the GM of that other site, signed with its key
    settings.ROLLOG_KEYS = real
    # Even the account with that GM's username here is not proven to be that GM.
    trust = archive.archive_trust(data, other.gm)
    assert (trust.provenance.kind, trust.provenance.fingerprint, trust.proven) == (
        "foreign",
        key_fingerprint(foreign),
        False,
    )
    assert archive.archive_foreign_keys(data) == [(foreign, key_fingerprint(foreign))]
    imported = archive.campaign_import(data=data, gm=other.gm, trusted_keys=[foreign])
    post = Post.objects.get(scene__campaign=imported.campaign, body="Salto la verja.")
    assert post.author == other.gm and post.npc_name == f"Inés Salcedo ({MARK})"
    # Only the proven GM may trust a key (review point 6): this importer is not.
    assert "verificable" not in archived_rolls_html(post)
    assert any(f"que dice ser «{settings.SITE_URL}»" in n and key_fingerprint(foreign) in n for n in imported.notes)
    untrusted = archive.campaign_import(data=data, gm=other.ana)
    post = Post.objects.get(scene__campaign=untrusted.campaign, body="Salto la verja.")
    shown = archived_rolls_html(post)
    assert f"Tirada archivada, firmada con una clave ajena (huella {key_fingerprint(foreign)})" in shown


# --- the two pages: upload, then see what the archive holds and choose -------------------


def _upload(content: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile("partida.json", content, content_type="application/json")


def test_the_importer_sees_what_the_archive_holds_before_choosing_its_visibility(world):
    client = client_for(world.gm)
    response = client.post(IMPORT_URL, {"file": _upload(json.dumps(_export(world.gm, world.campaign)).encode())})
    upload = ArchiveUpload.objects.get(owner=world.gm)
    review = reverse("campaigns:campaign-import-review", args=[upload.pk])
    assert response.status_code == 302 and response.url == review
    assert Campaign.objects.count() == 1
    page = client.get(review).content.decode()
    assert "Firmado por este sitio" in page
    assert "Mensajes a miembros elegidos: 1" in page and "Mensajes para todos: 2" in page
    assert 'name="visibility"' in page and 'value="public"' not in page
    assert client_for(world.ana).get(review).status_code == 404
    assert client.put(review).status_code == 405
    response = client.post(review, {"visibility": "private"})
    campaign = Campaign.objects.exclude(pk=world.campaign.pk).get()
    assert response.status_code == 302 and response.url == campaign.get_absolute_url()
    # The upload now only says which campaign it made.
    upload.refresh_from_db()
    assert (upload.campaign, bytes(upload.raw)) == (campaign, b"")


def test_the_review_of_an_edited_archive_says_so_and_offers_only_a_private_copy(world, settings):
    data, key = _forged(world, settings)
    client = client_for(world.outsider)
    client.post(IMPORT_URL, {"file": _upload(json.dumps(data).encode())})
    upload = ArchiveUpload.objects.get(owner=world.outsider)
    page = client.get(reverse("campaigns:campaign-import-review", args=[upload.pk])).content.decode()
    assert "La firma no corresponde: el archivo fue modificado después de exportarlo." in page
    assert MARK in page and 'name="visibility"' not in page
    assert key_fingerprint(key) in page


# --- hostile files ------------------------------------------------------------------------


def _mutate(world: World, change) -> bytes:
    data = _export(world.gm, world.campaign)
    change(data)
    return json.dumps(data).encode()


def _set(path: str, value):
    def change(data):
        target = data
        *steps, last = path.split(".")
        for step in steps:
            target = target[int(step) if step.isdigit() else step]
        target[int(last) if last.isdigit() else last] = value

    return change


HOSTILE = [
    ("deep", lambda world: b"[" * 100_000 + b"]" * 100_000, "anida"),
    (
        "nested",
        lambda world: _mutate(world, _set("campaign.rules_options", json.loads("[" * 500 + "]" * 500))),
        "anida",
    ),
    ("not utf-8", lambda world: b"\xff\xfe{}", "El archivo no es JSON"),
    ("nan", lambda world: b'{"format": NaN}', "El archivo no es JSON"),
    ("posts not a list", lambda world: _mutate(world, _set("scenes.0.posts", 5)), "Escena 1: no tiene el formato"),
    ("huge position", lambda world: _mutate(world, _set("scenes.0.position", 10**30)), "su orden no es válido"),
    ("note too long", lambda world: _mutate(world, _set("scenes.0.posts.0.note", "x" * 20000)), "nota de juego"),
    ("npc without name", lambda world: _mutate(world, _set("scenes.0.posts.1.voice", "npc")), "nombre del PNJ"),
    ("npc name too long", lambda world: _mutate(world, _set("scenes.0.posts.1.npc_name", "n" * 81)), "PNJ"),
    ("nul byte", lambda world: _mutate(world, _set("scenes.0.title", "a\x00b")), "caracteres nulos"),
    ("lone surrogate", lambda world: _mutate(world, _set("scenes.0.title", "\ud800")), "UTF-8"),
    (
        "old date",
        lambda world: _mutate(world, _set("scenes.0.posts.0.created_at", "0001-01-01T00:00:00+14:00")),
        "fecha",
    ),
    ("hidden reason", lambda world: _mutate(world, _set("scenes.0.posts.0.hidden_reason", "r" * 501)), "motivo"),
    ("rolls not a list", lambda world: _mutate(world, _set("rolls", {"a": 1})), "tiradas"),
    ("reader not a dict", lambda world: _mutate(world, _set("reader", 7)), "lector"),
    (
        "rules options",
        lambda world: _mutate(world, _set("campaign.rules_options", {"activation_deadline_hours": 10**9})),
        "opciones de reglas",
    ),
    ("unknown option", lambda world: _mutate(world, _set("campaign.rules_options", {"x": 1})), "opciones de reglas"),
]


@pytest.mark.parametrize(
    ("raw", "message"), [(raw, message) for _n, raw, message in HOSTILE], ids=[n for n, *_r in HOSTILE]
)
def test_a_hostile_file_gets_a_spanish_message_and_changes_nothing(world, raw, message):
    client = client_for(world.outsider)
    before = (Campaign.objects.count(), Post.objects.count(), ArchiveUpload.objects.count())
    response = client.post(IMPORT_URL, {"file": _upload(raw(world))})
    assert response.status_code == 200
    errors = " ".join(response.context["form"].errors["file"])
    assert message in errors
    assert (Campaign.objects.count(), Post.objects.count(), ArchiveUpload.objects.count()) == before


def test_an_unsigned_archive_proves_nothing(world):
    data = _export(world.gm, world.campaign)
    del data["signature"]
    trust = archive.archive_trust(data, world.gm)
    assert (trust.provenance.kind, trust.proven, trust.gm) == ("unsigned", False, False)
    imported = archive.campaign_import(data=data, gm=world.gm, visibility=Visibility.PUBLIC)
    assert imported.campaign.visibility == Visibility.PRIVATE
    assert "El archivo no lleva la firma de ningún sitio." in imported.notes


def test_the_review_refuses_a_visibility_it_does_not_offer_and_keeps_the_upload(world):
    client = client_for(world.gm)
    client.post(IMPORT_URL, {"file": _upload(json.dumps(_export(world.gm, world.campaign)).encode())})
    review = reverse("campaigns:campaign-import-review", args=[ArchiveUpload.objects.get().pk])
    response = client.post(review, {"visibility": "public"}, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert response.context["form"].errors == {"visibility": ["Elige una de las visibilidades de la lista."]}
    assert Campaign.objects.count() == 1 and ArchiveUpload.objects.count() == 1


def test_an_upload_this_site_did_not_read_at_upload_sends_back_to_the_upload_page(world):
    upload = ArchiveUpload.objects.create(owner=world.gm, raw=b'{"format": "otra-cosa"}')
    client = client_for(world.gm)
    response = client.get(reverse("campaigns:campaign-import-review", args=[upload.pk]))
    assert response.status_code == 302 and response.url == IMPORT_URL
    assert "Vuelve a subir el archivo para ver qué contiene." in client.get(IMPORT_URL).content.decode()
    assert not ArchiveUpload.objects.exists()


def test_the_command_recreates_the_gms_own_campaign_with_the_visibility_asked(world, tmp_path):
    from django.core.management import call_command

    world.campaign.visibility = Visibility.PUBLIC
    world.campaign.save(update_fields=["visibility"])
    path = tmp_path / "partida.json"
    path.write_text(json.dumps(_export(world.gm, world.campaign)), encoding="utf-8")
    call_command("campaign_import", str(path), gm=world.gm.username, visibility="public")
    campaign = Campaign.objects.exclude(pk=world.campaign.pk).get()
    assert (campaign.gm, campaign.visibility, campaign.status) == (world.gm, Visibility.PUBLIC, world.campaign.status)
