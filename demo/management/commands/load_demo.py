from django.core.management.base import BaseCommand

from demo.campaign import DEMO_PASSWORD, demo_load


class Command(BaseCommand):
    help = "Carga la partida de demostración (se puede ejecutar varias veces)."

    def handle(self, *args, **options) -> None:
        users, campaign = demo_load()
        self.stdout.write(
            self.style.SUCCESS(f"Partida de demostración: «{campaign.title}» en /partidas/{campaign.slug}/")
        )
        self.stdout.write("Cuentas de demostración (usuario / contraseña inicial):")
        for demo, created in users:
            note = "nueva" if created else "ya existía"
            self.stdout.write(f"  {demo.username:<10} / {DEMO_PASSWORD}   ({demo.display_name}, {note})")
