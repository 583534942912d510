"""The table's pace in the HITOS demo (issue 17): Bruno is away this week and
lets the GM play Tomás, and «2. El sótano» waits for an answer by Friday
evening, so `make run` shows absences, whose turn it is and a deadline.
Dates are relative to the day the demo is loaded; loading it again adds
nothing while Bruno has an absence and the scene a deadline."""

from __future__ import annotations

from datetime import datetime, time, timedelta

from accounts.models import TakeoverConsent
from campaigns import absences, deadlines
from campaigns.models import Absence, Campaign, Deadline, Membership

NOTE = "De viaje; vuelvo el lunes."


def pace_demo_load(*, campaign: Campaign, gm, bruno, scene) -> None:
    today = absences.campaign_today(campaign)
    if not Absence.objects.filter(campaign=campaign, user=bruno).exists():
        membership = Membership.objects.get(campaign=campaign, user=bruno)
        absences.consent_set(membership=membership, consent=TakeoverConsent.GM)
        absences.absence_create(
            campaign=campaign, user=bruno, starts_on=today, ends_on=today + timedelta(days=5), note=NOTE
        )
    if not Deadline.objects.filter(kind=deadlines.SCENE, target_id=scene.pk).exists():
        # The next Friday at 20:00 where the campaign is played (a week on if today is Friday).
        friday = today + timedelta(days=(4 - today.weekday()) % 7 or 7)
        due_at = deadlines.local_to_aware(datetime.combine(friday, time(20, 0)), deadlines.campaign_zone(campaign))
        deadlines.set_deadline(
            campaign=campaign, scene=scene, kind=deadlines.SCENE, target_id=scene.pk, due_at=due_at, actor=gm
        )
