"""Daily signed checkpoints of the log's head (issue 18, item 2): the agreed
format and its test vector, the daily job, the e-mails to the members who ask
for them, the pages and documents, and a truncated log caught against an
earlier checkpoint."""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import UTC, date, datetime, timedelta

import pytest
from cryptography.exceptions import InvalidSignature
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.urls import reverse
from django.utils import translation

from campaigns.models import Membership, Visibility
from rolls import checkpoints, rollog, verify_log
from rolls import verify as offline
from rolls.models import CampaignLog, Checkpoint, CheckpointSubscription, ImmutableEntryError, RollEntry
from tests.factories import roll
from tests.rolls.conftest import make_table, public_key

pytestmark = pytest.mark.django_db

# The spec's T0 test key (roll-verification.md §5) and the agreed inputs.
T0_SEED = hashlib.sha256(b"rollog/v1 TEST signing key - never use in production").hexdigest()
T0_PUBLIC = "d424e1b779a6b4c190bc7065ee3e21b90be905e0ee20e3a37efe9c664ec35e63"
T6_HEAD = "2e1220f8d81678ec435570b263808a6e981333197bdf7efc1a25f22cade49161"
VECTOR_BODY = (
    b'{"campaign":"hitos-demo","date":"2025-01-15","head":"' + T6_HEAD.encode() + b'","kind":"checkpoint",'
    b'"seq":5,"time":"2025-01-16T00:00:00Z","v":1}'
)
VECTOR_DIGEST = "c39009a707fc94e19d411c9afb11851f3f9a1532d84f1d9269d5b5d36a6899be"
VECTOR_SIG = (
    "2e3f0170ef67e4a97c6cef00e78a73cf50087b7dee43eab891b103f045676afc"
    "9bcaed636f62c096b2b7f6aa4306c30dc402c472b51bde499fc1b2a7c7838709"
)
MIDNIGHT = datetime(2031, 3, 15, 0, 5, tzinfo=UTC)  # the day that ended: 2031-03-14
DAY = date(2031, 3, 14)


@pytest.fixture(autouse=True)
def _language_restored():
    language = translation.get_language()
    yield
    translation.activate(language)


# --- the format -------------------------------------------------------------------------


def test_the_vector_is_reproduced_byte_for_byte():
    key = rollog.load_signing_key(T0_SEED)
    assert rollog.public_key_hex(key.public_key()) == T0_PUBLIC
    body = checkpoints.checkpoint_body(
        campaign="hitos-demo", day=date(2025, 1, 15), seq=5, head=T6_HEAD, made="2025-01-16T00:00:00Z"
    )
    assert body == VECTOR_BODY
    domain = b"rollog/v1/checkpoint\n"
    assert checkpoints.checkpoint_digest(body).hex() == VECTOR_DIGEST == hashlib.sha256(domain + body).hexdigest()
    signature = checkpoints.sign_checkpoint(body, key)
    assert signature.hex() == VECTOR_SIG
    # Under the pinned key, with cryptography alone: domain + SHA-256(domain + body).
    key.public_key().verify(signature, domain + bytes.fromhex(VECTOR_DIGEST))
    # Never an entry's message: the same digest under the entry signature domain fails.
    with pytest.raises(InvalidSignature):
        key.public_key().verify(signature, b"rollog/v1/sig\n" + bytes.fromhex(VECTOR_DIGEST))


def test_the_document_has_the_agreed_keys_in_order():
    key = rollog.load_signing_key(T0_SEED)
    document = checkpoints.document(VECTOR_BODY, bytes.fromhex(VECTOR_SIG), T0_PUBLIC)
    assert list(document) == ["format", "checkpoint_b64", "sig", "checkpoint", "public_key"]
    assert document["format"] == "rollog/v1 checkpoint"
    assert base64.b64decode(document["checkpoint_b64"]) == VECTOR_BODY
    assert document["checkpoint"] == json.loads(VECTOR_BODY)
    # The offline audit (rolls/verify_log.py) reads the same document under the pinned key.
    assert verify_log.load_checkpoint(document, key.public_key()) == json.loads(VECTOR_BODY)


# --- the daily job ----------------------------------------------------------------------


def _make_log(clock, visibility=Visibility.PUBLIC):
    world = make_table(visibility)
    roll(world)
    return world


