"""What the security review of the campaign import found (issue 29, item 1,
second round): a copy of someone else's campaign links nobody else and takes
no write; an archived roll's standing is the site's own data, never the
archive's text; non-finite numbers, reused usernames, repeated imports, keys
trusted by anyone but the GM, rolls pinned to forged posts, another site's
origin, other games' options, takeover posts and hostile names."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from campaigns import archive, extensions
from campaigns import permissions as perms
from campaigns.models import ArchiveUpload, Campaign, Post, Scene, Visibility
from campaigns.permissions import campaign_access
from rolls.views import key_fingerprint
from tests.campaigns import test_archive_trust
from tests.campaigns.test_archive import _export, archived_rolls_html
from tests.campaigns.test_archive_trust import (
    IMPORT_URL,
    MARK,
    VERIFIED,
    _forged,
    _mutate,
    _post,
    _roll_of_another_key,
    _set,
    _upload,
)
from tests.conftest import World, client_for
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
world = test_archive_trust.world


def _resigned(data: dict) -> dict:
    """``data`` signed again by this site, as if this site had exported it."""
    data["signature"] = extensions.archive_seal().sign(archive.signed_bytes(data))
    return data


# --- 1. a member's copy links nobody else and takes no write ---------------------------


def test_a_players_copy_links_nobody_else_and_takes_no_write(world: World):
    copy = archive.campaign_import(data=_export(world.bruno, world.campaign), gm=world.bruno).campaign
    posts = Post.objects.filter(scene__campaign=copy)
    # Every post is the importer's (others' as their archived, verified names).
    assert set(posts.values_list("author", flat=True)) == {world.bruno.pk}
    ana = posts.get(body="Salto la verja.")
    assert (ana.voice, ana.npc_name) == (Post.Voice.NPC, f"Inés Salcedo ({VERIFIED})")
    assert copy.read_only
    copy.refresh_from_db()
    assert copy.read_only
    access = campaign_access(world.bruno, copy)
    assert not any(
        [
            perms.can_edit_post(access, ana),
            perms.can_hide_post(access),
            perms.can_manage(access),
            perms.can_hand_over(access),
            perms.can_write_as_npc(access),
            perms.can_play(access),
            perms.can_post_in_scene(access, Scene(campaign=copy, status=Scene.Status.OPEN)),
        ]
    )
    assert not perms.can_apply(campaign_access(world.outsider, copy))
    client = client_for(world.bruno)
    # Not edited, not made public nor reopened, no invitations, no scenes, no posts, nothing hidden.
    edit = reverse("campaigns:campaign-edit", args=[copy.slug])
    assert client.get(edit).status_code == 403
    assert client.post(edit, {"title": "x", "visibility": "public", "status": "active"}).status_code == 403
    assert client.post(reverse("campaigns:invitation-create", args=[copy.slug]), {}).status_code == 403
    assert client.post(reverse("campaigns:scene-create", args=[copy.slug]), {"title": "Nueva"}).status_code == 403
    assert client.post(reverse("campaigns:post-edit", args=[ana.pk]), {"body": "Otra cosa"}).status_code == 403
    assert client.post(reverse("campaigns:post-hide", args=[ana.pk]), {"reason": "no"}).status_code == 403
    scene = copy.scenes.exclude(is_offgame=True).first()
    Scene.objects.filter(pk=scene.pk).update(status=Scene.Status.OPEN)  # even a scene opened behind its back
    write = reverse("table:post-create", args=[copy.slug, scene.pk])
    assert client.post(write, {"voice": "ooc", "body": "Hola"}).status_code == 403
    copy.refresh_from_db()
    assert (copy.visibility, copy.title) == (Visibility.PRIVATE, world.campaign.title)
    assert not Post.objects.filter(scene__campaign=copy, body__in=["Otra cosa", "Hola"]).exists()


def test_a_copys_own_export_is_a_read_only_copy_again(world: World):
    copy = archive.campaign_import(data=_export(world.bruno, world.campaign), gm=world.bruno).campaign
    again = archive.campaign_import(data=_export(world.bruno, copy), gm=world.bruno)
    assert not again.trust.gm and again.campaign.read_only


def test_the_gms_own_recreation_is_not_read_only(world: World):
    again = archive.campaign_import(data=_export(world.gm, world.campaign), gm=world.gm).campaign
    assert not again.read_only
    assert perms.can_manage(campaign_access(world.gm, again))


# --- 2. an archived roll's standing is the site's data, never the archive's text -------


def test_a_forged_standing_line_in_a_note_is_not_shown_as_a_label(world: World):
    data = _export(world.ana, world.campaign)
    forged = "- Tirada archivada, verificable: Esquivar (6, 6, 6) · `rFALSO`"
    data["scenes"][0]["posts"].append(_post(world, id=900003, body="Esquivo.", note=forged))
    copy = archive.campaign_import(data=data, gm=world.outsider).campaign
    post = Post.objects.get(scene__campaign=copy, body="Esquivo.")
    assert post.archived_rolls == [] and post.note == forged
    page = client_for(world.outsider).get(post.scene.get_absolute_url()).content.decode()
    article = page.split(f'id="mensaje-{post.pk}"')[1].split("</article>")[0]
    # The forged line is the note's user text; no label of the site says it.
    assert "Tirada archivada, verificable" in article and "archived-roll" not in article
    # A genuine roll of a proven archive is the site's label, kept apart from the note.
    again = archive.campaign_import(data=_export(world.gm, world.campaign), gm=world.gm).campaign
    rolled = Post.objects.get(scene__campaign=again, body="Salto la verja.")
    assert "Tirada archivada" not in rolled.note
    assert [r["standing"] for r in rolled.archived_rolls] == ["site"]
    page = client_for(world.gm).get(rolled.scene.get_absolute_url()).content.decode()
    assert 'class="archived-roll archived-roll-site"' in page


# --- 3. non-finite numbers --------------------------------------------------------------


def _with_number(world: World, number: bytes) -> bytes:
    return _mutate(world, _set("campaign.extra", "NUMBER")).replace(b'"NUMBER"', number)


@pytest.mark.parametrize("number", [b"1e400", b"-1e400", b"NaN", b"Infinity"])
def test_a_non_finite_number_gets_a_spanish_message_on_the_page_and_in_the_command(world, tmp_path, number):
    raw = _with_number(world, number)
    response = client_for(world.outsider).post(IMPORT_URL, {"file": _upload(raw)})
    assert response.status_code == 200
    assert "número infinito" in " ".join(response.context["form"].errors["file"])
    assert not ArchiveUpload.objects.exists()
    path = tmp_path / "partida.json"
    path.write_bytes(raw)
    with pytest.raises(CommandError, match="número infinito"):
        call_command("campaign_import", str(path), gm=world.outsider.username)
    assert Campaign.objects.count() == 1


# --- 4. an account is its username and its id -------------------------------------------


def test_a_reused_username_is_not_the_archived_person(world: World):
    data = _export(world.gm, world.campaign)
    old = world.ana.username
    type(world.ana).objects.filter(pk=world.ana.pk).update(username="ana-renombrada")
    newcomer = UserFactory(username=old)
    again = archive.campaign_import(data=data, gm=world.gm)
    posts = Post.objects.filter(scene__campaign=again.campaign)
    assert not posts.filter(author=newcomer).exists()
    assert posts.get(body="Salto la verja.").author == world.gm
    # The reader too: someone given the GM's username is not the GM the archive was made for.
    type(world.gm).objects.filter(pk=world.gm.pk).update(username="directora-renombrada")
    impostor = UserFactory(username=data["reader"]["username"])
    assert not archive.archive_trust(data, impostor).proven


# --- 5. uploads: smaller, read once, expired, imported once -----------------------------


def test_the_review_page_does_not_read_the_file_again(world: World, monkeypatch):
    client = client_for(world.gm)
    client.post(IMPORT_URL, {"file": _upload(json.dumps(_export(world.gm, world.campaign)).encode())})
    review = reverse("campaigns:campaign-import-review", args=[ArchiveUpload.objects.get().pk])

    def refused(raw):
        raise AssertionError("read again")

    monkeypatch.setattr(archive, "archive_read", refused)
    page = client.get(review)
    assert page.status_code == 200 and "Firmado por este sitio" in page.content.decode()
    assert archive.MAX_BYTES == 10 * 1024 * 1024


def test_an_upload_expires_after_a_day_and_any_next_upload_deletes_it(world: World):
    raw = json.dumps(_export(world.gm, world.campaign)).encode()
    client_for(world.gm).post(IMPORT_URL, {"file": _upload(raw)})
    old = ArchiveUpload.objects.get()
    ArchiveUpload.objects.filter(pk=old.pk).update(created_at=old.created_at - timedelta(hours=25))
    review = reverse("campaigns:campaign-import-review", args=[old.pk])
    assert client_for(world.gm).get(review).status_code == 404
    client_for(world.ana).post(IMPORT_URL, {"file": _upload(json.dumps(_export(world.ana, world.campaign)).encode())})
    assert list(ArchiveUpload.objects.values_list("owner", flat=True)) == [world.ana.pk]


def test_the_same_review_imported_twice_makes_one_campaign(world: World):
    client = client_for(world.gm)
    client.post(IMPORT_URL, {"file": _upload(json.dumps(_export(world.gm, world.campaign)).encode())})
    review = reverse("campaigns:campaign-import-review", args=[ArchiveUpload.objects.get().pk])
    first = client.post(review, {"visibility": "private"})
    second = client.post(review, {"visibility": "private"})
    made = Campaign.objects.exclude(pk=world.campaign.pk).get()
    assert first.url == second.url == made.get_absolute_url()
    assert "Esta partida ya se importó" in client.get(made.get_absolute_url()).content.decode()


# --- 6. only the proven GM trusts a key ---------------------------------------------------


def test_only_the_proven_gm_may_trust_a_roll_key(world: World, settings):
    roll, key = _roll_of_another_key(settings)
    for reader in (world.gm, world.bruno):
        data = _export(reader, world.campaign)
        target = data["scenes"][0]["posts"][0]["id"]
        data["rolls"].append({**roll, "post": target})
        _resigned(data)
        copy = archive.campaign_import(data=data, gm=reader, trusted_keys=[key])
        post = Post.objects.get(pk=copy.posts[target].pk)
        shown = archived_rolls_html(post)
        if reader == world.gm:
            assert f"verificable con una clave en la que confía la dirección (huella {key_fingerprint(key)})" in shown
        else:
            assert "verificable" not in shown and "clave ajena" in shown
    # The review offers the choice only to the GM.
    client = client_for(world.bruno)
    data = _export(world.bruno, world.campaign)
    data["rolls"].append({**roll, "post": data["scenes"][0]["posts"][0]["id"]})
    client.post(IMPORT_URL, {"file": _upload(json.dumps(_resigned(data)).encode())})
    page = client.get(reverse("campaigns:campaign-import-review", args=[ArchiveUpload.objects.get().pk]))
    assert 'name="trusted_keys"' not in page.content.decode()


# --- 7. this site's roll pinned to a post nothing proves ----------------------------------


def test_a_sites_roll_pinned_to_a_forged_post_is_not_called_verifiable(world: World):
    data = _export(world.ana, world.campaign)
    data["scenes"][0]["posts"].append(_post(world, id=900004, body="Lo confieso todo."))
    salto = Post.objects.get(scene__campaign=world.campaign, body="Salto la verja.")
    genuine = next(r for r in data["rolls"] if r["post"] == salto.pk)
    genuine["post"] = 900004
    copy = archive.campaign_import(data=data, gm=world.outsider)
    post = Post.objects.get(pk=copy.posts[900004].pk)
    assert [r["standing"] for r in post.archived_rolls] == ["site_unbound"]
    shown = archived_rolls_html(post)
    assert "Tirada archivada, verificable" not in shown
    assert "su relación con este mensaje no está verificada" in shown
    # Who rolled it, by the signed entry's own account.
    assert f"tirada por {world.ana.public_name}" in shown


# --- 8. this site's key with another site's origin ----------------------------------------


def test_this_sites_key_on_another_origin_is_that_sites_claim(world: World):
    data = _export(world.gm, world.campaign)
    data["origin"] = "https://otro.example"
    trust = archive.archive_trust(_resigned(data), world.gm)
    assert (trust.provenance.kind, trust.proven, trust.gm) == ("foreign", False, False)
    assert "que dice ser «https://otro.example»" in archive.trust_lines(trust)[0]


# --- 9. every game's options are checked --------------------------------------------------


def _as_game(world: World, system: str, options: dict) -> list[str]:
    data = _export(world.gm, world.campaign)
    del data["sheets"]
    data["campaign"].update(system=system, rules_options=options)
    return archive.archive_problems(data)


OPTIONS_MESSAGE = "Las opciones de reglas de la partida no son las que permite su página de opciones."


@pytest.mark.parametrize(
    ("system", "options", "refused"),
    [
        ("vaesen", {"injuries_physical": 5}, True),
        ("vaesen", {"initiative_mode": ["cartas"]}, True),
        ("vaesen", {"npc_penalty": "nunca"}, True),
        ("vaesen", {"injuries_mental": [[11, 99, "Nada", "", ""]]}, True),
        ("vaesen", {"injuries_mental": [[11, 16, "A", "", ""], [15, 20, "B", "", ""]]}, True),
        ("vaesen", {"players_mark_own_conditions": "sí"}, True),
        ("vaesen", {"otra": 1}, True),
        (
            "vaesen",
            {
                "players_mark_own_conditions": True,
                "initiative_mode": "cartas",
                "npc_penalty": "siguiente_prueba",
                "injuries_physical": [[11, 16, "Costilla rota", "−1 a Agilidad", "un día"]],
                "injuries_mental": [],
            },
            False,
        ),
        ("aventuras", {"injuries_physical": 5}, True),
        ("aventuras", {}, False),
    ],
)
def test_each_games_rules_options_are_held_to_its_options_page(world, system, options, refused):
    assert (OPTIONS_MESSAGE in _as_game(world, system, options)) is refused


# --- 10. takeover posts ---------------------------------------------------------------------


def test_a_takeover_post_keeps_whom_it_was_written_for_only_when_proven(world: World):
    Post.objects.filter(pk=world.post.pk).update(author=world.gm, on_behalf_of=world.ana)
    data = _export(world.gm, world.campaign)
    assert next(p for p in data["scenes"][0]["posts"] if p["id"] == world.post.pk)["on_behalf_of"] == world.ana.username
    again = archive.campaign_import(data=data, gm=world.gm)
    post = Post.objects.get(pk=again.posts[world.post.pk].pk)
    assert (post.author, post.on_behalf_of, post.voice) == (world.gm, world.ana, Post.Voice.CHARACTER)
    del data["signature"]
    copy = archive.campaign_import(data=data, gm=world.outsider)
    post = Post.objects.get(pk=copy.posts[world.post.pk].pk)
    assert post.on_behalf_of is None
    assert post.npc_name == archive.archived_name(f"Inés Salcedo, en nombre de {world.ana.public_name}")


# --- 11. names and messages -----------------------------------------------------------------


def test_an_archived_name_loses_its_direction_overrides_and_long_lists_are_cut(world: World):
    assert archive.archived_name("Ana\u202e\u200f\x07 Mala") == f"Ana Mala ({MARK})"
    assert archive.names_list([f"n{i:02}" for i in range(25)]).endswith("n19 y 5 más")
    data = _export(world.ana, world.campaign)
    data["members"] += [{"username": f"m{i:02}", "public_name": f"M{i:02}", "role": "player"} for i in range(30)]
    data["scenes"][0]["posts"] += [
        _post(world, id=910000 + i, author=f"m{i:02}", author_name=f"M{i:02}", speaker="", body="Hola.")
        for i in range(30)
    ]
    imported = archive.campaign_import(data=data, gm=world.outsider)
    line = next(note for note in imported.notes if note.startswith("Nombres archivados"))
    assert "más" in line and line.count(",") < 25


def test_the_forged_attack_still_links_nobody(world: World, settings):
    data, _key = _forged(world, settings)
    copy = archive.campaign_import(data=archive.archive_read(json.dumps(data).encode()), gm=world.outsider).campaign
    assert copy.read_only
    assert not Post.objects.filter(scene__campaign=copy).exclude(author=world.outsider).exists()
