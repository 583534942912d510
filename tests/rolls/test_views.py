"""Permalink page, JSON bundle, badge, keys, log export and the free roll view."""

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from xml.etree import ElementTree
from zoneinfo import ZoneInfo

import pytest
from django.conf import settings
from django.db import connection
from django.urls import reverse
from pytest_django.asserts import assertContains, assertNotContains, assertRedirects

from rolls import rollog, services, verify_log, verify_roll, views
from rolls.models import CampaignLog, RollEntry, SeedEpoch
from systems.hitos import reading as hitos_reading
from tests.conftest import client_for
from tests.factories import client_seed, plain_read, roll
from tests.rolls.conftest import make_table, public_key

ROOT = Path(__file__).resolve().parents[2]
XSS = "<script>alert(1)</script>\"'&amp;"


def _hitos(table, *, user=None, post=None, purpose="Reflejos + Sigilo: cruzar el jardín", **kwargs):
    kwargs.setdefault("client_seed", client_seed())
    entry, _ = hitos_reading.hitos_check_roll(
        campaign=table.campaign,
        user=user or table.player,
        purpose=purpose,
        modifier=8,
        difficulty=15,
        breakdown=[("Reflejos", 5), ("Sigilo", 3)],
        character=table.character,
        scene=table.scene,
        post=post,
        **kwargs,
    )
    return entry


def _page(entry, user=None):
    return client_for(user).get(f"/r/{entry.permalink}/")


def _seed_with_a_rejected_byte(table, spec="3d10") -> str:
    """A client seed whose next roll rejects at least one byte.

    Only possible because the test holds the seed key: it decrypts the next
    slot's seed, which no player can do (§5, "How the test inputs were chosen").
    """
    log = CampaignLog.objects.get(campaign=table.campaign)
    epoch = SeedEpoch.objects.get(campaign=table.campaign, epoch=log.epoch)
    seed = services._seed_for(epoch, log.next_index)
    for n in range(10_000):
        candidate = f"rechazo{n}"
        message = rollog.derivation_message(log.log_id, log.seq + 1, candidate, spec)
        stream = verify_roll.DiceStream(seed, message)  # the explainer's stream keeps the values it read
        for faces in rollog.expand_spec(spec):
            stream.roll(faces)
        if verify_roll.rejected(stream):
            return candidate
    raise AssertionError("no client seed with a rejected byte in 10 000 tries")


# --- The permalink page -------------------------------------------------------------------


