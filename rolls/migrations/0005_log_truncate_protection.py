"""On PostgreSQL the roll log's tables refuse TRUNCATE, and their rows refuse
the changes the site never makes: a seed epoch is never updated or deleted,
a campaign's head row (rolls_campaignlog) moves on every append but is never
deleted. 0002 already refuses UPDATE and DELETE of rolls_rollentry.

Triggers stop every role, the tables' owner included, until the owner disables
them; the role the site connects with does not own the tables and so cannot
(docs/deploy.md sets the two roles up). SQLite relies on the models.

``rollog_refuse_change()`` names the table and the operation itself, so a
later migration attaches it to another append-only table as it is:

    CREATE TRIGGER <table>_append_only BEFORE UPDATE OR DELETE ON <table>
        FOR EACH ROW EXECUTE FUNCTION rollog_refuse_change();
    CREATE TRIGGER <table>_no_truncate BEFORE TRUNCATE ON <table>
        FOR EACH STATEMENT EXECUTE FUNCTION rollog_refuse_change();
"""

from django.db import migrations

FUNCTION = """
CREATE OR REPLACE FUNCTION rollog_refuse_change() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP;
END;
$$ LANGUAGE plpgsql;
"""

TRIGGERS = """
CREATE TRIGGER rolls_rollentry_no_truncate BEFORE TRUNCATE ON rolls_rollentry
    FOR EACH STATEMENT EXECUTE FUNCTION rollog_refuse_change();
CREATE TRIGGER rolls_seedepoch_no_truncate BEFORE TRUNCATE ON rolls_seedepoch
    FOR EACH STATEMENT EXECUTE FUNCTION rollog_refuse_change();
CREATE TRIGGER rolls_campaignlog_no_truncate BEFORE TRUNCATE ON rolls_campaignlog
    FOR EACH STATEMENT EXECUTE FUNCTION rollog_refuse_change();
CREATE TRIGGER rolls_seedepoch_append_only BEFORE UPDATE OR DELETE ON rolls_seedepoch
    FOR EACH ROW EXECUTE FUNCTION rollog_refuse_change();
CREATE TRIGGER rolls_campaignlog_no_delete BEFORE DELETE ON rolls_campaignlog
    FOR EACH ROW EXECUTE FUNCTION rollog_refuse_change();
"""

# Later migrations may attach the function to their own tables: dropping it
# fails while they are applied, as it should.
DROP = """
DROP TRIGGER IF EXISTS rolls_campaignlog_no_delete ON rolls_campaignlog;
DROP TRIGGER IF EXISTS rolls_seedepoch_append_only ON rolls_seedepoch;
DROP TRIGGER IF EXISTS rolls_campaignlog_no_truncate ON rolls_campaignlog;
DROP TRIGGER IF EXISTS rolls_seedepoch_no_truncate ON rolls_seedepoch;
DROP TRIGGER IF EXISTS rolls_rollentry_no_truncate ON rolls_rollentry;
DROP FUNCTION IF EXISTS rollog_refuse_change();
"""


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(FUNCTION + TRIGGERS, params=None)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [("rolls", "0004_activation_forced_payment")]

    operations = [migrations.RunPython(create, drop)]
