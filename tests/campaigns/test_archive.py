"""The campaign archive (``hitos-campaign-export/2``, ``campaigns.archive``):
what each reader's archive holds, that its rolls verify offline, and the
new campaign ``campaign_import`` makes from it."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.template.loader import render_to_string
from django.urls import reverse

from accounts.models import User
from campaigns import archive, services
from campaigns.models import Campaign, Membership, Post, PostRevision, Role, Scene, Visibility
from campaigns.permissions import campaign_access
from rolls import verify_roll
from rolls.models import RollEntry
from sheets.models import Character
from systems.hitos.models import Aspect, SceneAspect
from systems.hitos.secret import services as secret
from systems.hitos.system import check_plan
from table import services as table_services
from tests.conftest import World, client_for, make_world
from tests.factories import AspectFactory, CampaignFactory, UserFactory, client_seed

pytestmark = pytest.mark.django_db


@dataclass
class Archived:
    world: World
    split: Scene
    rolled: Post  # Ana's post to everyone, with a public roll
    whispered: Post  # Bruno's post to the GM alone, with a sealed roll
    secret: RollEntry  # the GM's secret roll
    split_post: Post  # the GM's post in the scene only Ana sees


def _post_with_roll(world: World, author: User, scene: Scene, body: str, **fields) -> Post:
    character = Character.objects.get(campaign=world.campaign, owner=author, kind=Character.Kind.PC)
    plan = check_plan(
        character, characteristic="reflejos", difficulty=15, purpose=f"Tirada de {body}", client_seed=client_seed()
    )
    return table_services.post_with_rolls_create(
        access=campaign_access(author, world.campaign),
        scene=scene,
        voice=Post.Voice.CHARACTER,
        body=body,
        character=character,
        rolls=[plan],
        **fields,
    )


@pytest.fixture
def archived(db) -> Archived:
    world = make_world(Visibility.PUBLIC)
    # Sheets made on the site have a concept (the sheet form asks for one).
    for character, concept in ((world.ines, "Ladrona de guante blanco"), (world.tomas, "Herrero del pueblo")):
        AspectFactory(character=character, kind=Aspect.Kind.CONCEPT, phrase=concept)
    rolled = _post_with_roll(world, world.ana, world.scene, "Salto la verja.")
    services.post_edit(
        access=campaign_access(world.ana, world.campaign),
        post=rolled,
        body="Salto la verja alta.",
        note="",
        reason="Typo",
    )
    whispered = _post_with_roll(world, world.bruno, world.scene, "Susurro secreto", recipients=Post.Recipients.GM)
    secret_roll = secret.secret_free_roll(
        scene=world.scene, user=world.gm, notation="1d6", purpose="Emboscada oculta", client_seed=client_seed()
    )
    split = services.scene_create(
        campaign=world.campaign, title="El pasadizo", everyone=False, participants=[world.ana]
    )
    split_post = services.post_create(
        access=campaign_access(world.gm, world.campaign),
        scene=split,
        voice=Post.Voice.NPC,
        npc_name="El fantasma",
        body="Solo Ana oye la voz.",
    )
    return Archived(world, split, rolled, whispered, secret_roll, split_post)


def archived_rolls_html(post: Post) -> str:
    """What the post's page shows of its archived rolls."""
    return render_to_string("campaigns/_archived_rolls.html", {"post": post})


def _export(user: User, campaign: Campaign) -> dict:
    response = client_for(user).get(reverse("campaigns:campaign-export", args=[campaign.slug]))
    assert response.status_code == 200
    return json.loads(response.content)


def _openings(document: dict) -> str:
    return "\n".join(
        base64.b64decode(r["bundle"]["opening_b64"]).decode()
        for r in document["rolls"]
        if r["bundle"].get("opening_b64")
    )


def _everything(document: dict) -> str:
    return json.dumps(document, ensure_ascii=False) + _openings(document)


# --- what the archive holds ---------------------------------------------------------------


