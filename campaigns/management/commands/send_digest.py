from django.core.management.base import BaseCommand

from campaigns import notify


class Command(BaseCommand):
    help = (
        "E-mail every user who chose the daily digest one message with their notifications not yet "
        "e-mailed, grouped by campaign, and mark them e-mailed. Running it twice sends nothing new. "
        "The task worker does this every day on its own (start_daily_tasks); this runs it now."
    )

    def handle(self, *args, **options) -> None:
        sent, failed = notify.digest_send_all()
        self.stdout.write(f"Sent {sent} digest e-mail(s).")
        if failed:
            self.stderr.write(f"{failed} digest e-mail(s) failed; they stay pending for the next run.")