def test_the_permalink_page_shows_a_hitos_roll_to_anyone(table, settings):
    settings.TIME_ZONE = "Europe/Madrid"
    entry = _hitos(table, post=table.post)
    response = _page(entry)
    assert response.status_code == 200
    e = entry.entry
    game = e["game"]
    html = " ".join(response.content.decode().split())
    assertContains(response, "✓ Tirada verificada")
    assertContains(response, f"3d10 → {' · '.join(map(str, e['dice']))}")
    # The dice as they were rolled, each with its letter explained; C counts (H2) and says so.
    names = {"m": "m: menor, el dado más bajo", "C": "C: central, el dado del medio", "M": "M: mayor, el dado más alto"}
    for die, label in zip(e["dice"], game["labels"], strict=True):
        kept = (" roll-die-kept", ' <span class="roll-die-counts">cuenta</span>') if label == "C" else ("", "")
        assert (
            f'<li class="list-inline-item roll-die{kept[0]}"><span class="roll-die-value">{die}</span> '
            f'<abbr class="roll-die-letter" title="{names[label]}">{label}</abbr>{kept[1]}</li>'
        ) in html
    assert "Cuenta el dado central (C), el del medio de los tres." in html
    assert (
        f"<strong>Total {game['total']}</strong> = {game['C']} (dado C) + 8 (Reflejos +5, Sigilo +3), "
        "contra dificultad 15."
    ) in html
    badge = 'text-bg-success text-wrap">Éxito' if game["success"] else 'text-bg-danger text-wrap">Fallo'
    assert badge in html
    assert f"(margen {game['total'] - 15:+d})" in html
    assert "<summary>¿Cómo se lee?</summary>" in html
    assertContains(response, '<dd class="col-sm-8" id="roll-who">Ana · Inés Salcedo</dd>')
    assertContains(response, '<dd class="col-sm-8" id="roll-where">La mansión · El vestíbulo</dd>')
    # When: local time for people, UTC as signed, the exact instant for programs.
    moment = datetime.strptime(e["time"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    local = moment.astimezone(ZoneInfo("Europe/Madrid"))
    months = ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto"]
    months += ["septiembre", "octubre", "noviembre", "diciembre"]
    local_text = f"{local.day} de {months[local.month - 1]} de {local.year} a las {local:%H:%M}"
    utc_text = f"{moment.day} de {months[moment.month - 1]} de {moment.year} a las {moment:%H:%M}"
    when = html.split('id="roll-when">')[1].split("</dd>")[0].strip()
    assert when == (
        f'<time datetime="{e["time"]}">{local_text}</time> '
        f'<span class="text-body-secondary">({local.tzname()}; {utc_text} en UTC)</span>'
    )
    assertContains(response, "Reflejos + Sigilo: cruzar el jardín")
    assertContains(response, f"#{entry.seq} · época 1, ranura {entry.epoch_index}")


def test_the_page_shows_the_post_link_and_text_to_readers_of_the_post(table):
    entry = _hitos(table, post=table.post)
    response = _page(entry)
    assertContains(response, f'<a href="{table.post.get_absolute_url()}">Mensaje #{table.post.pk}</a>')
    assertContains(response, "<p>Abro la puerta del sótano.</p>")


def test_a_whispered_post_is_neither_linked_nor_quoted_for_others(table):
    entry = _hitos(table, post=table.whisper)
    assert entry.is_sealed
    for user in (None, table.outsider, table.reader, table.other):
        response = _page(entry, user)
        assert response.status_code == 200
        assertContains(response, "Tirada privada")
        assertNotContains(response, "robo la llave")
        assertNotContains(response, table.whisper.get_absolute_url())
    for user in (table.gm, table.player):
        response = _page(entry, user)
        assertContains(response, "Le susurro a la directora: robo la llave.")
        assertContains(response, f'<a href="{table.whisper.get_absolute_url()}">Mensaje #{table.whisper.pk}</a>')


def test_a_private_campaigns_roll_is_visible_by_link_but_its_post_is_not(private_table):
    entry = _hitos(private_table, post=private_table.post)
    response = _page(entry)
    assert response.status_code == 200
    assertContains(response, "✓ Tirada verificada")
    assertContains(response, "No tienes acceso al mensaje de esta tirada.")
    assertNotContains(response, "Abro la puerta del sótano.")
    assertContains(_page(entry, private_table.other), "Abro la puerta del sótano.")


def test_a_roll_without_a_post_says_so(table):
    assertContains(_page(roll(table)), "Tirada sin mensaje")


def test_the_page_names_an_extension_by_the_dice_it_adds(table):
    original = roll(table)
    extended = services.extend_append(
        parent=original,
        user=table.player,
        spec="1d6",
        purpose="Dados añadidos",
        read=plain_read,
        client_seed=client_seed(),
    )
    html = _page(extended).content.decode()
    items = html.split('<ol class="list-unstyled roll-versions">')[1].split("</ol>")[0]
    lines = [" ".join(part.split()) for part in items.split("</li>")[:-1]]
    assert f"original [{', '.join(map(str, original.entry['dice']))}]" in lines[0]
    assert f"añade 1d6 (Ana) → [{', '.join(map(str, extended.entry['dice']))}]" in lines[1]


def test_the_page_lists_the_reroll_chain_from_the_original_to_the_final_version(table):
    original = _hitos(table)
    first = services.reroll_append(
        parent=original, user=table.player, positions=[0], purpose="Aspecto", read=plain_read, client_seed=client_seed()
    )
    final = services.reroll_append(
        parent=first,
        user=table.gm,
        positions=[1, 2],
        purpose="Activación negativa",
        read=plain_read,
        client_seed=client_seed(),
    )
    for entry in (original, first, final):
        html = _page(entry).content.decode()
        items = html.split('<ol class="list-unstyled roll-versions">')[1].split("</ol>")[0]
        lines = [" ".join(part.split()) for part in items.split("</li>")[:-1]]
        assert [line.split('">#')[1].split("</a>")[0] for line in lines] == [
            str(original.seq),
            str(first.seq),
            str(final.seq),
        ]
        assert f"original [{', '.join(map(str, original.entry['dice']))}]" in lines[0]
        assert f"repite los dados 1 (Ana) → [{', '.join(map(str, first.entry['dice']))}]" in lines[1]
        assert f"repite los dados 2, 3 (La Directora) → [{', '.join(map(str, final.entry['dice']))}]" in lines[2]
        assert "final</span>" in lines[2] and "final</span>" not in lines[0] + lines[1]
        mine = [i for i, line in enumerate(lines) if "esta</span>" in line]
        assert mine == [[original, first, final].index(entry)]


def test_the_page_lists_the_same_users_rolls_in_the_scene_within_30_minutes(clock, table):
    start = roll(table, purpose="Primera")
    clock.advance(minutes=5)
    roll(table, user=table.other, purpose="De otro jugador")
    roll(table, scene=None, purpose="Fuera de la escena")
    clock.advance(minutes=5)
    near = roll(table, purpose="Diez minutos después")
    clock.advance(minutes=35)
    late = roll(table, purpose="Cuarenta y cinco minutos después")

    def nearby(entry):
        html = _page(entry).content.decode()
        if "Ninguna." in html.split('id="cercanas"')[1].split("</section>")[0]:
            return []
        block = html.split('<ul class="roll-nearby">')[1].split("</ul>")[0]
        return [int(part.split("</a>")[0]) for part in block.split('">#')[1:]]

    assert nearby(start) == [near.seq]
    assert nearby(near) == [start.seq]
    assert nearby(late) == []


def test_the_verification_panel_shows_every_intermediate_value(table):
    seed = _seed_with_a_rejected_byte(table)
    entry = roll(table, client_seed=seed)
    e = entry.entry
    proof = verify_roll.verify_bundle(views._bundle(entry), public_key())
    assert verify_roll.rejected(proof.stream)
    response = _page(entry)
    anchor = SeedEpoch.objects.get(campaign=table.campaign).anchor
    assertContains(response, f'<code class="text-break" id="v-anchor">{anchor}</code>')
    assertContains(response, "Ancla de la época 1 (entrada #0)")
    assertContains(response, f"Semilla x{e['epoch_index']} (SHA-256 aplicado {e['epoch_index']} veces da el ancla)")
    assertContains(
        response, f'<code class="text-break" id="v-seed">{e["seed"]}</code> <span class="text-success">✓</span>'
    )
    message = f"rollog/v1:{e['campaign']}:{e['seq']}:{seed}:3d10:-:-"
    assertContains(response, f'<code class="text-break" id="v-message">{message}</code>')
    block = verify_roll.DiceStream(bytes.fromhex(e["seed"]), message)
    for _ in range(3):
        block.roll(10)
    blocks = "".join(f'<code class="d-block text-break">{b.hex()}</code>' for b in block.blocks)
    assertContains(response, f'<dd id="v-blocks">{blocks}</dd>')
    draws = "".join(
        f'<li class="draw-accepted">✓ {d.value} → d10 = {d.die}</li>'
        if d.die
        else f'<li class="draw-rejected">✗ {d.value} rechazado (sesgaría el dado)</li>'
        for d in block.draws
    )
    assertContains(response, f'<ul class="list-unstyled mb-0" id="v-draws">{draws}</ul>')
    assert '<li class="draw-rejected">' in draws
    assertContains(response, f'<code class="text-break" id="v-hash">{entry.entry_hash}</code>')
    assertContains(response, f'<code class="text-break" id="v-sig">{bytes(entry.signature).hex()}</code>')
    assertContains(response, f'<code class="text-break" id="v-key">{settings.ROLLOG_KEYS.public_key_hex}</code>')
    assertContains(
        response, f'<code id="v-fingerprint">{views.key_fingerprint(settings.ROLLOG_KEYS.public_key_hex)}</code>'
    )
    assertContains(response, "La comprobación en el navegador es una comodidad")
    assertContains(response, f"python3 verify.py {entry.permalink}.json {settings.ROLLOG_KEYS.public_key_hex}")
    assertContains(response, f'href="{reverse("rolls:verifier-download")}"')
    # The in-page check reads the same bundle the .json serves.
    assertContains(response, '<script id="roll-bundle" type="application/json">')
    assertContains(response, f'"entry_hash": "{entry.entry_hash}"')
    assertContains(response, f'data-pubkey="{settings.ROLLOG_KEYS.public_key_hex}"')


def test_the_key_fingerprint_is_the_start_of_its_sha256():
    # SHA-256 of the T0 test public key's 32 raw bytes, first 128 bits in groups of four.
    assert views.key_fingerprint("d424e1b779a6b4c190bc7065ee3e21b90be905e0ee20e3a37efe9c664ec35e63") == (
        "60e6 8be0 1ab4 6f0e eb48 e170 30dc 3c40"
    )


def test_the_page_offers_bbcode_and_markdown_snippets(table):
    entry = roll(table)
    response = _page(entry)
    link = f"{settings.SITE_URL}/r/{entry.permalink}/"
    badge = f"{settings.SITE_URL}/r/{entry.permalink}.svg"
    assertContains(response, f'id="bbcode" rows="2" readonly>[url={link}][img]{badge}[/img][/url]</textarea>')
    assertContains(response, f'id="markdown" rows="2" readonly>[![Tirada verificada]({badge})]({link})</textarea>')


def test_a_server_made_client_seed_is_flagged_on_the_page(table):
    entry = services.roll_append(campaign=table.campaign, user=table.player, spec="3d10", purpose="x", read=plain_read)
    assertContains(_page(entry), "puesta por el servidor: la equidad depende del operador")


@pytest.mark.skipif(connection.vendor == "postgresql", reason="PostgreSQL's trigger refuses the raw UPDATE")
def test_the_page_reads_the_signed_bytes_and_says_when_they_were_tampered_with(table):
    entry = roll(table, purpose="Honrada")
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE rolls_rollentry SET dice = %s, purpose = %s WHERE id = %s",
            [json.dumps([10, 10, 10]), "Amañada", entry.pk],
        )
    response = _page(entry)
    assertContains(response, f"3d10 → {' · '.join(map(str, entry.entry['dice']))}")
    assertNotContains(response, "Amañada")
    tampered = bytes(entry.entry_bytes).replace(b"Honrada", b"Amanada")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE rolls_rollentry SET entry_bytes = %s WHERE id = %s", [tampered, entry.pk])
    response = _page(entry)
    assert response.status_code == 200
    assertContains(response, "✗ La tirada no supera la verificación")
    assertContains(response, "La firma no es válida con la clave pública fijada.")


@pytest.mark.parametrize(
    "path",
    [
        "/r/abc/",
        "/r/AAAAAAAAAAAAAAAAAAAAAAAA/",
        "/r/aaaaaaaaaaaaaaaaaaaaaaa1/",
        "/r/aaaaaaaaaaaaaaaaaaaaaaaaa/",
        "/r/aaaaaaaaaaaaaaaaaaaaaaaa/",
        "/r/aaaaaaaaaaaaaaaaaaaaaaaa.json",
        "/r/aaaaaaaaaaaaaaaaaaaaaaaa.svg",
        "/r/aaaaaaaaaaaaaaaaaaaa%00aaa/",
        "/r/aaaaaaaaaaaaaaaaaaaaaaa<.json",
    ],
)
def test_a_malformed_or_unknown_permalink_gives_404(db, path):
    response = client_for(None).get(path)
    assert response.status_code == 404
    assert "404.html" in [t.name for t in response.templates]


def test_an_epoch_opening_has_no_roll_page(table):
    opening = RollEntry.objects.get(campaign=table.campaign, seq=0)
    for suffix in ("/", ".json", ".svg"):
        assert client_for(None).get(f"/r/{opening.permalink}{suffix}").status_code == 404


@pytest.mark.parametrize("suffix", ["/", ".json", ".svg"])
def test_roll_addresses_answer_only_get_and_head(table, suffix):
    entry = roll(table)
    client = client_for(table.player)
    assert client.post(f"/r/{entry.permalink}{suffix}").status_code == 405
    assert client.head(f"/r/{entry.permalink}{suffix}").status_code == 200


# --- JSON bundle and badge ----------------------------------------------------------------


def test_the_json_bundle_verifies_offline(table, tmp_path):
    original = _hitos(table, post=table.post)
    reroll = services.reroll_append(
        parent=original,
        user=table.player,
        positions=[0, 2],
        purpose="Aspecto",
        read=plain_read,
        client_seed=client_seed(),
    )
    client = client_for(None)
    response = client.get(f"/r/{reroll.permalink}.json")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json; charset=utf-8"
    assert response["Access-Control-Allow-Origin"] == "*"
    assert response["Content-Disposition"] == f'inline; filename="{reroll.permalink}.json"'
    bundle = json.loads(response.content)
    assert set(bundle) == {
        "format",
        "permalink",
        "entry_hash",
        "entry_b64",
        "sig",
        "entry",
        "epoch_open",
        "parent",
        "children",
        "head",
        "public_key",
    }
    assert (bundle["format"], bundle["permalink"], bundle["entry_hash"]) == (
        "rollog/v1",
        reroll.permalink,
        reroll.entry_hash,
    )
    assert bundle["public_key"] == settings.ROLLOG_KEYS.public_key_hex
    assert bundle["parent"] == original.signed.ref()
    proof = verify_roll.verify_bundle(bundle, public_key())
    assert proof.entry.entry["dice"] == reroll.entry["dice"]
    assert json.loads(client.get(f"/r/{original.permalink}.json").content)["children"] == [reroll.permalink]

    path = tmp_path / "roll.json"
    path.write_bytes(response.content)
    result = subprocess.run(
        [sys.executable, "-m", "rolls.verify_roll", str(path), settings.ROLLOG_KEYS.public_key_hex],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[0] == "OK: tirada verificada (rollog/v1)"
    assert f"entrada #{reroll.seq} (repetición de la entrada #{original.seq})" in result.stdout


def test_the_badge_is_a_small_svg_of_the_result(table):
    entry = _hitos(table)
    response = client_for(None).get(f"/r/{entry.permalink}.svg")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml; charset=utf-8"
    assert response["Cache-Control"] == "public, max-age=86400"
    svg = ElementTree.fromstring(response.content)
    text = svg.find("{http://www.w3.org/2000/svg}text").text
    game = entry.entry["game"]
    outcome = "éxito" if game["success"] else "fallo"
    dice = " · ".join(map(str, entry.entry["dice"]))
    assert text == f"✓ {dice} (C {game['C']}) → {game['total']} {outcome} · Hitos #{entry.seq}"


def test_a_script_in_the_purpose_stays_inert_in_html_svg_and_json(table):
    entry = roll(table, purpose=XSS)
    assert entry.entry["purpose"] == XSS
    client = client_for(None)
    html = client.get(f"/r/{entry.permalink}/").content.decode()
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#x27;&amp;amp;" in html
    svg_bytes = client.get(f"/r/{entry.permalink}.svg").content
    assert b"<script>" not in svg_bytes
    svg = ElementTree.fromstring(svg_bytes)
    assert svg.find("{http://www.w3.org/2000/svg}title").text == XSS
    assert svg.get("aria-label") == XSS
    raw = client.get(f"/r/{entry.permalink}.json").content
    assert b"<" not in raw and b">" not in raw
    assert b"\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in raw
    bundle = json.loads(raw)
    assert bundle["entry"]["purpose"] == XSS
    verify_roll.verify_bundle(bundle, public_key())


def test_the_well_known_keys_document_lists_the_signing_key(db):
    response = client_for(None).get("/.well-known/rollog-keys.json")
    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == "*"
    key = settings.ROLLOG_KEYS.public_key_hex
    assert json.loads(response.content) == {
        "format": "rollog/v1",
        "keys": [
            {
                "public_key": key,
                "algorithm": "Ed25519",
                "fingerprint": views.key_fingerprint(key),
                "valid_from": None,
                "valid_until": None,
            }
        ],
    }


def test_the_verifier_can_be_downloaded(db):
    """The download is the single file the server itself verifies with."""
    assert reverse("rolls:verifier-download") == "/verificador/verify.py"
    response = client_for(None).get("/verificador/verify.py")
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="verify.py"'
    assert b"".join(response.streaming_content) == (ROOT / "rolls" / "verify.py").read_bytes()
    # Its address before issue 18 still leads to it.
    assertRedirects(
        client_for(None).get("/verificador/verify_roll.py"),
        "/verificador/verify.py",
        status_code=301,
        fetch_redirect_response=False,
    )


# --- Log export ----------------------------------------------------------------------------


def _export(table, user=None, query=""):
    return client_for(user).get(reverse("rolls:log-export", args=[table.campaign.slug]) + query)


def test_everyone_may_export_a_public_campaigns_log_and_it_audits_clean(table):
    roll(table)
    original = _hitos(table)
    services.reroll_append(
        parent=original, user=table.player, positions=[1], purpose="Aspecto", read=plain_read, client_seed=client_seed()
    )
    response = _export(table)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json; charset=utf-8"
    page = json.loads(response.content)
    assert (page["format"], page["campaign"], page["start"], page["next"]) == (
        "rollog/v1",
        table.campaign.roll_log.log_id,
        0,
        None,
    )
    assert page["public_key"] == settings.ROLLOG_KEYS.public_key_hex
    assert len(page["entries"]) == 4
    report = verify_log.audit_log(verify_log.export_entries(page), public_key())
    assert report.ok, report.problems
    assert report.head.hash_hex == CampaignLog.objects.get(campaign=table.campaign).head_hash


@pytest.mark.parametrize("who", ["gm", "player", "reader"])
def test_members_may_export_a_private_campaigns_log(private_table, who):
    assert _export(private_table, getattr(private_table, who)).status_code == 200


@pytest.mark.parametrize("who", ["outsider", None])
def test_outsiders_get_404_for_a_private_campaigns_log(private_table, who):
    user = getattr(private_table, who) if who else None
    assert _export(private_table, user).status_code == 404


def test_the_export_is_paginated_with_desde_and_next(monkeypatch, table, tmp_path):
    monkeypatch.setattr(views, "EXPORT_PAGE_SIZE", 2)
    for _ in range(4):
        roll(table)
    pages, query = [], ""
    while True:
        page = json.loads(_export(table, query=query).content)
        pages.append(page)
        if page["next"] is None:
            break
        assert page["next"].startswith(f"{settings.SITE_URL}/")
        query = "?" + page["next"].split("?")[1]
    assert [(p["start"], len(p["entries"]), p["next"]) for p in pages] == [
        (0, 2, f"{settings.SITE_URL}/partidas/{table.campaign.slug}/tiradas/registro.json?desde=2"),
        (2, 2, f"{settings.SITE_URL}/partidas/{table.campaign.slug}/tiradas/registro.json?desde=4"),
        (4, 1, None),
    ]
    refs = [ref for page in pages for ref in page["entries"]]
    assert verify_log.audit_log(refs, public_key()).ok
    # The offline audit takes the pages in order.
    paths = []
    for n, page in enumerate(pages):
        paths.append(tmp_path / f"p{n}.json")
        paths[-1].write_text(json.dumps(page), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "rolls.verify_log", *map(str, paths), settings.ROLLOG_KEYS.public_key_hex],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("OK: registro íntegro (rollog/v1): 5 entradas")


@pytest.mark.parametrize("value", ["abc", "-1", "1.5", ""])
def test_a_bad_desde_gives_400(table, value):
    response = _export(table, query=f"?desde={value}")
    assert response.status_code == 400
    assert response.content.decode() == "«desde» debe ser un número de entrada (0 o más)."


def test_desde_beyond_the_head_gives_an_empty_last_page(table):
    page = json.loads(_export(table, query="?desde=50").content)
    assert (page["start"], page["entries"], page["next"]) == (50, [], None)


# --- Free roll ------------------------------------------------------------------------------


def _free_url(table):
    return reverse("rolls:free-roll", args=[table.campaign.slug])


@pytest.mark.parametrize("who", ["gm", "player"])
def test_the_gm_and_players_see_the_free_roll_form(table, who):
    response = client_for(getattr(table, who)).get(_free_url(table))
    assert response.status_code == 200
    head = CampaignLog.objects.get(campaign=table.campaign).head_hash
    assertContains(response, f'<input type="hidden" name="seen" value="{head}"')
    assertContains(response, 'name="client_seed"')
    assertContains(response, "js/client-seed.js")


def test_a_player_rolls_freely_and_lands_on_the_permalink(table):
    response = client_for(table.player).post(
        _free_url(table), {"notation": "2d6+1", "purpose": "Monedas", "client_seed": "abc123", "seen": ""}
    )
    entry = RollEntry.objects.get(campaign=table.campaign, client_seed="abc123")
    assertRedirects(response, f"/r/{entry.permalink}/")
    assert (entry.user, entry.spec, entry.entry["purpose"], entry.entry["client_seed_source"]) == (
        table.player,
        "2d6",
        "Monedas",
        "browser",
    )
    assert entry.entry["game"]["total"] == sum(entry.entry["dice"]) + 1
    # The same request sent again (a retry) lands on the same roll.
    again = client_for(table.player).post(
        _free_url(table), {"notation": "2d6+1", "purpose": "Monedas", "client_seed": "abc123", "seen": ""}
    )
    assertRedirects(again, f"/r/{entry.permalink}/")
    assert RollEntry.objects.filter(campaign=table.campaign).count() == 2


def test_without_javascript_the_server_makes_the_seed(table):
    client_for(table.gm).post(_free_url(table), {"notation": "1d20", "purpose": ""})
    entry = RollEntry.objects.get(campaign=table.campaign, seq=1)
    assert (entry.entry["client_seed_source"], entry.entry["purpose"]) == ("server", "1d20")


def test_a_reader_may_not_roll(table):
    assert client_for(table.reader).get(_free_url(table)).status_code == 403
    assert client_for(table.reader).post(_free_url(table), {"notation": "1d6"}).status_code == 403
    assert RollEntry.objects.filter(campaign=table.campaign).count() == 1


def test_an_outsider_gets_404_on_a_private_campaign_and_403_on_a_public_one(table, private_table):
    assert client_for(private_table.outsider).get(_free_url(private_table)).status_code == 404
    assert client_for(table.outsider).get(_free_url(table)).status_code == 403


def test_anonymous_visitors_are_sent_to_log_in(table):
    response = client_for(None).get(_free_url(table))
    assertRedirects(response, f"{reverse('accounts:login')}?next={_free_url(table)}", fetch_redirect_response=False)


def test_the_free_roll_answers_only_get_and_post(table):
    assert client_for(table.player).put(_free_url(table)).status_code == 405


def test_bad_notation_shows_a_spanish_error_and_keeps_the_text(table):
    response = client_for(table.player).post(
        _free_url(table), {"notation": "101d6!", "purpose": "Explota", "client_seed": "s1"}
    )
    assert response.status_code == 200
    assertContains(response, "No entiendo la tirada (posición 1: no se pueden tirar más de 100 dados).")
    assertContains(response, 'value="101d6!"')
    assertContains(response, 'value="Explota"')
    assertContains(response, 'name="client_seed" value="s1"')
    response = client_for(table.player).post(_free_url(table), {"notation": "tres dados", "client_seed": "s1"})
    assertContains(response, "No entiendo la tirada (posición 1: se esperaba un número o una tirada (p. ej. 2d6)).")
    assertContains(response, 'value="tres dados"')
    assert RollEntry.objects.filter(campaign=table.campaign).count() == 1


@pytest.mark.parametrize("seed", ["a" * 65, "con espacio", "ñ", "<script>", "a/b"])
def test_a_client_seed_outside_the_alphabet_gives_400(table, seed):
    response = client_for(table.player).post(_free_url(table), {"notation": "1d6", "client_seed": seed})
    assert response.status_code == 400
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response.content.decode() == (
        "La semilla del navegador no es válida: de 1 a 64 letras, cifras, guiones o guiones bajos."
    )
    assert RollEntry.objects.filter(campaign=table.campaign).count() == 1


def test_a_stale_page_asks_to_roll_again_with_the_current_head(monkeypatch, db):
    monkeypatch.setattr(services, "EPOCH_LENGTH", 1)
    short = make_table()
    first_head = CampaignLog.objects.get(campaign=short.campaign).head_hash
    roll(short)  # uses the epoch's only slot: epoch 2 opens at once
    data = {"notation": "1d6", "client_seed": "s2", "seen": first_head}
    response = client_for(short.player).post(_free_url(short), data)
    assert response.status_code == 200
    assertContains(response, "La tirada se preparó con una página antigua. Recarga la página y vuelve a tirar.")
    head = CampaignLog.objects.get(campaign=short.campaign).head_hash
    assertContains(response, f'<input type="hidden" name="seen" value="{head}"')
    again = client_for(short.player).post(_free_url(short), {**data, "seen": head})
    assert again.status_code == 302
