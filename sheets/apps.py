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
