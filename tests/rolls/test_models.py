"""The stored log: uniqueness and append-only entries (§3.12)."""

import pytest
from django.db import DatabaseError, IntegrityError, connection, transaction

from rolls.models import ImmutableEntryError, RollEntry
from tests.factories import client_seed, roll

needs_postgresql = pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL triggers")


def _copy(entry: RollEntry, **changes) -> RollEntry:
    """A second row like ``entry`` with fresh unique hashes, then ``changes``."""
    fields = {
        f.name: getattr(entry, f.name) for f in RollEntry._meta.concrete_fields if f.name not in {"id", "created_at"}
    }
    fields.update(entry_hash="f" * 64, permalink="a" * 24, seq=999, epoch_index=999, client_seed=client_seed())
    fields.update(changes)
    return RollEntry(**fields)


def _insert_fails(row: RollEntry) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        row.save()


class _Undone(Exception):
    pass


def _insert_then_undo(*rows: RollEntry) -> int:
    """Save ``rows`` and count the campaign's entries, then undo them: a raw
    copy has no log head leading to it, which the entries' deferred trigger
    (rolls 0005) refuses when the test's transaction checks its constraints
    on PostgreSQL."""
    with pytest.raises(_Undone), transaction.atomic():
        for row in rows:
            row.save()
        count = RollEntry.objects.filter(campaign=rows[0].campaign).count()
        raise _Undone
    return count


def test_a_copy_with_fresh_unique_fields_can_be_inserted(table):
    # The control for the four tests below: only the field under test collides.
    entry = roll(table)
    assert _insert_then_undo(_copy(entry)) == 3


def test_two_entries_cannot_share_a_seq_in_one_campaign(table):
    entry = roll(table)
    _insert_fails(_copy(entry, seq=entry.seq))


def test_two_entries_cannot_share_a_seed_slot_in_one_campaign(table):
    entry = roll(table)
    _insert_fails(_copy(entry, epoch=entry.epoch, epoch_index=entry.epoch_index))


def test_two_entries_cannot_share_a_client_seed_in_one_campaign(table):
    entry = roll(table)
    _insert_fails(_copy(entry, client_seed=entry.client_seed))


def test_a_version_can_be_rerolled_only_once(table):
    original = roll(table)
    first = _copy(original, parent=original, kind=RollEntry.Kind.REROLL)
    second = _copy(
        original,
        parent=original,
        kind=RollEntry.Kind.REROLL,
        entry_hash="e" * 64,
        permalink="b" * 24,
        seq=1000,
        epoch_index=1000,
    )
    with pytest.raises(_Undone), transaction.atomic():
        first.save()
        _insert_fails(second)
        raise _Undone


def test_epoch_open_entries_share_null_slots_and_seeds(table):
    opening = RollEntry.objects.get(campaign=table.campaign, seq=0)
    assert (opening.epoch_index, opening.client_seed) == (None, None)
    assert _insert_then_undo(_copy(opening, seq=5, epoch=2, epoch_index=None, client_seed=None)) == 2


def test_saving_a_stored_entry_again_is_refused(table):
    entry = roll(table)
    entry.purpose = "Otra cosa"
    with pytest.raises(ImmutableEntryError, match="^Las entradas del registro de tiradas no se modifican.$"):
        entry.save()
    assert RollEntry.objects.get(pk=entry.pk).purpose == "Tirada"


def test_deleting_an_entry_is_refused(table):
    entry = roll(table)
    with pytest.raises(ImmutableEntryError, match="^Las entradas del registro de tiradas no se borran.$"):
        entry.delete()
    assert RollEntry.objects.filter(pk=entry.pk).exists()


def test_queryset_update_and_delete_are_refused(table):
    roll(table)
    entries = RollEntry.objects.filter(campaign=table.campaign)
    with pytest.raises(ImmutableEntryError):
        entries.update(purpose="x")
    with pytest.raises(ImmutableEntryError):
        RollEntry.objects.update(purpose="x")
    with pytest.raises(ImmutableEntryError):
        entries.delete()
    with pytest.raises(ImmutableEntryError), transaction.atomic():
        RollEntry.objects.bulk_update(list(entries), ["purpose"])
    assert sorted(entries.values_list("purpose", flat=True)) == ["", "Tirada"]


def test_entry_methods_that_change_data_cannot_be_called_from_templates():
    assert RollEntry.save.alters_data is True
    assert RollEntry.delete.alters_data is True


@needs_postgresql
@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE rolls_rollentry SET purpose = 'amañada' WHERE id = %s",
        "UPDATE rolls_rollentry SET entry_bytes = entry_bytes WHERE id = %s",
        "DELETE FROM rolls_rollentry WHERE id = %s",
    ],
)
def test_postgresql_trigger_refuses_raw_update_and_delete(table, sql):
    entry = roll(table)
    with pytest.raises(DatabaseError, match="rolls_rollentry is append-only"), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(sql, [entry.pk])
    assert RollEntry.objects.get(pk=entry.pk).purpose == "Tirada"


def test_the_trigger_exists_only_where_the_database_has_triggers(db):
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT tgname FROM pg_trigger WHERE tgname = 'rolls_rollentry_append_only'")
            assert cursor.fetchall() == [("rolls_rollentry_append_only",)]
        else:
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
            assert cursor.fetchall() == []
