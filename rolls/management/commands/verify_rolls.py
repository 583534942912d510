"""Re-verify the stored roll logs, as an outside auditor would.

Each campaign's entries are exported exactly as stored and run through the
offline audit (rolls.verify_log); every entry that fails is named.
"""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from campaigns.models import Campaign
from rolls import verify_log, verify_roll
from rolls.models import RollEntry


class Command(BaseCommand):
    help = "Vuelve a verificar el registro de tiradas firmado de cada partida (o de una con --campaign)."

    def add_arguments(self, parser):
        parser.add_argument("--campaign", metavar="SLUG", help="solo la partida con esta dirección")

    def handle(self, *args, campaign=None, **options) -> None:
        campaigns = Campaign.objects.filter(roll_log__isnull=False).order_by("pk")
        if campaign:
            campaigns = campaigns.filter(slug=campaign)
            if not campaigns.exists():
                raise CommandError(f"No hay ninguna partida con registro de tiradas y dirección «{campaign}».")
        public_key = verify_roll.parse_public_key(settings.ROLLOG_KEYS.public_key_hex)
        failed = 0
        for item in campaigns:
            entries = RollEntry.objects.filter(campaign=item).order_by("seq")
            refs = [entry.signed.ref() for entry in entries.iterator()]
            report = verify_log.audit_log(refs, public_key)
            if report.ok:
                self.stdout.write(self.style.SUCCESS(f"OK  {item.slug}: {len(refs)} entradas verificadas"))
                continue
            failed += 1
            self.stdout.write(self.style.ERROR(f"MAL {item.slug}: {len(report.problems)} problemas"))
            for problem in report.problems:
                self.stdout.write(f"    {problem}")
        if failed:
            raise CommandError(f"{failed} partida(s) con entradas que no superan la verificación.")
