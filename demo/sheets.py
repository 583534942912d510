"""The sheets part of the ``make run`` demo: the demo players' approved HITOS
sheets (Tomás wounded and shaken) and an NPC. Idempotent: a sheet that already
has skills is left alone, the NPC is created once.

``demo.campaign`` calls ``sheets_demo_load(campaign)`` after creating the
characters.
"""

from __future__ import annotations

from django.db import transaction

from sheets.models import Character
from systems.hitos.models import HitosSheet
from systems.hitos.sheet import services
from systems.hitos.sheet.services import SheetData

DEMO_NPC = "Anselmo, el mayordomo"

DEMO_SHEETS = {
    "Inés Albarrán": {
        "fields": {
            "cita": "Esta casa guarda algo que me pertenece.",
            "fortaleza": 4,
            "reflejos": 5,
            "voluntad": 6,
            "intelecto": 5,
            "drama": 5,
            "degeneracion": 0,
            "armour": "",
            "rd": 0,
            "public_description": "Nieta del difunto don Rodrigo Albarrán. Guantes de cabritilla y mirada firme.",
            "private_notes": "Sospecha que su abuelo no murió de un ataque al corazón.",
        },
        "concept": "Heredera decidida a descubrir la verdad",
        "traits": {
            "fortaleza": "Aguanta más de lo que aparenta",
            "reflejos": "Mano firme",
            "voluntad": "Terca como una mula",
            "intelecto": "Lectora voraz",
        },
        "hitos": [
            "Estudió Medicina en Madrid",
            "Perdió a sus padres en la gripe de 1918",
            "Se crió entre los libros del abuelo",
            "Desafió a su tutor y se quedó con la casa",
        ],
        "complications": ["Las deudas de la familia"],
        "skills": [
            ("Medicina", "profesion", 6),
            ("Investigar", "percepcion", 5),
            ("Historia", "cultura", 5),
            ("Persuadir", "interaccion", 4),
            ("Esquivar", "forma_fisica", 4),
            ("Pelea", "combate", 2),
            ("Idiomas", "cultura", 4),
            ("Ocultarse", "subterfugio", 3),
            ("Latín", "cultura", 3),
            ("Alerta", "percepcion", 4),
        ],
        "weapons": [("Bisturí", "m", True, "")],
        "damage": [],
        "imbalance": [],
    },
    "Tomás Quiroga": {
        "fields": {
            "cita": "Después de usted, señorita.",
            "fortaleza": 5,
            "reflejos": 6,
            "voluntad": 5,
            "intelecto": 4,
            "drama": 5,
            "degeneracion": 1,
            "armour": "Gabán de cuero",
            "rd": 1,
            "public_description": "Antiguo guardia civil, ahora escolta a sueldo. Lleva un farol y un revólver.",
            "private_notes": "Le debe un favor al abuelo de Inés.",
        },
        "concept": "Guardia civil licenciado con mala conciencia",
        "traits": {
            "fortaleza": "Espaldas anchas",
            "reflejos": "Desenfunda rápido",
            "voluntad": "Ha visto cosas en Marruecos",
            "intelecto": "Pocas letras, mucha calle",
        },
        "hitos": [
            "Sirvió en la guerra de Marruecos",
            "Expulsado del cuerpo por insubordinación",
            "Salvó a un niño de un incendio",
            "Conoce a todos los serenos de Madrid",
        ],
        "complications": ["Pesadillas con el desierto"],
        "skills": [
            ("Armas de fuego", "combate", 6),
            ("Escoltar", "profesion", 5),
            ("Pelea", "combate", 5),
            ("Intimidar", "interaccion", 4),
            ("Vigilar", "percepcion", 5),
            ("Atletismo", "forma_fisica", 4),
            ("Callejear", "subterfugio", 4),
            ("Conducir", "profesion", 3),
            ("Primeros auxilios", "profesion", 2),
            ("Cartas", "interaccion", 2),
        ],
        "weapons": [("Revólver", "M", False, "6 balas"), ("Porra", "C", True, "")],
        # Wounded (Herido) and shaken (Alterado): each mark stays below Aguante 7
        # and Entereza 7, so no mass-damage or trauma test is due.
        "damage": [(4, "Un perro guardián le muerde la pierna"), (4, "Cae por la escalera del sótano")],
        "imbalance": [(3, "Ve moverse el retrato del abuelo"), (4, "Oye su nombre en la oscuridad")],
    },
}


def _data(spec) -> SheetData:
    return SheetData(
        fields=dict(spec["fields"]),
        concept=spec["concept"],
        traits=spec["traits"],
        hitos=spec["hitos"],
        complications=spec["complications"],
        skills=spec["skills"],
        weapons=spec["weapons"],
    )


@transaction.atomic
def sheets_demo_load(campaign) -> None:
    gm = campaign.gm
    for character in Character.objects.filter(campaign=campaign).player_characters().select_related("campaign"):
        spec = DEMO_SHEETS.get(character.name)
        if spec is None or character.skills.exists():
            continue
        HitosSheet.objects.get_or_create(character=character)
        services.sheet_update(character=character, actor=gm, data=_data(spec), reason="Ficha de demostración")
        character.refresh_from_db()
        if character.status != Character.Status.APPROVED:
            character.status = Character.Status.APPROVED
            character.save(update_fields=["status"])
        for amount, reason in spec["damage"]:
            services.meter_apply(
                character=character, actor=gm, meter=services.HEALTH, action="damage", amount=amount, reason=reason
            )
        for amount, reason in spec["imbalance"]:
            services.meter_apply(
                character=character, actor=gm, meter=services.MENTAL, action="imbalance", amount=amount, reason=reason
            )
    if not Character.objects.filter(campaign=campaign, name=DEMO_NPC).exists():
        services.sheet_create(
            campaign=campaign,
            owner=gm,
            actor=gm,
            kind=Character.Kind.NPC,
            data=SheetData(
                fields={
                    "name": DEMO_NPC,
                    "fortaleza": 6,
                    "reflejos": 4,
                    "voluntad": 5,
                    "intelecto": 4,
                    "rd": 0,
                    "damage_code": "C",
                    "gm_notes": "Lleva cuarenta años sirviendo a los Albarrán. Y a algo más.",
                },
                concept="Mayordomo leal a quien no debe",
                skills=[("Pelea", "combate", 4), ("Vigilar", "percepcion", 4), ("Mentir", "interaccion", 5)],
            ),
        )
