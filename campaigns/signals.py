"""What the forum tells the apps above it, which listen without the forum
knowing them (``AppConfig.ready()`` connects the receivers)."""

from django.dispatch import Signal

# A campaign was just created, inside its creating transaction: receivers
# that write (the roll log opens its first epoch) commit or fail with it.
# Sent with ``campaign``.
campaign_created = Signal()