def test_publishing_signs_the_head_at_the_end_of_the_day_and_twice_adds_nothing(clock):
    world = _make_log(clock)
    log = CampaignLog.objects.get(campaign=world.campaign)
    head_at_midnight = (log.seq, log.head_hash)
    clock.now = MADE = datetime(2031, 3, 15, 0, 30, tzinfo=UTC)
    # A roll after midnight UTC belongs to the next day's checkpoint.
    roll(world)
    (checkpoint,) = checkpoints.publish_checkpoints(MADE)
    assert (checkpoint.date, checkpoint.seq, checkpoint.head_hash) == (DAY, *head_at_midnight)
    body = json.loads(bytes(checkpoint.body))
    assert body == {
        "campaign": log.log_id,
        "date": "2031-03-14",
        "head": head_at_midnight[1],
        "kind": "checkpoint",
        "seq": head_at_midnight[0],
        "time": "2031-03-15T00:30:00Z",
        "v": 1,
    }
    assert bytes(checkpoint.body) == rollog.canonical_bytes(body)
    # Signed with the site's key: it verifies under the published public key, not once tampered.
    message = b"rollog/v1/checkpoint\n" + hashlib.sha256(b"rollog/v1/checkpoint\n" + bytes(checkpoint.body)).digest()
    public_key().verify(bytes(checkpoint.signature), message)
    with pytest.raises(InvalidSignature):
        public_key().verify(bytes(checkpoint.signature), message[:-1] + b"\x00")
    assert checkpoints.publish_checkpoints(MADE + timedelta(hours=3)) == []
    assert Checkpoint.objects.count() == 1


def test_a_log_that_did_not_move_still_gets_its_days_checkpoint_and_new_logs_wait(clock):
    world = _make_log(clock)
    checkpoints.publish_checkpoints(MADE_1 := datetime(2031, 3, 15, 0, 5, tzinfo=UTC))
    clock.now = datetime(2031, 3, 15, 12, 0, tzinfo=UTC)
    later = make_table()  # its log opens after the end of the 14th
    made = checkpoints.publish_checkpoints(MADE_1 + timedelta(days=1))
    assert {c.campaign_id for c in made} == {world.campaign.pk, later.campaign.pk}
    first, second = Checkpoint.objects.filter(campaign=world.campaign).order_by("date")
    assert (second.date, second.seq, second.head_hash) == (DAY + timedelta(days=1), first.seq, first.head_hash)
    assert not Checkpoint.objects.filter(campaign=later.campaign, date=DAY).exists()


def test_days_missed_while_no_worker_ran_are_made_with_the_head_of_their_own_day(clock):
    world = _make_log(clock)
    first = CampaignLog.objects.get(campaign=world.campaign)
    at_end_of_day = (first.seq, first.head_hash)
    clock.now = datetime(2031, 3, 16, 9, 0, tzinfo=UTC)
    roll(world)  # on the 16th
    # No worker from the 14th's midnight to the 18th's: one run makes the 14th–17th.
    made = checkpoints.publish_checkpoints(datetime(2031, 3, 18, 0, 10, tzinfo=UTC))
    days = {c.date: (c.seq, c.head_hash) for c in made}
    assert sorted(days) == [DAY + timedelta(days=n) for n in range(4)]
    assert days[DAY] == days[DAY + timedelta(days=1)] == at_end_of_day
    assert days[DAY + timedelta(days=2)] == days[DAY + timedelta(days=3)] != at_end_of_day
    assert checkpoints.publish_checkpoints(datetime(2031, 3, 18, 1, 10, tzinfo=UTC)) == []


def test_checkpoints_are_never_changed_or_deleted(clock):
    _make_log(clock)
    (checkpoint,) = checkpoints.publish_checkpoints(MIDNIGHT)
    checkpoint.seq = 99
    with pytest.raises(ImmutableEntryError):
        checkpoint.save()
    with pytest.raises(ImmutableEntryError):
        checkpoint.delete()
    with pytest.raises(ImmutableEntryError):
        Checkpoint.objects.update(seq=0)
    with pytest.raises(ImmutableEntryError):
        Checkpoint.objects.all().delete()


