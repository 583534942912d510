from django.db import migrations, models


class Migration(migrations.Migration):
    """Each notification keeps its text in every language of the site, so a
    list or a digest shows it in the reader's language of the moment. Older
    notifications have none and keep showing their single text."""

    dependencies = [
        ("campaigns", "0006_notification_kind_report"),
    ]

    operations = [
        migrations.AddField(
            model_name="notification",
            name="texts",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
