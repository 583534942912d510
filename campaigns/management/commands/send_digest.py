from django.core.management.base import BaseCommand

from campaigns import notify


class Command(BaseCommand):
    help = (
        "E-mail every user who chose the daily digest one message with their notifications not yet "
        "e-mailed, grouped by campaign, and mark them e-mailed. Running it twice sends nothing new."
    )

    def handle(self, *args, **options) -> None:
        sent = failed = 0
        for user in notify.digest_users().iterator():
            try:
                if notify.digest_send(user=user):
                    sent += 1
            except Exception as exc:  # One bad address or a mail server hiccup must not stop the others.
                failed += 1
                self.stderr.write(f"Could not send the digest to user {user.pk}: {exc}")
        self.stdout.write(f"Sent {sent} digest e-mail(s).")
        if failed:
            self.stderr.write(f"{failed} digest e-mail(s) failed; they stay pending for the next run.")
