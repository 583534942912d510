"""On PostgreSQL a campaign's log head (rolls_campaignlog) only ever moves to
the entry appended after it, and an entry is kept only once the head names
the campaign's last entry, for every role (issue 29, item 4).

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

And a constraint trigger on rolls_rollentry, deferred to the commit, refuses
a transaction that leaves an entry its campaign's head does not lead to: the
head must exist and name the last entry (seq and hash; the head's own trigger
checked the rest when it was written). An append, the opening of a log and
an epoch's rollover insert their entries and then move the head in the same
transaction, so they commit; a stray entry inserted without moving the head
(which would stop every page of the campaign) does not.

Both functions run with a fixed search_path, the tables' schema as it was
when this migration ran (``current_schema()``) and ``pg_temp`` last: without
it the site's role could put a temporary table named rolls_rollentry in
front of the real one, and the trigger would check the head against it.

DELETE and TRUNCATE of a head were already refused (0003). The migration
installs the triggers only on PostgreSQL: on SQLite (the development default)
none is installed, and the site's own check stops a head that does not name
the last entry (``rolls.models.LogHeadMismatch``).
"""

from django.db import migrations

HEAD_FUNCTION = """
CREATE OR REPLACE FUNCTION {schema}.rollog_head_moves_forward() RETURNS trigger
SET search_path = pg_catalog, {schema}, pg_temp
AS $$
DECLARE
    last record;
    next_slot bigint;
BEGIN
    SELECT seq, entry_hash, time, kind, epoch, epoch_index INTO last
    FROM {schema}.rolls_rollentry WHERE campaign_id = NEW.campaign_id ORDER BY seq DESC LIMIT 1;
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

ENTRY_FUNCTION = """
CREATE OR REPLACE FUNCTION {schema}.rollog_entry_behind_head() RETURNS trigger
SET search_path = pg_catalog, {schema}, pg_temp
AS $$
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM {schema}.rolls_campaignlog h
        JOIN {schema}.rolls_rollentry e ON e.campaign_id = h.campaign_id AND e.seq = h.seq AND e.entry_hash = h.head_hash
        WHERE h.campaign_id = NEW.campaign_id
          AND NOT EXISTS (SELECT 1 FROM {schema}.rolls_rollentry a WHERE a.campaign_id = h.campaign_id AND a.seq > h.seq)
    ) THEN
        RAISE EXCEPTION 'rolls_rollentry: an entry is kept only when its campaign''s log head names the last entry: entry % of campaign % refused',
            NEW.seq, NEW.campaign_id;
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
"""

TRIGGERS = """
CREATE TRIGGER rolls_campaignlog_moves_forward BEFORE INSERT OR UPDATE ON {schema}.rolls_campaignlog
    FOR EACH ROW EXECUTE FUNCTION {schema}.rollog_head_moves_forward();
CREATE CONSTRAINT TRIGGER rolls_rollentry_behind_head AFTER INSERT ON {schema}.rolls_rollentry
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION {schema}.rollog_entry_behind_head();
"""

DROP = """
DROP TRIGGER IF EXISTS rolls_rollentry_behind_head ON {schema}.rolls_rollentry;
DROP FUNCTION IF EXISTS {schema}.rollog_entry_behind_head();
DROP TRIGGER IF EXISTS rolls_campaignlog_moves_forward ON {schema}.rolls_campaignlog;
DROP FUNCTION IF EXISTS {schema}.rollog_head_moves_forward();
"""


def _schema(schema_editor) -> str:
    """The schema the tables were created in (the migration's current one), quoted."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT current_schema()")
        [(schema,)] = cursor.fetchall()
    return schema_editor.quote_name(schema)


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        sql = HEAD_FUNCTION + ENTRY_FUNCTION + TRIGGERS
        schema_editor.execute(sql.format(schema=_schema(schema_editor)), params=None)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP.format(schema=_schema(schema_editor)), params=None)


class Migration(migrations.Migration):
    dependencies = [("rolls", "0004_checkpoints")]

    operations = [migrations.RunPython(create, drop)]
