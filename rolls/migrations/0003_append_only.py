"""On PostgreSQL the roll log's tables refuse what the site never does, so not
even raw SQL from the application can rewrite history: entries, seed epochs
and reveals are never updated or deleted, a campaign's head row
(rolls_campaignlog) moves on every append but is never deleted, and none of
them may be truncated. SQLite (the development default) relies on the
models' own refusal.

Triggers stop every role, the tables' owner included, until the owner disables
them; the role the site connects with does not own the tables and so cannot
(docs/deploy.md sets the two roles up).

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
CREATE TRIGGER rolls_rollentry_append_only BEFORE UPDATE OR DELETE ON rolls_rollentry
    FOR EACH ROW EXECUTE FUNCTION rollog_refuse_change();
CREATE TRIGGER rolls_rollentry_no_truncate BEFORE TRUNCATE ON rolls_rollentry
    FOR EACH STATEMENT EXECUTE FUNCTION rollog_refuse_change();
CREATE TRIGGER rolls_seedepoch_append_only BEFORE UPDATE OR DELETE ON rolls_seedepoch
    FOR EACH ROW EXECUTE FUNCTION rollog_refuse_change();
CREATE TRIGGER rolls_seedepoch_no_truncate BEFORE TRUNCATE ON rolls_seedepoch
    FOR EACH STATEMENT EXECUTE FUNCTION rollog_refuse_change();
CREATE TRIGGER rolls_campaignlog_no_delete BEFORE DELETE ON rolls_campaignlog
    FOR EACH ROW EXECUTE FUNCTION rollog_refuse_change();
CREATE TRIGGER rolls_campaignlog_no_truncate BEFORE TRUNCATE ON rolls_campaignlog
    FOR EACH STATEMENT EXECUTE FUNCTION rollog_refuse_change();
CREATE TRIGGER rolls_rollreveal_append_only BEFORE UPDATE OR DELETE ON rolls_rollreveal
    FOR EACH ROW EXECUTE FUNCTION rollog_refuse_change();
CREATE TRIGGER rolls_rollreveal_no_truncate BEFORE TRUNCATE ON rolls_rollreveal
    FOR EACH STATEMENT EXECUTE FUNCTION rollog_refuse_change();
"""

DROP = """
DROP TRIGGER IF EXISTS rolls_rollreveal_no_truncate ON rolls_rollreveal;
DROP TRIGGER IF EXISTS rolls_rollreveal_append_only ON rolls_rollreveal;
DROP TRIGGER IF EXISTS rolls_campaignlog_no_truncate ON rolls_campaignlog;
DROP TRIGGER IF EXISTS rolls_campaignlog_no_delete ON rolls_campaignlog;
DROP TRIGGER IF EXISTS rolls_seedepoch_no_truncate ON rolls_seedepoch;
DROP TRIGGER IF EXISTS rolls_seedepoch_append_only ON rolls_seedepoch;
DROP TRIGGER IF EXISTS rolls_rollentry_no_truncate ON rolls_rollentry;
DROP TRIGGER IF EXISTS rolls_rollentry_append_only ON rolls_rollentry;
DROP FUNCTION IF EXISTS rollog_refuse_change();
"""


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(FUNCTION + TRIGGERS, params=None)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [("rolls", "0002_initial")]

    operations = [migrations.RunPython(create, drop)]
