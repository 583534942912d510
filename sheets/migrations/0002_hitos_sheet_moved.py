"""The HITOS sheet leaves the shared character (issue 12): its columns were
copied to ``hitos.HitosSheet`` (``hitos`` 0003) and are dropped here; the
skills, weapons and aspects tables are renamed for the ``hitos`` app, which
now holds their models (their rows and ids stay)."""

from django.db import migrations

HITOS_COLUMNS = (
    "cita",
    "fortaleza",
    "reflejos",
    "voluntad",
    "intelecto",
    "drama",
    "drama_points",
    "degeneracion",
    "armour",
    "rd",
    "damage_code",
    "secuelas",
    "health_slashes",
    "health_crosses",
    "mental_slashes",
    "mental_crosses",
    "budget_accepted",
)
MOVED = ("skill", "weapon", "aspect")


class Migration(migrations.Migration):
    dependencies = [
        ("hitos", "0003_sheet"),
        ("sheets", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.AlterModelTable(name, f"hitos_{name}") for name in MOVED],
            state_operations=[migrations.DeleteModel(name) for name in MOVED],
        ),
        *(migrations.RemoveField(model_name="character", name=name) for name in HITOS_COLUMNS),
    ]