def test_the_daily_task_publishes_and_mails_the_members_who_asked_only(clock, mailoutbox):
    world = _make_log(clock)
    world.player.language = "en"
    world.player.save(update_fields=["language"])
    checkpoints.subscribe(user=world.player, campaign=world.campaign)
    checkpoints.subscribe(user=world.gm, campaign=world.campaign)
    checkpoints.subscribe(user=world.other, campaign=world.campaign)
    # Bruno left the campaign since: he is sent nothing.
    Membership.objects.filter(campaign=world.campaign, user=world.other).update(status=Membership.Status.LEFT)
    clock.now = MIDNIGHT
    assert checkpoints.daily_checkpoints.call() == 1
    assert sorted(message.to[0] for message in mailoutbox) == sorted([world.player.email, world.gm.email])
    checkpoint = Checkpoint.objects.get()
    by_address = {message.to[0]: message for message in mailoutbox}
    english, spanish = by_address[world.player.email], by_address[world.gm.email]
    assert english.body.startswith("Hello, Ana:")
    assert spanish.body.startswith("Hola, La Directora:")
    for message in (english, spanish):
        assert checkpoint.head_hash in message.body
        ((name, content, mimetype),) = message.attachments
        assert mimetype == "application/json"
        assert name == f"{world.campaign.roll_log.log_id}-punto-de-control-2031-03-14.json"
        assert json.loads(content) == checkpoints.stored_document(checkpoint)
        command = f"rolls.verify_log registro.json {settings.ROLLOG_KEYS.public_key_hex} --checkpoint {name}"
        assert command in message.body
    # Run again: nothing twice.
    assert checkpoints.send_checkpoint_emails.call(DAY.isoformat()) == 0
    assert len(mailoutbox) == 2


def test_the_mail_goes_out_once_even_if_the_task_runs_twice_and_not_before_its_day(clock, mailoutbox):
    world = _make_log(clock)
    checkpoints.subscribe(user=world.player, campaign=world.campaign)
    assert checkpoints.send_checkpoint_emails.call(DAY.isoformat()) == 0  # no checkpoint yet
    checkpoints.publish_checkpoints(MIDNIGHT)
    assert checkpoints.send_checkpoint_emails.call(DAY.isoformat()) == 1
    assert checkpoints.send_checkpoint_emails.call(DAY.isoformat()) == 0
    assert CheckpointSubscription.objects.get().last_sent_on == DAY
    assert len(mailoutbox) == 1


# --- pages and documents ------------------------------------------------------------------

ROLES = ("anonymous", "outsider", "reader", "player", "gm")


def _urls(world, day="2031-03-14"):
    slug = world.campaign.slug
    return {
        "latest": reverse("rolls:checkpoint-latest", args=[slug]),
        "day": reverse("rolls:checkpoint-day", args=[slug, day]),
        "page": reverse("rolls:checkpoints", args=[slug]),
    }


@pytest.mark.parametrize("visibility", [Visibility.PUBLIC, Visibility.PRIVATE])
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("htmx", [False, True])
def test_who_reads_the_checkpoints(clock, visibility, role, htmx):
    world = _make_log(clock, visibility)
    checkpoints.publish_checkpoints(MIDNIGHT)
    readable = visibility == Visibility.PUBLIC or role in ("reader", "player", "gm")
    headers = {"HX-Request": "true"} if htmx else {}
    client = world.client(role)
    for name, url in _urls(world).items():
        response = client.get(url, headers=headers)
        assert response.status_code == (200 if readable else 404), (name, response.status_code)
    page = client.get(_urls(world)["page"], headers=headers)
    if readable:
        content = page.content.decode()
        checkpoint = Checkpoint.objects.get()
        assert checkpoint.head_hash[:16] in content
        assert ("<html" in content) is not htmx
        # The e-mail choice is for members only.
        assert ('name="action"' in content) is (role in ("reader", "player", "gm"))


@pytest.mark.parametrize("visibility", [Visibility.PUBLIC, Visibility.PRIVATE])
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("htmx", [False, True])
def test_who_may_ask_for_the_checkpoints_by_mail(clock, visibility, role, htmx):
    world = _make_log(clock, visibility)
    headers = {"HX-Request": "true"} if htmx else {}
    response = world.client(role).post(_urls(world)["page"], {"action": "recibir"}, headers=headers)
    member = role in ("reader", "player", "gm")
    if member:
        assert response.status_code == (200 if htmx else 302)
        assert checkpoints.subscribed(world.user(role), world.campaign)
    elif visibility == Visibility.PRIVATE:
        assert response.status_code == 404
    elif role == "anonymous":
        assert response.status_code == 302
        assert response["Location"].startswith(reverse(settings.LOGIN_URL))
    else:
        assert response.status_code == 403
    assert CheckpointSubscription.objects.count() == (1 if member else 0)


