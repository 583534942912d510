from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class HitosConfig(AppConfig):
    name = "systems.hitos"
    label = "hitos"
    verbose_name = "HITOS"
    # What the campaign form offers (campaigns.models.system_choices).
    system_key = "hitos"
    system_label = _("HITOS")

    def ready(self) -> None:
        from campaigns import extensions
        from sheets import kinds
        from systems.hitos.models import HitosEvent
        from systems.hitos.options import pages
        from systems.hitos.scene import SCENE_FIELDS
        from systems.hitos.sheet.views import PAGES
        from systems.hitos.system import Hitos
        from table import systems

        systems.register(Hitos())
        kinds.register(kinds.SheetKind(self.system_key, PAGES, events=tuple(HitosEvent.choices)))
        extensions.provide("dashboard", pages.dashboard)
        extensions.provide_scene_fields(SCENE_FIELDS)

        from systems.hitos.archive import OPTIONS_PART, SHEETS_PART

        # The campaign archive: this game's sheets (the rolls' signed bundles
        # are a part of every campaign, registered by the rolls app).
        extensions.provide_archive_part(SHEETS_PART)
        # ... and the rules options an archived campaign brings are checked as the options page would.
        extensions.provide_archive_part(OPTIONS_PART)

        from campaigns import versions
        from systems.hitos.models import Activation, SceneAspect
        from table.models import TableRoll

        # A situation aspect shows under the scene's description.
        versions.track(SceneAspect, lambda aspect: aspect.scene_id)
        # An activation (made, answered, settled) changes its roll's card.
        versions.track(
            Activation,
            lambda activation: (
                TableRoll.objects.filter(pk=activation.table_roll_id).values_list("scene_id", flat=True).first()
            ),
        )

        from campaigns import fragments
        from systems.hitos.models import Aspect, Attack, Combat, Combatant, HitosSheet, Skill, Weapon

        # What the cached pages (the sheet, the combat) show of HITOS.
        def of(relation: str):
            return lambda row: [fragments.campaign_scope(fragments.related_id(row, relation, "campaign_id"))]

        for model in (Combat, Activation, TableRoll):
            fragments.track(model, lambda row: [fragments.campaign_scope(row.campaign_id)])
        for model in (HitosSheet, Skill, Weapon, Aspect):
            fragments.track(model, of("character"))
        for model in (Combatant, Attack):
            fragments.track(model, of("combat"))
        fragments.track(SceneAspect, of("scene"))

        from systems.hitos.activations import waiting as activation_waiting
        from systems.hitos.combat import turns

        # Whose turn it is and the deadlines (issue 17): the combat's turn and
        # round, the pending negative activations.
        turns.register()
        activation_waiting.register()
