from django.apps import AppConfig


class HitosConfig(AppConfig):
    name = "systems.hitos"
    label = "hitos"
    verbose_name = "HITOS"