def test_the_gm_archive_holds_settings_members_privacy_revisions_sheets_and_rolls(archived):
    world = archived.world
    world.campaign.rules_options = {"players_mark_own_meters": True}
    world.campaign.save(update_fields=["rules_options"])
    data = _export(world.gm, world.campaign)
    assert data["format"] == "hitos-campaign-export/2"
    assert data["reader"] == {"username": world.gm.username, "id": world.gm.pk, "standing": "gm"}
    assert {k: data["campaign"][k] for k in ("title", "system", "visibility", "rules_options")} == {
        "title": "La mansión",
        "system": "hitos",
        "visibility": "public",
        "rules_options": {"players_mark_own_meters": True},
    }
    assert data["members"] == [
        {"username": world.gm.username, "public_name": "La Directora", "role": "gm"},
        {"username": world.ana.username, "public_name": "Ana", "role": "player"},
        {"username": world.bruno.username, "public_name": "Bruno", "role": "player"},
        {"username": world.reader.username, "public_name": "La Lectora", "role": "reader"},
    ]
    assert "@" not in json.dumps(data["members"]) and "feed_token" not in json.dumps(data)
    scenes = {s["title"]: s for s in data["scenes"]}
    assert (scenes["El pasadizo"]["everyone"], scenes["El pasadizo"]["participants"]) == (False, [world.ana.username])
    assert scenes["El vestíbulo"]["aspects"] == ["Oscuridad casi total"]
    posts = {p["id"]: p for p in scenes["El vestíbulo"]["posts"]}
    assert posts[archived.whispered.pk]["recipients"] == "gm"
    rolled = posts[archived.rolled.pk]
    assert (rolled["body"], rolled["speaker"], rolled["character"]) == (
        "Salto la verja alta.",
        "Inés Salcedo",
        world.ines.pk,
    )
    assert [(r["body"], r["reason"], r["editor"]) for r in rolled["revisions"]] == [
        ("Salto la verja.", "Typo", world.ana.username)
    ]
    npc = scenes["El pasadizo"]["posts"][0]
    assert (npc["voice"], npc["npc_name"], npc["speaker"]) == ("npc", "El fantasma", "El fantasma")
    assert sorted(s["sheet"]["name"] for s in data["sheets"]) == ["El mayordomo", "Inés Salcedo", "Tomás Ferrer"]
    assert all("gm_notes" in s["sheet"] for s in data["sheets"])
    assert {r["permalink"] for r in data["rolls"]} == set(
        RollEntry.objects.rolls().filter(campaign=world.campaign).values_list("permalink", flat=True)
    )
    assert {r["post"] for r in data["rolls"]} == {archived.rolled.pk, archived.whispered.pk, None}
    assert "Emboscada oculta" in _openings(data)


def test_a_players_archive_lacks_whispers_to_others_secret_rolls_other_sheets_and_hidden_scenes(archived):
    world = archived.world
    data = _export(world.bruno, world.campaign)
    text = _everything(data)
    assert data["reader"]["standing"] == "player"
    assert [s["title"] for s in data["scenes"]] == ["El vestíbulo"]
    assert "Solo Ana oye la voz." not in text and "El pasadizo" not in text
    assert "Emboscada oculta" not in text and archived.secret.permalink not in text
    assert [s["sheet"]["name"] for s in data["sheets"]] == ["Tomás Ferrer"]
    assert "gm_notes" not in data["sheets"][0]["sheet"]
    # His own whisper and its roll are his to keep; Ana's post history is not.
    posts = {p["id"]: p for p in data["scenes"][0]["posts"]}
    assert posts[archived.whispered.pk]["body"] == "Susurro secreto"
    assert posts[archived.rolled.pk]["revisions"] == []
    assert "Tirada de Susurro secreto" in text

    ana = _everything(_export(world.ana, world.campaign))
    assert "Susurro secreto" not in ana and "Emboscada oculta" not in ana
    assert "Solo Ana oye la voz." in ana and "Salto la verja." in ana  # her scene and her own history

    reader = _export(world.reader, world.campaign)
    assert "sheets" in reader and reader["sheets"] == []
    assert "Susurro secreto" not in _everything(reader)


