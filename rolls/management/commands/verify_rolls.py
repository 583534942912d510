"""Re-verify the stored roll logs, as an outside auditor would (rolls.audit)."""

from django.core.management.base import BaseCommand, CommandError

from rolls import audit


class Command(BaseCommand):
    help = "Vuelve a verificar el registro de tiradas firmado de cada partida (o de una con --campaign)."

    def add_arguments(self, parser):
        parser.add_argument("--campaign", metavar="SLUG", help="solo la partida con esta dirección")

    def handle(self, *args, campaign=None, **options) -> None:
        campaigns = audit.audited_campaigns()
        if campaign:
            campaigns = campaigns.filter(slug=campaign)
            if not campaigns.exists():
                raise CommandError(f"No hay ninguna partida con registro de tiradas y dirección «{campaign}».")
        failed = 0
        for result in audit.audit(campaigns):
            slug, count, lines = result.campaign.slug, result.entries, result.problems
            if not lines:
                self.stdout.write(self.style.SUCCESS(f"OK  {slug}: {count} entradas verificadas"))
                continue
            failed += 1
            self.stdout.write(self.style.ERROR(f"MAL {slug}: {len(lines)} problemas en {count} entradas"))
            for line in lines:
                self.stdout.write(f"    {line}")
        if failed:
            raise CommandError(f"{failed} partida(s) con entradas que no superan la verificación.")
