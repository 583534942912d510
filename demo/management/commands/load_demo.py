from django.core.management.base import BaseCommand

from campaigns.models import Campaign
from demo.campaign import DEMO_PASSWORD, demo_load
from demo.vaesen import PLAYERS, VAESEN_CAMPAIGN_SLUG


class Command(BaseCommand):
    help = "Carga la partida de demostración (se puede ejecutar varias veces)."

    def handle(self, *args, **options) -> None:
        users, campaign = demo_load()
        self.stdout.write(
            self.style.SUCCESS(f"Partida de demostración: «{campaign.title}» en /partidas/{campaign.slug}/")
        )
        vaesen = Campaign.objects.get(slug=VAESEN_CAMPAIGN_SLUG)
        self.stdout.write(
            self.style.SUCCESS(f"Partida de demostración de Vaesen: «{vaesen.title}» en /partidas/{vaesen.slug}/")
        )
        players = ", ".join(f"{login} lleva a {name}" for login, name in PLAYERS.items())
        self.stdout.write(f"  En las dos dirige {vaesen.gm.username}; en la de Vaesen {players}.")
        self.stdout.write("Cuentas de demostración (usuario / contraseña inicial):")
        for demo, created in users:
            note = "nueva" if created else "ya existía"
            self.stdout.write(f"  {demo.username:<10} / {DEMO_PASSWORD}   ({demo.display_name}, {note})")
