import secrets

from django.db import migrations, models

import campaigns.models


def _a_key_for_each(apps, schema_editor) -> None:
    """Adding the column gave every existing campaign the same key: each gets its own."""
    Campaign = apps.get_model("campaigns", "Campaign")
    for campaign in Campaign.objects.only("pk").iterator():
        Campaign.objects.filter(pk=campaign.pk).update(gm_feed_key=secrets.token_urlsafe(24))


class Migration(migrations.Migration):
    """The secret behind the GM's private Atom feed."""

    dependencies = [
        ("campaigns", "0007_notification_texts"),
    ]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="gm_feed_key",
            field=models.CharField(default=campaigns.models._token, editable=False, max_length=40),
        ),
        migrations.RunPython(_a_key_for_each, migrations.RunPython.noop),
    ]
