from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TableConfig(AppConfig):
    name = "table"
    verbose_name = _("Mesa de juego")

    def ready(self) -> None:
        from campaigns import signals
        from rolls import presenters
        from table import cards, checks, events  # noqa: F401 (checks registers itself)

        signals.scene_created.connect(events.scene_created, dispatch_uid="table.scene_started")
        presenters.register(cards.permalink_card, cards.log_cards, cards.badge_line)

        from campaigns import extensions
        from table import feeds

        # A post's feed entry lists its rolls, each with its permalink.
        extensions.provide_feed_extras(feeds.roll_lines)

        from campaigns import versions
        from table.models import RollRequest, TableRoll

        # A roll made, re-rolled or extended changes its scene's page.
        versions.track(TableRoll, lambda table_roll: table_roll.scene_id)
        # So does a GM's request for a roll (asked, answered, cancelled): the
        # page shows the open ones.
        versions.track(RollRequest, lambda roll_request: roll_request.scene_id)
