from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RollsConfig(AppConfig):
    name = "rolls"
    verbose_name = _("Tiradas")

    def ready(self) -> None:
        from datetime import time

        from campaigns import daily, extensions, signals
        from rolls import audit, pages

        # Every night the worker re-verifies every stored log.
        daily.register(audit.audit_logs, at=time(4, 0))

        from rolls import checkpoints

        # The signed checkpoint of every log's head, each UTC day, and its e-mails.
        # Hourly: the first run after midnight UTC writes the day's (summer time
        # moves a local hour), the others find it written.
        daily.register_every(checkpoints.daily_checkpoints, every=checkpoints.EVERY)
        # E-mails and feeds print the head of the log (the forum cannot import rolls).
        extensions.provide_log_heads(checkpoints.log_heads)

        signals.campaign_created.connect(pages.campaign_created, dispatch_uid="rolls.log_open")

        from campaigns import versions
        from rolls.models import RollEntry, RollReveal

        # A revealed roll is shown to the scene's readers.
        versions.track(
            RollReveal,
            lambda reveal: RollEntry.objects.filter(pk=reveal.entry_id).values_list("scene_id", flat=True).first(),
        )
        extensions.provide("campaign_page", pages.campaign_page)

        from rolls.archive import ARCHIVE_SEAL, ROLLS_PART

        # The campaign archive carries every roll its reader may read, with its signed bundle.
        extensions.provide_archive_part(ROLLS_PART)
        # ... and the whole archive is signed with the site's key.
        extensions.provide_archive_seal(ARCHIVE_SEAL)

        from campaigns import fragments

        # A revealed roll shows in the cached log and permalink pages (new
        # entries move the log's head, which their keys hold).
        fragments.track(
            RollReveal, lambda reveal: [fragments.campaign_scope(fragments.related_id(reveal, "entry", "campaign_id"))]
        )
