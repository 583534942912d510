from django.core.management.base import BaseCommand
from django.utils import timezone

from campaigns import daily


class Command(BaseCommand):
    help = (
        "Enqueue the next run of every daily job (the digest, the audit of the roll logs) that is not "
        "already waiting; each run then enqueues the next one. Safe to run at every deployment."
    )

    def handle(self, *args, **options) -> None:
        if not all(daily.keeps_tasks(job.task) for job in daily.JOBS.values()):
            self.stdout.write("El backend de tareas no guarda tareas: no hay nada que programar.")
            return
        for path, when in daily.start_all().items():
            if when is None:
                self.stdout.write(f"{path}: ya está en cola.")
            else:
                self.stdout.write(f"{path}: próxima ejecución {timezone.localtime(when):%Y-%m-%d %H:%M %Z}.")