def test_another_games_archive_has_no_hitos_sheets(db):
    campaign = CampaignFactory(system="sin-aspectos")
    data = services.campaign_export(access=campaign_access(campaign.gm, campaign))
    assert (data["format"], "sheets" in data, data["rolls"]) == (archive.FORMAT, False, [])


def test_every_roll_in_an_archive_verifies_offline_and_is_the_permalinks_download(archived):
    world = archived.world
    for user in (world.gm, world.bruno, world.reader):
        data = _export(user, world.campaign)
        assert data["rolls"]
        for item in data["rolls"]:
            bundle = item["bundle"]
            proof = verify_roll.verify_bundle(bundle, verify_roll.parse_public_key(bundle["public_key"]))
            assert proof.content is not None, item["permalink"]  # the content is disclosed, not just the slot
            download = client_for(user).get(reverse("rolls:roll-json", args=[item["permalink"]]))
            assert json.loads(download.content) == bundle


# Session and user, campaign and membership, scenes, posts with their recipients
# and revisions, the scene aspects, the sheets with their rows, the rolls with
# their log head, epochs, parents and children: the same whatever their number.
EXPORT_QUERIES = 20


def test_the_export_queries_do_not_grow_with_the_campaign(archived, django_assert_max_num_queries):
    world = archived.world
    url = reverse("campaigns:campaign-export", args=[world.campaign.slug])
    clients = {user: client_for(user) for user in (world.gm, world.ana)}
    for client in clients.values():
        with django_assert_max_num_queries(EXPORT_QUERIES):
            client.get(url)
    for n in range(4):
        scene = services.scene_create(campaign=world.campaign, title=f"Escena {n}")
        _post_with_roll(world, world.ana, scene, f"Mensaje {n}")
        services.post_create(
            access=campaign_access(world.gm, world.campaign), scene=scene, voice=Post.Voice.OOC, body=f"Fuera {n}"
        )
    for user, rolls in ((world.gm, 7), (world.ana, 5)):
        with django_assert_max_num_queries(EXPORT_QUERIES):
            data = json.loads(clients[user].get(url).content)
        assert len(data["rolls"]) == rolls


def test_the_export_view_is_for_members_only_and_get_only(archived):
    world = archived.world
    url = reverse("campaigns:campaign-export", args=[world.campaign.slug])
    assert client_for(world.outsider).get(url).status_code == 403
    assert client_for(world.ana).post(url).status_code == 405
    response = client_for(world.ana).get(url, headers={"HX-Request": "true"})
    assert response["Content-Disposition"] == f'attachment; filename="{world.campaign.slug}.json"'
    assert json.loads(response.content)["format"] == archive.FORMAT
    private = make_world(Visibility.PRIVATE)
    assert (
        client_for(private.outsider).get(reverse("campaigns:campaign-export", args=[private.campaign.slug])).status_code
        == 404
    )


# --- import -------------------------------------------------------------------------------


