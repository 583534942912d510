from django.core.management.base import BaseCommand

from campaigns.models import Campaign
from demo.aventuras import AVENTURAS_CAMPAIGN_SLUG
from demo.aventuras import PLAYERS as AVENTURAS_PLAYERS
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
        aventuras = Campaign.objects.get(slug=AVENTURAS_CAMPAIGN_SLUG)
        self.stdout.write(
            self.style.SUCCESS(
                f"Partida de demostración de Hora de Aventuras: «{aventuras.title}» en /partidas/{aventuras.slug}/"
            )
        )
        players = ", ".join(f"{login} lleva a {name}" for login, name in PLAYERS.items())
        heroes = ", ".join(f"{login} lleva a {name}" for login, name in AVENTURAS_PLAYERS.items())
        self.stdout.write(
            f"  En las tres dirige {vaesen.gm.username}; en la de Vaesen {players}; en la de Hora de Aventuras {heroes}."
        )
        self.stdout.write("Cuentas de demostración (usuario / contraseña inicial):")
        for demo, created in users:
            note = "nueva" if created else "ya existía"
            self.stdout.write(f"  {demo.username:<10} / {DEMO_PASSWORD}   ({demo.display_name}, {note})")
