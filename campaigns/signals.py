"""What the forum tells the apps above it, which listen without the forum
knowing them (``AppConfig.ready()`` connects the receivers)."""

from django.dispatch import Signal

# A campaign was just created, inside its creating transaction: receivers
# that write (the roll log opens its first epoch) commit or fail with it.
# Sent with ``campaign``.
campaign_created = Signal()

# A scene was just created in a campaign (not the off-game scene a campaign
# starts with), inside the creating transaction. Sent with ``scene`` and
# ``actor`` (who created it).
scene_created = Signal()