def test_an_archive_imported_makes_a_new_campaign_with_the_same_scenes_posts_and_sheets(archived):
    world = archived.world
    data = _export(world.gm, world.campaign)
    # The GM's own export, signed by this site: the GM re-creates the campaign, its people kept.
    imported = archive.campaign_import(
        data=archive.archive_read(json.dumps(data).encode()), gm=world.gm, visibility=Visibility.PUBLIC
    )
    campaign = imported.campaign
    assert campaign.pk != world.campaign.pk and campaign.gm == world.gm
    assert (campaign.title, campaign.system, campaign.visibility) == ("La mansión", "hitos", "public")
    # The world's campaign was made without an off-game scene; the new one has its own.
    assert [s.title for s in campaign.scenes.order_by("pk")] == ["Fuera de juego"] + [
        s["title"] for s in data["scenes"]
    ]
    split = campaign.scenes.get(title="El pasadizo")
    assert (split.everyone, list(split.participants.all())) == (False, [world.ana])
    assert list(SceneAspect.objects.filter(scene__campaign=campaign).values_list("phrase", flat=True)) == [
        "Oscuridad casi total"
    ]
    old = [p["body"] for s in data["scenes"] for p in s["posts"]]
    new = Post.objects.filter(scene__campaign=campaign).order_by("pk")
    assert [p.body for p in new] == old
    ines = Character.objects.get(campaign=campaign, name="Inés Salcedo")
    assert (ines.owner, ines.status) == (world.ana, Character.Status.APPROVED)
    assert ines.skills.count() == world.ines.skills.count()
    rolled = new.get(body="Salto la verja alta.")
    assert (rolled.author, rolled.voice, rolled.character) == (world.ana, Post.Voice.CHARACTER, ines)
    assert rolled.created_at == archived.rolled.created_at
    assert list(PostRevision.objects.filter(post=rolled).values_list("body", "reason")) == [("Salto la verja.", "Typo")]
    assert new.get(body="Susurro secreto").recipients == Post.Recipients.GM
    # Rolls are archived records of their posts, never new rolls.
    assert not RollEntry.objects.rolls().filter(campaign=campaign).exists()
    assert [(r["standing"], r["permalink"]) for r in rolled.archived_rolls] == [
        ("site", archived.rolled.roll_entries.get().permalink)
    ]
    assert "Tirada archivada, verificable" in archived_rolls_html(rolled)
    # Nobody became a member; the GM is told whom to invite.
    assert not Membership.objects.filter(campaign=campaign).exists()
    assert any(world.ana.username in note for note in imported.notes)


def test_the_imported_campaign_shows_its_posts_on_its_pages(archived):
    world = archived.world
    imported = archive.campaign_import(data=_export(world.gm, world.campaign), gm=world.gm)
    scene = imported.campaign.scenes.get(title="El vestíbulo")
    page = client_for(world.gm).get(scene.get_absolute_url())
    assert page.status_code == 200
    assert "Salto la verja alta." in page.content.decode()
    assert "Tirada archivada, verificable" in page.content.decode()


def test_authors_without_an_account_here_are_kept_under_their_name_as_former_members(archived):
    world = archived.world
    data = _export(world.gm, world.campaign)
    # Bruno's account no longer has the username the (signed, unchanged) archive names.
    old_username = world.bruno.username
    User.objects.filter(pk=world.bruno.pk).update(username="bruno-renombrado")
    imported = archive.campaign_import(data=data, gm=world.gm)
    post = Post.objects.get(scene__campaign=imported.campaign, body="Susurro secreto")
    assert (post.author, post.voice, post.npc_name) == (world.gm, Post.Voice.NPC, "Bruno (antiguo miembro)")
    assert any(old_username in note and "antiguo miembro" in note for note in imported.notes)


def test_a_players_archive_imports_only_what_the_player_could_read(archived):
    world = archived.world
    imported = archive.campaign_import(data=_export(world.bruno, world.campaign), gm=world.bruno)
    bodies = set(Post.objects.filter(scene__campaign=imported.campaign).values_list("body", flat=True))
    assert "Susurro secreto" in bodies and "Solo Ana oye la voz." not in bodies
    # Inés's sheet was not Bruno's to read: her post is kept as an NPC's under her name.
    # Ana's post is not linked to Ana's account in Bruno's copy (issue 29, review point 1).
    post = Post.objects.get(scene__campaign=imported.campaign, body="Salto la verja alta.")
    assert (post.voice, post.npc_name, post.author) == (
        Post.Voice.NPC,
        "Inés Salcedo (nombre archivado, verificado por este sitio)",
        world.bruno,
    )


# --- bad archives -------------------------------------------------------------------------


def _problems(raw: bytes) -> list[str]:
    with pytest.raises(archive.ArchiveError) as caught:
        archive.archive_read(raw)
    return caught.value.problems


