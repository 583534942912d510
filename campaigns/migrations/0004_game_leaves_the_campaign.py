"""The forum's campaign keeps no game's columns (issue 12).

HITOS's three columns move into the campaign's own JSON: the GM's pool of
drama points into the new ``game_state``, the two table settings (players
mark their own meters, the deadline for a negative activation) into
``rules_options`` beside the rules options. The situation aspects' model
moved to ``hitos`` (``hitos`` 0004); its table is renamed here.
"""

from django.db import migrations, models

SETTINGS = ("players_mark_own_meters", "activation_deadline_hours")


def forwards(apps, schema_editor):
    Campaign = apps.get_model("campaigns", "Campaign")
    for campaign in Campaign.objects.filter(system="hitos").iterator():
        campaign.game_state = {**(campaign.game_state or {}), "gm_pool": campaign.gm_drama_points}
        campaign.rules_options = {**(campaign.rules_options or {}), **{n: getattr(campaign, n) for n in SETTINGS}}
        campaign.save(update_fields=["game_state", "rules_options"])


def backwards(apps, schema_editor):
    Campaign = apps.get_model("campaigns", "Campaign")
    for campaign in Campaign.objects.all().iterator():
        options = dict(campaign.rules_options or {})
        for name in SETTINGS:
            if name in options:
                setattr(campaign, name, options.pop(name))
        campaign.rules_options = options
        campaign.gm_drama_points = (campaign.game_state or {}).get("gm_pool", 5)
        campaign.save(update_fields=["rules_options", "gm_drama_points", *SETTINGS])


class Migration(migrations.Migration):
    dependencies = [
        ("campaigns", "0003_system_default"),
        ("hitos", "0004_scene_aspects"),
    ]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="game_state",
            field=models.JSONField(blank=True, default=dict, verbose_name="estado del juego"),
        ),
        migrations.RunPython(forwards, backwards),
        migrations.RemoveField(model_name="campaign", name="activation_deadline_hours"),
        migrations.RemoveField(model_name="campaign", name="gm_drama_points"),
        migrations.RemoveField(model_name="campaign", name="players_mark_own_meters"),
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.AlterModelTable("sceneaspect", "hitos_sceneaspect")],
            state_operations=[migrations.DeleteModel("sceneaspect")],
        ),
    ]
