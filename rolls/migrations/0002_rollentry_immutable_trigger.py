"""On PostgreSQL a trigger refuses UPDATE and DELETE of roll log entries, so
not even raw SQL from the application can rewrite history. SQLite (the
development default) relies on the model's own refusal."""

from django.db import migrations

CREATE = """
CREATE OR REPLACE FUNCTION rolls_rollentry_refuse_change() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'rolls_rollentry is append-only: % refused', TG_OP;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER rolls_rollentry_append_only
    BEFORE UPDATE OR DELETE ON rolls_rollentry
    FOR EACH ROW EXECUTE FUNCTION rolls_rollentry_refuse_change();
"""

DROP = """
DROP TRIGGER IF EXISTS rolls_rollentry_append_only ON rolls_rollentry;
DROP FUNCTION IF EXISTS rolls_rollentry_refuse_change();
"""


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE, params=None)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [("rolls", "0001_initial")]

    operations = [migrations.RunPython(create, drop)]
