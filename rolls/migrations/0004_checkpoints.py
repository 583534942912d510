"""The daily signed checkpoints of every campaign's head and the members who
asked for them by e-mail. On PostgreSQL the checkpoints are append-only like
the log (the trigger function of 0003)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

TRIGGERS = """
CREATE TRIGGER rolls_checkpoint_append_only BEFORE UPDATE OR DELETE ON rolls_checkpoint
    FOR EACH ROW EXECUTE FUNCTION rollog_refuse_change();
CREATE TRIGGER rolls_checkpoint_no_truncate BEFORE TRUNCATE ON rolls_checkpoint
    FOR EACH STATEMENT EXECUTE FUNCTION rollog_refuse_change();
"""

DROP = """
DROP TRIGGER IF EXISTS rolls_checkpoint_no_truncate ON rolls_checkpoint;
DROP TRIGGER IF EXISTS rolls_checkpoint_append_only ON rolls_checkpoint;
"""


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(TRIGGERS, params=None)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("campaigns", "0009_absences_deadlines_pace"),
        ("rolls", "0003_append_only"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Checkpoint",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("date", models.DateField()),
                ("seq", models.BigIntegerField()),
                ("head_hash", models.CharField(max_length=64)),
                ("body", models.BinaryField()),
                ("signature", models.BinaryField()),
                ("created", models.DateTimeField(auto_now_add=True)),
                (
                    "campaign",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="roll_checkpoints",
                        to="campaigns.campaign",
                    ),
                ),
            ],
            options={
                "ordering": ["campaign", "-date"],
                "constraints": [models.UniqueConstraint(fields=("campaign", "date"), name="checkpoint_unique_day")],
            },
        ),
        migrations.CreateModel(
            name="CheckpointSubscription",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("created", models.DateTimeField(auto_now_add=True)),
                ("last_sent_on", models.DateField(blank=True, null=True)),
                (
                    "campaign",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="checkpoint_subscriptions",
                        to="campaigns.campaign",
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="checkpoint_subscriptions",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("user", "campaign"), name="checkpointsubscription_unique")
                ],
            },
        ),
        migrations.RunPython(create, drop),
    ]
