"""Deployment checks (``manage.py check --deploy``) of what the cached pages
need: every web process must see the same versions (``campaigns.versions``,
``campaigns.fragments``)."""

from django.conf import settings
from django.core.checks import Tags, Warning, register


@register(Tags.caches, deploy=True)
def shared_cache(app_configs=None, **kwargs) -> list[Warning]:
    """The per-process cache keeps each process's own versions of the
    scenes and campaigns: a change made through one process moves only its
    own, and another process may serve the page as it was for up to
    ``FRAGMENT_SECONDS``. Fine for one process (with threads); several
    need the shared cache (``REDIS_URL``)."""
    backend = settings.CACHES["default"]["BACKEND"]
    if backend.endswith("LocMemCache"):
        return [
            Warning(
                "The cache is per process (REDIS_URL is not set).",
                hint="Run one web process (e.g. gunicorn --workers 1 --threads 8), or set REDIS_URL so that "
                "every process sees each change at once (docs/deploy.md).",
                id="campaigns.W001",
            )
        ]
    return []
