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
        from sheets import rolling
        from systems.hitos.health import meter_check
        from systems.hitos.options import pages
        from systems.hitos.system import Hitos
        from table import systems

        systems.register(Hitos())
        rolling.register(meter_check)
        extensions.provide("dashboard", pages.dashboard)
