from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SheetsConfig(AppConfig):
    name = "sheets"
    verbose_name = _("Fichas")

    def ready(self) -> None:
        from campaigns import extensions
        from sheets import pages

        extensions.provide("campaign_page", pages.campaign_page)
        extensions.provide("dashboard", pages.dashboard)

        from campaigns import fragments
        from sheets.models import CampaignSheetOptions, Character, SheetEvent

        # The cached pages show the sheets; every change to one is logged as a SheetEvent.
        for model in (Character, CampaignSheetOptions, SheetEvent):
            fragments.track(model, lambda row: [fragments.campaign_scope(row.campaign_id)])
