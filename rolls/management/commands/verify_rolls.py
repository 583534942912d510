"""Re-verify the stored roll logs, as an outside auditor would.

Each campaign's entries are exported exactly as stored and run through the
offline audit (rolls.verify_log); every entry that fails is named by its seq
and permalink. The indexed column copies and the head row are compared with
the signed bytes too, since pages and queries read them.
"""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from campaigns.models import Campaign
from rolls import rollog, verify_log, verify_roll
from rolls.models import CampaignLog, RollEntry


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
            lines = self.check_campaign(item, public_key)
            count = RollEntry.objects.filter(campaign=item).count()
            if not lines:
                self.stdout.write(self.style.SUCCESS(f"OK  {item.slug}: {count} entradas verificadas"))
                continue
            failed += 1
            self.stdout.write(self.style.ERROR(f"MAL {item.slug}: {len(lines)} problemas en {count} entradas"))
            for line in lines:
                self.stdout.write(f"    {line}")
        if failed:
            raise CommandError(f"{failed} partida(s) con entradas que no superan la verificación.")

    def check_campaign(self, campaign: Campaign, public_key) -> list[str]:
        rows = list(
            RollEntry.objects.filter(campaign=campaign)
            .order_by("seq")
            .only("pk", "seq", "permalink", "kind", "entry_bytes", "signature", "entry_hash", "epoch",
                  "epoch_index", "client_seed", "spec", "purpose", "dice", "game", "time", "audience", "opening")
        )  # fmt: skip
        # The server holds every opening: sealed rolls are audited in full here.
        refs = [rollog.ref_with_opening(row.signed, bytes(row.opening) if row.is_sealed else None) for row in rows]
        report = verify_log.audit_log(refs, public_key)
        lines = []
        for problem in report.problems:
            # A forged or edited row may not even decode: name it by the row.
            row = rows[problem.position] if problem.position < len(rows) else None
            where = f"#{row.seq} ({row.permalink})" if row else "?"
            lines.append(f"FAIL entrada {where} [{problem.code}]: {problem.message}")
        for row in rows:
            try:
                same = row.copies_match()
            except ValueError:
                same = False  # The bytes do not decode; already reported above.
            if not same:
                lines.append(
                    f"FAIL entrada #{row.seq} ({row.permalink}) [copy_mismatch]: "
                    "las columnas copiadas no coinciden con los bytes firmados."
                )
        head = CampaignLog.objects.get(campaign=campaign)
        last = rows[-1] if rows else None
        if last is None or (head.seq, head.head_hash) != (last.seq, last.entry_hash):
            lines.append(f"FAIL cabeza [head_mismatch]: la cabeza guardada (#{head.seq}) no es la última entrada.")
        return lines
