"""On PostgreSQL a campaign's log head (rolls_campaignlog) only ever moves to
the entry appended after it, for every role (issue 29, item 4).

Before, the site's role could UPDATE a head to a lower seq (its one UPDATE
grant, docs/deploy.md), after which every roll of the campaign failed. Now a
BEFORE INSERT OR UPDATE trigger lets a head row be written only when it names
its campaign's last entry, as the append service leaves it:

- its seq, head_hash and head_time are those of the campaign's entry with
  the highest seq (which therefore exists: an append inserts the entry
  before it moves the head, in the same transaction);
- its epoch and next_index follow from that entry: an epoch_open starts its
  epoch at slot 1, any other entry used slot ``epoch_index`` of its epoch,
  so the next slot is the one after it;
- an UPDATE keeps the campaign and its log id and moves seq by exactly one.

DELETE and TRUNCATE of a head were already refused (0003). SQLite (the
development default) has no trigger; there the site's own check stops a head
that does not name the last entry (``rolls.models.LogHeadMismatch``).
"""

from django.db import migrations

FUNCTION = """
CREATE OR REPLACE FUNCTION rollog_head_moves_forward() RETURNS trigger AS $$
DECLARE
    last record;
    next_slot bigint;
BEGIN
    SELECT seq, entry_hash, time, kind, epoch, epoch_index INTO last
    FROM rolls_rollentry WHERE campaign_id = NEW.campaign_id ORDER BY seq DESC LIMIT 1;
    next_slot := CASE WHEN last.kind = 'epoch_open' THEN 1 ELSE last.epoch_index + 1 END;
    IF last.seq IS NULL
        OR (NEW.seq, NEW.head_hash, NEW.head_time, NEW.epoch, NEW.next_index)
            IS DISTINCT FROM (last.seq, last.entry_hash, last.time, last.epoch, next_slot)
        OR (TG_OP = 'UPDATE' AND (
            NEW.campaign_id <> OLD.campaign_id OR NEW.log_id <> OLD.log_id OR NEW.seq <> OLD.seq + 1))
    THEN
        RAISE EXCEPTION 'rolls_campaignlog: the head of a campaign''s roll log moves only to the entry appended after it: % refused (campaign %, seq % to %)',
            TG_OP, NEW.campaign_id, CASE WHEN TG_OP = 'UPDATE' THEN OLD.seq END, NEW.seq;
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""

TRIGGER = """
CREATE TRIGGER rolls_campaignlog_moves_forward BEFORE INSERT OR UPDATE ON rolls_campaignlog
    FOR EACH ROW EXECUTE FUNCTION rollog_head_moves_forward();
"""

DROP = """
DROP TRIGGER IF EXISTS rolls_campaignlog_moves_forward ON rolls_campaignlog;
DROP FUNCTION IF EXISTS rollog_head_moves_forward();
"""


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(FUNCTION + TRIGGER, params=None)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [("rolls", "0004_checkpoints")]

    operations = [migrations.RunPython(create, drop)]