@pytest.mark.parametrize("htmx", [False, True])
def test_a_member_opts_in_and_out_and_a_bad_choice_is_answered_in_spanish(clock, htmx):
    world = _make_log(clock)
    client = world.client("player")
    url = _urls(world)["page"]
    headers = {"HX-Request": "true"} if htmx else {}
    response = client.post(url, {"action": "recibir"}, headers=headers, follow=not htmx)
    assert "Recibirás cada día el punto de control" in response.content.decode()
    assert "Dejar de recibirlo" in response.content.decode()
    response = client.post(url, {"action": "no-recibir"}, headers=headers, follow=not htmx)
    assert "Ya no recibirás" in response.content.decode()
    assert not CheckpointSubscription.objects.exists()
    response = client.post(url, {"action": "<b>todo</b>"}, headers=headers)
    assert response.status_code == (200 if htmx else 400)
    assert "Elige si quieres recibir el punto de control diario." in response.content.decode()
    assert "<b>todo</b>" not in response.content.decode()
    assert not CheckpointSubscription.objects.exists()


def test_the_documents_are_the_stored_ones_and_a_missing_day_is_404(clock):
    world = _make_log(clock)
    (checkpoint,) = checkpoints.publish_checkpoints(MIDNIGHT)
    client = world.client("player")
    urls = _urls(world)
    for url in (urls["latest"], urls["day"]):
        response = client.get(url)
        assert response["Content-Type"] == "application/json; charset=utf-8"
        assert json.loads(response.content) == checkpoints.stored_document(checkpoint)
    assert client.get(_urls(world, "2031-03-13")["day"]).status_code == 404
    assert client.get(_urls(world, "2031-02-30")["day"]).status_code == 404


def test_before_the_first_checkpoint_the_latest_is_404_and_the_page_says_so(clock):
    world = _make_log(clock)
    client = world.client("player")
    assert client.get(_urls(world)["latest"]).status_code == 404
    assert "Todavía no hay puntos de control" in client.get(_urls(world)["page"]).content.decode()


def test_the_roll_log_links_to_the_checkpoints(clock):
    world = _make_log(clock)
    page = world.client("player").get(reverse("rolls:roll-log", args=[world.campaign.slug]))
    assert _urls(world)["page"] in page.content.decode()


def _days_of_checkpoints(world, count):
    log = CampaignLog.objects.get(campaign=world.campaign)
    for n in range(count):
        checkpoints.make_checkpoint(
            log, DAY + timedelta(days=n), MIDNIGHT + timedelta(days=n), settings.ROLLOG_KEYS.signing_key
        )


@pytest.mark.parametrize("count", [1, 20])
@pytest.mark.parametrize("htmx", [False, True])
def test_the_page_and_documents_take_constant_queries(clock, django_assert_max_num_queries, count, htmx):
    world = _make_log(clock)
    _days_of_checkpoints(world, count)
    client = world.client("player")
    client.get(_urls(world)["page"])  # the session and its user are read once
    headers = {"HX-Request": "true"} if htmx else {}
    # The session, its user, the campaign, the reader's membership, the list, the e-mail choice
    # (and the messages' session data on a whole page).
    with django_assert_max_num_queries(6 if htmx else 7):
        page = client.get(_urls(world)["page"], headers=headers)
    assert page.content.decode().count("<tr>") == count + 1
    with django_assert_max_num_queries(6):
        assert client.get(_urls(world)["latest"]).status_code == 200
    with django_assert_max_num_queries(6):
        assert client.get(_urls(world)["day"]).status_code == 200


def test_the_page_lists_the_last_thirty(clock):
    world = _make_log(clock)
    _days_of_checkpoints(world, 31)
    content = world.client("player").get(_urls(world)["page"]).content.decode()
    assert content.count("<tr>") == 31
    assert "2031-03-14" not in content  # the oldest is left out
    assert "2031-04-13" in content


# --- a truncated log caught ---------------------------------------------------------------


def _offline_check(body, refs, key):
    """H1's check of an export against a checkpoint (rolls/verify_log.py)."""
    verify_log.check_checkpoint(body, [offline.load(ref, key) for ref in refs])