def test_bad_archives_are_refused_with_spanish_reasons(archived, settings):
    world = archived.world
    good = _export(world.gm, world.campaign)
    assert _problems(b"\xff\xfe") == ["El archivo no es JSON: no es una partida exportada desde este sitio."]
    assert _problems(b"[1, 2]") == ["El archivo no es una partida exportada desde este sitio."]
    assert _problems(json.dumps({**good, "format": "hitos-campaign-export/1"}).encode()) == [
        "El archivo es del formato «hitos-campaign-export/1»; solo se importa «hitos-campaign-export/2». "
        "Expórtala de nuevo."
    ]
    assert _problems(json.dumps({**good, "campaign": {**good["campaign"], "system": "dnd", "title": ""}}).encode()) == [
        "El título de la partida falta o pasa de 120 caracteres.",
        "La partida es del sistema «dnd», que este sitio no tiene.",
    ]
    broken = json.loads(json.dumps(good))
    broken["scenes"][1]["posts"][0]["voice"] = "narrador"
    del broken["scenes"][1]["posts"][0]["body"]
    first = broken["scenes"][1]["posts"][0]["id"]
    assert _problems(json.dumps(broken).encode()) == [
        f"Escena 2, mensaje {first}: el texto falta o pasa de 50 000 caracteres.",
        f"Escena 2, mensaje {first}: «escrito como» no es válido.",
    ]
    shapeless = json.loads(json.dumps(good))
    shapeless["scenes"][0]["participants"] = [["no", "es", "un", "nombre"]]
    shapeless["scenes"][0]["posts"][0]["chosen_recipients"] = [{"username": 1}]
    shapeless["scenes"][0]["posts"][1]["quote_of"] = [1]
    posts = shapeless["scenes"][0]["posts"]
    assert _problems(json.dumps(shapeless).encode()) == [
        "Escena 1: sus participantes no tienen el formato esperado.",
        f"Escena 1, mensaje {posts[0]['id']}: su historial o sus destinatarios no tienen el formato esperado.",
        f"Escena 1, mensaje {posts[1]['id']}: su personaje o su cita no tienen el formato esperado.",
    ]
    renamed = json.loads(json.dumps(good))
    renamed["rolls"][0]["permalink"] = "a" * 24
    assert _problems(json.dumps(renamed).encode()) == [
        f"La tirada {'a' * 24} no se verifica: el archivo está dañado o alterado."
    ]
    twice = json.loads(json.dumps(good))
    twice["scenes"][0]["posts"][1]["id"] = twice["scenes"][0]["posts"][0]["id"]
    assert _problems(json.dumps(twice).encode()) == ["Dos mensajes del archivo tienen el mismo número."]


def test_a_tampered_roll_or_sheet_is_refused_and_nothing_is_written(archived):
    world = archived.world
    data = _export(world.gm, world.campaign)
    data["rolls"][0]["bundle"]["entry"]["dice"] = [10, 10, 10]
    data["rolls"][0]["bundle"]["entry_b64"] = data["rolls"][1]["bundle"]["entry_b64"]
    data["sheets"][0]["sheet"]["characteristics"]["reflejos"] = 99
    before = Campaign.objects.count()
    with pytest.raises(archive.ArchiveError) as caught:
        archive.campaign_import(data=data, gm=world.gm)
    # Every problem is said, whichever part is checked first.
    assert any(p.startswith("Ficha «") for p in caught.value.problems)
    assert any(
        p == f"La tirada {data['rolls'][0]['permalink']} no se verifica: el archivo está dañado o alterado."
        for p in caught.value.problems
    )
    assert Campaign.objects.count() == before


def test_a_too_large_archive_is_refused_before_reading_it(monkeypatch):
    monkeypatch.setattr(archive, "MAX_BYTES", 10)
    assert _problems(b"{" + b" " * 20 + b"}") == ["El archivo ocupa más de 0 MB: es demasiado grande para importarlo."]


# --- the management command ---------------------------------------------------------------


def test_the_command_imports_a_file_for_the_given_gm(archived, tmp_path):
    world = archived.world
    path = tmp_path / "partida.json"
    path.write_text(json.dumps(_export(world.ana, world.campaign)), encoding="utf-8")
    out = StringIO()
    call_command("campaign_import", str(path), gm=world.ana.username, stdout=out)
    campaign = Campaign.objects.get(gm=world.ana)
    assert out.getvalue().startswith(
        f"Partida importada: «La mansión» ({campaign.get_absolute_url()}): escenas: 2, mensajes: 3, fichas: 1."
    )
    assert "Tiradas archivadas en sus mensajes: 1 " in out.getvalue()
    assert Membership.objects.filter(campaign=campaign).count() == 0


