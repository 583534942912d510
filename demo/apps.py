from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The demo campaigns ``make run`` loads (``manage.py load_demo``): kept out
    of the production apps, above them all, so it may use every one."""

    name = "demo"
    verbose_name = "Demo"
