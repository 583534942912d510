"""Startup checks of the game-system registry (``table.systems``)."""

from django.apps import apps
from django.core.checks import Error, register


@register()
def game_systems(app_configs=None, **kwargs) -> list[Error]:
    """Every app that offers a game system on the campaign form registered
    one with the table, and the other way round."""
    from table import systems

    offered = {config.system_key: config.name for config in apps.get_app_configs() if getattr(config, "system_key", "")}
    registered = {system.key for system in systems.installed()}
    errors = [
        Error(f"{name} offers the game system {key!r} but registers none with the table.", id="table.E001")
        for key, name in sorted(offered.items())
        if key not in registered
    ]
    errors += [
        Error(f"The game system {key!r} is registered but no app offers it on the campaign form.", id="table.E002")
        for key in sorted(registered - offered.keys())
    ]
    return errors