def test_the_command_refuses_a_bad_file_or_an_unknown_gm(archived, tmp_path):
    path = tmp_path / "partida.json"
    path.write_text('{"format": "otra-cosa"}', encoding="utf-8")
    with pytest.raises(CommandError, match="No hay ningún usuario «nadie»"):
        call_command("campaign_import", str(path), gm="nadie")
    with pytest.raises(CommandError, match="El archivo no es una partida exportada desde este sitio."):
        call_command("campaign_import", str(path), gm=archived.world.gm.username)
    with pytest.raises(CommandError, match="No se puede leer"):
        call_command("campaign_import", str(tmp_path / "no-existe.json"), gm=archived.world.gm.username)
    assert Campaign.objects.count() == 1


def test_a_removed_member_cannot_export(archived):
    world = archived.world
    Membership.objects.filter(user=world.bruno).update(status=Membership.Status.REMOVED, role=Role.PLAYER)
    assert (
        client_for(world.bruno).get(reverse("campaigns:campaign-export", args=[world.campaign.slug])).status_code == 403
    )


# --- the upload page ----------------------------------------------------------------------

IMPORT_URL = "/partidas/importar/"


def _upload(name: str, content: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, content, content_type="application/json")


def test_the_upload_page_makes_a_new_campaign_for_whoever_uploads(archived):
    world = archived.world
    data = json.dumps(_export(world.bruno, world.campaign)).encode()
    client = client_for(world.reader)
    page = client.get(IMPORT_URL)
    assert page.status_code == 200
    assert 'enctype="multipart/form-data"' in page.content.decode()
    assert "«nombre archivado, sin verificar»" in page.content.decode()
    review = client.post(IMPORT_URL, {"file": _upload("partida.json", data)})
    assert review.status_code == 302 and not Campaign.objects.filter(gm=world.reader).exists()
    response = client.post(review.url)
    campaign = Campaign.objects.get(gm=world.reader)
    assert response.status_code == 302 and response.url == campaign.get_absolute_url()
    followed = client.get(response.url)
    assert "Partida importada." in followed.content.decode()
    assert set(Post.objects.filter(scene__campaign=campaign).values_list("body", flat=True)) == {
        "Abro la puerta del sótano.",
        "Salto la verja alta.",
        "Susurro secreto",
    }


def test_the_upload_page_refuses_a_bad_file_with_its_reasons_and_writes_nothing(archived):
    client = client_for(archived.world.ana)
    before = Campaign.objects.count()
    old = json.dumps({"format": "hitos-campaign-export/1", "scenes": []}).encode()
    response = client.post(IMPORT_URL, {"file": _upload("vieja.json", old)}, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert "solo se importa «hitos-campaign-export/2»" in response.content.decode()
    assert client.post(IMPORT_URL, {}).context["form"].errors == {"file": ["Este campo es obligatorio."]}
    assert Campaign.objects.count() == before


def test_the_upload_page_needs_an_account_and_get_or_post(archived):
    anonymous = client_for(None).get(IMPORT_URL)
    assert anonymous.status_code == 302 and anonymous.url.startswith(reverse("accounts:login"))
    assert client_for(archived.world.ana).put(IMPORT_URL).status_code == 405


def test_a_campaign_titled_like_a_page_under_partidas_gets_another_address():
    gm = UserFactory()
    for title in ("Importar", "Nueva"):
        campaign = services.campaign_create(gm=gm, title=title, system="hitos", visibility="public")
        assert campaign.slug not in services.RESERVED_SLUGS
        assert reverse("campaigns:campaign-detail", args=[campaign.slug]) not in (
            reverse("campaigns:campaign-import"),
            reverse("campaigns:campaign-create"),
        )