def test_a_log_whose_last_entries_were_dropped_is_caught_against_an_earlier_checkpoint(clock):
    world = _make_log(clock)
    roll(world)
    (checkpoint,) = checkpoints.publish_checkpoints(MIDNIGHT)
    client = world.client("player")
    document = json.loads(client.get(_urls(world)["latest"]).content)
    export = json.loads(client.get(reverse("rolls:log-export", args=[world.campaign.slug])).content)
    body = verify_log.load_checkpoint(document, public_key())
    # The whole log is consistent with the checkpoint.
    _offline_check(body, export["entries"], public_key())
    assert len(export["entries"]) == checkpoint.seq + 1
    # The last entry dropped: the chain alone is still fine, the checkpoint is not.
    with pytest.raises(offline.RollogError) as caught:
        _offline_check(body, export["entries"][:-1], public_key())
    assert caught.value.code == "truncated"
    # An entry rewritten at the checkpoint's seq: a fork.
    last = RollEntry.objects.get(campaign=world.campaign, seq=checkpoint.seq)
    forged = rollog.sign_entry({**last.entry, "purpose": "otra"}, settings.ROLLOG_KEYS.signing_key)
    with pytest.raises(offline.RollogError) as caught:
        _offline_check(body, [*export["entries"][:-1], forged.ref()], public_key())
    assert caught.value.code == "fork"


@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL triggers")
@pytest.mark.parametrize(
    "sql",
    ["UPDATE rolls_checkpoint SET seq = seq + 1 WHERE id = %s", "DELETE FROM rolls_checkpoint WHERE id = %s"],
)
def test_postgresql_refuses_to_rewrite_a_checkpoint(clock, sql):
    _make_log(clock)
    (checkpoint,) = checkpoints.publish_checkpoints(MIDNIGHT)
    with pytest.raises(DatabaseError, match="rolls_checkpoint is append-only"), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(sql, [checkpoint.pk])
    assert Checkpoint.objects.get(pk=checkpoint.pk).seq == checkpoint.seq


def _checkpointed_export(clock, tmp_path):
    """A log of three entries, the checkpoint the site served for it (saved to a file) and its export."""
    world = _make_log(clock)
    roll(world)
    checkpoints.publish_checkpoints(MIDNIGHT)
    client = world.client("player")
    kept = tmp_path / "punto.json"
    kept.write_bytes(client.get(_urls(world)["latest"]).content)
    return kept, json.loads(client.get(reverse("rolls:log-export", args=[world.campaign.slug])).content)


def test_verify_log_catches_the_truncated_export_with_the_checkpoint_the_site_served(clock, tmp_path, capsys):
    kept, export = _checkpointed_export(clock, tmp_path)
    whole, cut = tmp_path / "registro.json", tmp_path / "recortado.json"
    whole.write_text(json.dumps(export), encoding="utf-8")
    cut.write_text(json.dumps({**export, "entries": export["entries"][:-1]}), encoding="utf-8")
    key = settings.ROLLOG_KEYS.public_key_hex
    assert verify_log.main([str(whole), key, "--checkpoint", str(kept)]) == 0
    assert "el registro los contiene, sin recortes ni cambios." in capsys.readouterr().out
    # The cut log is a clean chain on its own; only the checkpoint catches it.
    assert verify_log.main([str(cut), key]) == 0
    assert verify_log.main([str(cut), key, "--checkpoint", str(kept)]) == 1
    assert "[truncated]" in capsys.readouterr().out


def test_the_vector_passes_against_the_t1_t6_log_and_catches_it_without_t6():
    from tests.rolls.test_vectors import build_vector_log

    log = build_vector_log()
    assert log[-1].hash_hex == T6_HEAD
    key = rollog.load_signing_key(T0_SEED).public_key()
    document = checkpoints.document(VECTOR_BODY, bytes.fromhex(VECTOR_SIG), T0_PUBLIC)
    body = verify_log.load_checkpoint(document, key)
    _offline_check(body, [entry.ref() for entry in log], key)
    with pytest.raises(offline.RollogError) as caught:
        _offline_check(body, [entry.ref() for entry in log[:-1]], key)
    assert caught.value.code == "truncated"


def test_verify_log_never_calls_a_failed_log_intact_even_when_its_checkpoints_match(clock, tmp_path, capsys):
    kept, export = _checkpointed_export(clock, tmp_path)
    # The checkpointed head is intact; an entry before it carries a forged (zero) signature.
    export["entries"][1] = {**export["entries"][1], "sig": "0" * 128}
    forged = tmp_path / "registro.json"
    forged.write_text(json.dumps(export), encoding="utf-8")
    assert verify_log.main([str(forged), settings.ROLLOG_KEYS.public_key_hex, "--checkpoint", str(kept)]) == 1
    out = capsys.readouterr().out
    assert "[bad_signature]" in out
    assert "sin recortes ni cambios" not in out
    assert (
        "  Puntos de control comprobados: 1; sus entradas están en el registro, pero la auditoría ha fallado"
        " (arriba): el registro no es íntegro." in out
    )
