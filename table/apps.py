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

        from table.roll_requests import waiting as request_waiting

        # The GM's open roll requests wait for their players, and may have a deadline (issue 17).
        request_waiting.register()

        from campaigns import versions
        from table.models import RollRequest, TableRoll

        # A roll made, re-rolled or extended changes its scene's page.
        versions.track(TableRoll, lambda table_roll: table_roll.scene_id)
        # So does a GM's request for a roll (asked, answered, cancelled): the
        # page shows the open ones.
        versions.track(RollRequest, lambda roll_request: roll_request.scene_id)

        from campaigns import fragments
        from table import takeover, takeover_views
        from table.models import Takeover

        # A takeover started or ended changes the campaign's pages (the
        # owner's and the taker's panels) and who may write as the character
        # (the scene page's post form is kept under the campaign's version).
        fragments.track(Takeover, lambda row: [fragments.campaign_scope(row.campaign_id)])
        extensions.provide("dashboard", takeover_views.dashboard_panel)
        extensions.provide("campaign_page", takeover_views.campaign_panel)
        # The owner back from an absence is told what was done in their name.
        extensions.provide_return_hook(takeover.returned_lines)
