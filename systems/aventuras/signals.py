"""What the packages of Hora de Aventuras tell each other without importing
each other."""

from django.dispatch import Signal

# An Aventuras roll became final (the player said "ya está", or nothing is
# left to decide): ``table_roll`` (its ``facts`` already say so), inside the
# transaction that settled it. Reactions and contests resolve on it.
roll_settled = Signal()
