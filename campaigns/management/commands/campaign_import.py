from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from accounts.models import User
from campaigns import archive
from campaigns.models import Visibility


class Command(BaseCommand):
    help = (
        "Create a NEW campaign from a campaign archive (hitos-campaign-export/2, the campaign page's "
        "«Descargar partida»), directed by --gm: its scenes, posts with their histories, the sheets the "
        "archive holds, and its rolls as archived records of their posts (never new rolls; verifiable only "
        "when signed with this site's key). An archive this site signed, unchanged, for --gm who directed it "
        "maps its authors to the users of the same username and id, and --gm re-creates the campaign as GM "
        "(--visibility, never more public than the archived one); any other archive is a private, read-only "
        "copy whose authors, editors, recipients and sheet owners (but --gm) are archived names, linked to no "
        "account. Nobody is made a member."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", help="the archive (.json)")
        parser.add_argument("--gm", required=True, help="username of the new campaign's GM")
        parser.add_argument(
            "--visibility",
            choices=Visibility.values,
            default=Visibility.PRIVATE,
            help="the new campaign's visibility, when --gm directed the archived campaign (private by default)",
        )

    def handle(self, *args, **options) -> None:
        try:
            gm = User.objects.get(username=options["gm"])
        except User.DoesNotExist:
            raise CommandError(f"No hay ningún usuario «{options['gm']}».") from None
        path = Path(options["file"])
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise CommandError(f"No se puede leer {path}: {exc.strerror}.") from None
        try:
            data = archive.archive_read(raw)
            imported = archive.campaign_import(data=data, gm=gm, visibility=options["visibility"])
        except archive.ArchiveError as exc:
            raise CommandError("El archivo no se puede importar:\n- " + "\n- ".join(exc.problems)) from None
        campaign = imported.campaign
        self.stdout.write(
            f"Partida importada: «{campaign.title}» ({campaign.get_absolute_url()}): "
            f"escenas: {len(imported.scenes)}, mensajes: {len(imported.posts)}, fichas: {len(imported.characters)}."
        )
        for note in imported.notes:
            self.stdout.write(f"- {note}")
