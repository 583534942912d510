from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class VaesenConfig(AppConfig):
    name = "systems.vaesen"
    label = "vaesen"
    verbose_name = "Vaesen"
    # What the campaign form offers (campaigns.models.system_choices).
    system_key = "vaesen"
    system_label = _("Estilo Vaesen (reserva de d6)")

    def ready(self) -> None:
        from sheets import kinds
        from systems.vaesen.models import VaesenEvent
        from systems.vaesen.sheet.views import PAGES
        from systems.vaesen.system import Vaesen
        from table import systems

        systems.register(Vaesen())
        kinds.register(kinds.SheetKind(self.system_key, PAGES, events=tuple(VaesenEvent.choices)))

        from campaigns import extensions
        from systems.vaesen.archive import OPTIONS_PART, SHEETS_PART
        from systems.vaesen.options import pages

        # The GM's dashboard links to the campaign's Vaesen options.
        extensions.provide("dashboard", pages.dashboard)
        # The campaign archive: this game's sheets.
        extensions.provide_archive_part(SHEETS_PART)
        # ... and the rules options an archived campaign brings are checked as the options page would.
        extensions.provide_archive_part(OPTIONS_PART)

        from campaigns import fragments
        from sheets.models import Character
        from systems.vaesen.models import VaesenInjury, VaesenItem, VaesenSheet, VaesenWeapon

        # What the cached pages (the sheet) show of Vaesen.
        fragments.track(
            VaesenSheet,
            lambda row: [fragments.campaign_scope(fragments.related_id(row, "character", "campaign_id"))],
        )

        def of_sheet(row):
            # A sheet's row: its sheet's primary key is its character's.
            campaign_id = Character.objects.filter(pk=row.sheet_id).values_list("campaign_id", flat=True).first()
            return [fragments.campaign_scope(campaign_id)]

        for model in (VaesenItem, VaesenWeapon, VaesenInjury):
            fragments.track(model, of_sheet)

        from systems.vaesen.models import VaesenAction, VaesenCombat, VaesenCombatant

        # What the cached combat page shows (the rolls' TableRoll rows are tracked already).
        fragments.track(VaesenCombat, lambda row: [fragments.campaign_scope(row.campaign_id)])
        for model in (VaesenCombatant, VaesenAction):
            fragments.track(
                model, lambda row: [fragments.campaign_scope(fragments.related_id(row, "combat", "campaign_id"))]
            )

        from systems.vaesen.combat import reactions, turns

        # Whose turn it is and its deadline, and the reactions waited for and theirs (issue 17).
        turns.register()
        reactions.register()
