from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AventurasConfig(AppConfig):
    name = "systems.aventuras"
    label = "aventuras"
    verbose_name = _("Hora de Aventuras")
    # What the campaign form offers (campaigns.models.system_choices).
    system_key = "aventuras"
    system_label = _("Hora de Aventuras")

    def ready(self) -> None:
        from sheets import kinds
        from systems.aventuras.models import AventurasEvent
        from systems.aventuras.sheet.views import PAGES
        from systems.aventuras.system import Aventuras
        from table import systems

        systems.register(Aventuras())
        # Reactions and contests resolve when a roll is settled (``signals.roll_settled``).
        from systems.aventuras.contests import receivers  # noqa: F401

        kinds.register(kinds.SheetKind(self.system_key, PAGES, events=tuple(AventurasEvent.choices)))

        from campaigns import extensions
        from systems.aventuras.archive import OPTIONS_PART, SHEETS_PART

        # The campaign archive: this game's sheets.
        extensions.provide_archive_part(SHEETS_PART)
        # ... and the rules options an archived campaign brings are checked as the options page would.
        extensions.provide_archive_part(OPTIONS_PART)

        from systems.aventuras.heroes import dashboard as heroes_dashboard

        # The GM's dashboard links to the hero point requests waiting for a decision.
        extensions.provide("dashboard", heroes_dashboard.dashboard)

        from campaigns import fragments
        from sheets.models import Character
        from systems.aventuras.models import (
            AventurasContest,
            AventurasContestant,
            AventurasFeat,
            AventurasInitiative,
            AventurasReaction,
            AventurasSheet,
            AventurasState,
            AventurasTool,
            HeroMove,
            HeroRequest,
        )

        # What the cached pages (the sheet, the scene) show of Hora de Aventuras.
        fragments.track(
            AventurasSheet,
            lambda row: [fragments.campaign_scope(fragments.related_id(row, "character", "campaign_id"))],
        )

        def of_sheet(row):
            # A sheet's row: its sheet's primary key is its character's.
            campaign_id = Character.objects.filter(pk=row.sheet_id).values_list("campaign_id", flat=True).first()
            return [fragments.campaign_scope(campaign_id)]

        for model in (AventurasFeat, AventurasTool, AventurasState):
            fragments.track(model, of_sheet)
        for model in (HeroMove, HeroRequest, AventurasContest):
            fragments.track(model, lambda row: [fragments.campaign_scope(row.campaign_id)])
        fragments.track(
            AventurasContestant,
            lambda row: [fragments.campaign_scope(fragments.related_id(row, "contest", "campaign_id"))],
        )
        fragments.track(
            AventurasReaction,
            lambda row: [fragments.campaign_scope(fragments.related_id(row, "action", "campaign_id"))],
        )
        fragments.track(
            AventurasInitiative,
            lambda row: [fragments.campaign_scope(fragments.related_id(row, "scene", "campaign_id"))],
        )

        from systems.aventuras.contests import waiting as reaction_waiting

        # Whose turn it is and the deadlines (issue 17): the open reactions.
        reaction_waiting.register()
