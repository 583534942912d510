"""The situation aspects of a scene are HITOS's (issue 12): the model moves
here from ``campaigns`` (``campaigns`` 0004 renames its table), so no row
changes, nor the activation's link to it."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("campaigns", "0003_system_default"),
        ("hitos", "0003_sheet"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="SceneAspect",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("phrase", models.CharField(max_length=200, verbose_name="aspecto")),
                        ("position", models.PositiveSmallIntegerField(default=0)),
                        (
                            "scene",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="aspects",
                                to="campaigns.scene",
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "aspecto de situación",
                        "verbose_name_plural": "aspectos de situación",
                        "ordering": ["position", "id"],
                    },
                ),
                migrations.AlterField(
                    model_name="activation",
                    name="scene_aspect",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="hitos.sceneaspect",
                    ),
                ),
            ],
        ),
    ]
