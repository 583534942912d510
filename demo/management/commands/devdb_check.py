"""Before ``make run`` migrates: is the development database from before a
reshaping of the migrations?

No release has been deployed, so a change of layout may replace the apps'
migrations with fresh ones (issue 12 did). A database migrated with the old
ones has applied migrations that no longer exist on disk, and ``migrate``
would fail or leave it half-made. This command finds that case and says so;
for the embedded SQLite default it puts the old file aside (renamed, never
deleted) so that ``make run`` builds a fresh database with the demo.
"""

from __future__ import annotations

from pathlib import Path

from django.apps import apps
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.utils import timezone


def stale_migrations() -> list[tuple[str, str]]:
    """Migrations of this project's apps the database says it applied but that
    are not on disk any more (empty for a fresh or current database)."""
    loader = MigrationLoader(connection, ignore_no_migrations=True)
    ours = {
        config.label
        for config in apps.get_app_configs()
        if Path(config.path).resolve().is_relative_to(Path(settings.BASE_DIR).resolve())
    }
    return sorted(key for key in loader.applied_migrations if key[0] in ours and key not in loader.disk_migrations)


class Command(BaseCommand):
    help = (
        "Comprueba si la base de datos de desarrollo es de antes de que se rehicieran las migraciones "
        "y, con SQLite, la aparta para crear una nueva."
    )

    def handle(self, *args, **options) -> None:
        stale = stale_migrations()
        if not stale:
            return
        names = ", ".join(f"{app}.{name}" for app, name in stale[:5]) + (" …" if len(stale) > 5 else "")
        database = connection.settings_dict
        if database["ENGINE"] != "django.db.backends.sqlite3":
            raise CommandError(
                f"La base de datos «{database['NAME']}» es de una versión anterior del esquema: tiene aplicadas "
                f"migraciones que ya no existen ({names}). Hay que crearla de nuevo (vacía) y volver a migrar."
            )
        old = Path(database["NAME"])
        connection.close()
        kept = old.with_name(f"{old.stem}-anterior-{timezone.now():%Y%m%d-%H%M%S}{old.suffix}")
        old.rename(kept)
        self.stdout.write(
            self.style.WARNING(
                f"La base de datos de desarrollo era de una versión anterior del esquema (migraciones que ya no "
                f"existen: {names}). Se guarda como {kept} y se crea una nueva con la partida de demostración."
            )
        )
