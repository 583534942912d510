"""Verified rolls for the demo campaign, including a re-roll chain."""

from rolls import services
from rolls.models import RollEntry
from rules import hitos


def rolls_demo_load(*, campaign, players, characters, scene) -> None:
    if RollEntry.objects.filter(campaign=campaign).rolls().exists():
        return
    ana, bruno = players
    ines, tomas = characters
    entry, _ = services.hitos_check_roll(
        campaign=campaign,
        user=ana,
        purpose="Intelecto + Percepción: huellas en el barro",
        modifier=9,
        difficulty=15,
        breakdown=[("Intelecto", 5), ("Percepción", 4)],
        character=ines,
        scene=scene,
    )
    # Inés invokes her aspect and re-rolls her two lowest dice (a positive activation).
    lowest = sorted(range(3), key=lambda i: entry.dice[i])[:2]
    services.reroll_append(
        parent=entry,
        user=ana,
        positions=lowest,
        purpose="Aspecto «Nieta del difunto»: repite dos dados",
        activation="positive",
        aspect="Nieta del difunto",
        paid_by=ana,
        payment="1 punto dramático",
        read=services.hitos_reader(
            campaign=campaign,
            what="Intelecto + Percepción: huellas en el barro",
            modifier=9,
            difficulty=15,
            breakdown=[("Intelecto", 5), ("Percepción", 4)],
            reading=hitos.Reading.POSITIVE,
        ),
    )
    services.hitos_check_roll(
        campaign=campaign,
        user=bruno,
        purpose="Reflejos + Sigilo: cruzar el jardín sin ruido",
        modifier=8,
        difficulty=20,
        breakdown=[("Reflejos", 5), ("Sigilo", 3)],
        character=tomas,
        scene=scene,
    )
    services.free_roll(campaign=campaign, user=bruno, text="2d6+1", purpose="Monedas en el bolsillo del cochero")
