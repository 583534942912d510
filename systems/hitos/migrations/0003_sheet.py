"""The HITOS sheet leaves the shared character (issue 12).

``HitosSheet`` is a new table, filled from the columns ``sheets.Character``
had (``sheets`` 0002 then drops them). Skills, weapons and aspects keep their
rows: only their model moves here (``sheets`` 0002 renames their tables), so
this migration changes no table for them, nor for the activation's aspect.
"""

import django.core.validators
import django.db.models.deletion
from django.db import migrations, models


def copy_sheets(apps, schema_editor):
    Character = apps.get_model("sheets", "Character")
    HitosSheet = apps.get_model("hitos", "HitosSheet")
    HitosSheet.objects.bulk_create(
        HitosSheet(character_id=character.pk, **{name: getattr(character, name) for name in SHEET_FIELDS})
        for character in Character.objects.all().iterator()
    )


def copy_back(apps, schema_editor):
    Character = apps.get_model("sheets", "Character")
    for sheet in apps.get_model("hitos", "HitosSheet").objects.all().iterator():
        Character.objects.filter(pk=sheet.character_id).update(**{name: getattr(sheet, name) for name in SHEET_FIELDS})


SHEET_FIELDS = (
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


class Migration(migrations.Migration):
    dependencies = [
        ("hitos", "0002_initial"),
        ("sheets", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="HitosSheet",
            fields=[
                (
                    "character",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="hitos",
                        serialize=False,
                        to="sheets.character",
                    ),
                ),
                ("cita", models.CharField(blank=True, max_length=300, verbose_name="cita")),
                (
                    "fortaleza",
                    models.PositiveSmallIntegerField(
                        default=5,
                        validators=[
                            django.core.validators.MinValueValidator(1),
                            django.core.validators.MaxValueValidator(10),
                        ],
                        verbose_name="Fortaleza",
                    ),
                ),
                (
                    "reflejos",
                    models.PositiveSmallIntegerField(
                        default=5,
                        validators=[
                            django.core.validators.MinValueValidator(1),
                            django.core.validators.MaxValueValidator(10),
                        ],
                        verbose_name="Reflejos",
                    ),
                ),
                (
                    "voluntad",
                    models.PositiveSmallIntegerField(
                        default=5,
                        validators=[
                            django.core.validators.MinValueValidator(1),
                            django.core.validators.MaxValueValidator(10),
                        ],
                        verbose_name="Voluntad",
                    ),
                ),
                (
                    "intelecto",
                    models.PositiveSmallIntegerField(
                        default=5,
                        validators=[
                            django.core.validators.MinValueValidator(1),
                            django.core.validators.MaxValueValidator(10),
                        ],
                        verbose_name="Intelecto",
                    ),
                ),
                (
                    "drama",
                    models.PositiveSmallIntegerField(
                        default=5, validators=[django.core.validators.MaxValueValidator(20)], verbose_name="Drama"
                    ),
                ),
                ("drama_points", models.PositiveSmallIntegerField(default=5, verbose_name="puntos dramáticos")),
                (
                    "degeneracion",
                    models.PositiveSmallIntegerField(
                        default=0,
                        validators=[django.core.validators.MaxValueValidator(10)],
                        verbose_name="Degeneración",
                    ),
                ),
                ("armour", models.CharField(blank=True, max_length=120, verbose_name="armadura")),
                (
                    "rd",
                    models.PositiveSmallIntegerField(
                        default=0, validators=[django.core.validators.MaxValueValidator(20)], verbose_name="RD"
                    ),
                ),
                ("damage_code", models.CharField(blank=True, max_length=20, verbose_name="código de daño")),
                ("secuelas", models.JSONField(blank=True, default=list, verbose_name="secuelas")),
                ("health_slashes", models.PositiveSmallIntegerField(default=0)),
                ("health_crosses", models.PositiveSmallIntegerField(default=0)),
                ("mental_slashes", models.PositiveSmallIntegerField(default=0)),
                ("mental_crosses", models.PositiveSmallIntegerField(default=0)),
                (
                    "budget_accepted",
                    models.BooleanField(
                        default=False, verbose_name="la dirección acepta las desviaciones del presupuesto"
                    ),
                ),
            ],
            options={
                "verbose_name": "ficha de HITOS",
                "verbose_name_plural": "fichas de HITOS",
            },
        ),
        migrations.RunPython(copy_sheets, copy_back),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Aspect",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "kind",
                            models.CharField(
                                choices=[
                                    ("concept", "Concepto"),
                                    ("trait", "Rasgo"),
                                    ("hito", "Hito"),
                                    ("complication", "Complicación"),
                                    ("temporary", "Aspecto temporal"),
                                ],
                                max_length=12,
                                verbose_name="tipo",
                            ),
                        ),
                        ("characteristic", models.CharField(blank=True, max_length=10)),
                        ("phrase", models.CharField(max_length=200, verbose_name="aspecto")),
                        ("position", models.PositiveSmallIntegerField(default=0)),
                        (
                            "duration",
                            models.CharField(
                                blank=True,
                                choices=[("scene", "Escena"), ("session", "Sesión"), ("story", "Historia")],
                                max_length=8,
                                verbose_name="duración",
                            ),
                        ),
                        ("origin", models.CharField(blank=True, max_length=200, verbose_name="origen")),
                        (
                            "exhausted_until",
                            models.CharField(
                                blank=True,
                                choices=[("scene", "Escena"), ("session", "Sesión"), ("story", "Historia")],
                                max_length=8,
                                verbose_name="agotado hasta",
                            ),
                        ),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("ended_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "character",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="aspects",
                                to="sheets.character",
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "aspecto",
                        "verbose_name_plural": "aspectos",
                        "ordering": ["kind", "position", "id"],
                    },
                ),
                migrations.CreateModel(
                    name="Skill",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("name", models.CharField(max_length=80, verbose_name="habilidad")),
                        (
                            "category",
                            models.CharField(
                                choices=[
                                    ("forma_fisica", "Forma Física"),
                                    ("combate", "Combate"),
                                    ("interaccion", "Interacción"),
                                    ("percepcion", "Percepción"),
                                    ("subterfugio", "Subterfugio"),
                                    ("cultura", "Cultura"),
                                    ("profesion", "Profesión"),
                                    ("ocultismo", "Ocultismo"),
                                    ("arcana", "Habilidad Arcana"),
                                ],
                                max_length=16,
                                verbose_name="categoría",
                            ),
                        ),
                        (
                            "value",
                            models.PositiveSmallIntegerField(
                                validators=[django.core.validators.MaxValueValidator(10)], verbose_name="valor"
                            ),
                        ),
                        (
                            "character",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="skills",
                                to="sheets.character",
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "habilidad",
                        "verbose_name_plural": "habilidades",
                        "ordering": ["id"],
                    },
                ),
                migrations.CreateModel(
                    name="Weapon",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("name", models.CharField(max_length=80, verbose_name="arma")),
                        ("damage_code", models.CharField(max_length=20, verbose_name="código de daño")),
                        ("melee", models.BooleanField(default=True, verbose_name="cuerpo a cuerpo")),
                        ("notes", models.CharField(blank=True, max_length=200, verbose_name="notas")),
                        (
                            "character",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="weapons",
                                to="sheets.character",
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "arma",
                        "verbose_name_plural": "armas",
                        "ordering": ["id"],
                    },
                ),
                migrations.AlterField(
                    model_name="activation",
                    name="aspect",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="hitos.aspect",
                    ),
                ),
            ],
        ),
    ]
