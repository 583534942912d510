"""The ``make run`` demo has a scene played at the table (issue 7 item 11)."""

import pytest
from django.core.management import call_command

from campaigns.models import Post
from demo.campaign import demo_load
from demo.table import TABLE_SCENE
from rolls.models import RollEntry
from systems.hitos.models import Activation, Attack, HorrorTest
from table.models import TableRoll

pytestmark = pytest.mark.django_db


def test_the_demo_has_an_attack_a_reroll_an_accepted_negative_activation_and_a_horror_test():
    _users, campaign = demo_load(vaesen=False, aventuras=False)
    scene = campaign.scenes.get(title=TABLE_SCENE)
    # Two rolls in posts to everyone, and one in Inés's whisper to Tomás (sealed).
    in_posts = TableRoll.objects.filter(scene=scene, post__isnull=False).select_related("first")
    assert sorted(t.first.audience for t in in_posts) == ["", "", "recipients"]
    # The GM's secret rolls: one still secret, one revealed.
    secrets = RollEntry.objects.filter(scene=scene, audience="gm").select_related("reveal")
    assert sorted(hasattr(e, "reveal") for e in secrets) == [False, True]
    positive = Activation.objects.get(campaign=campaign, kind=Activation.Kind.POSITIVE)
    assert positive.status == Activation.Status.DONE and len(positive.positions) == 2
    assert positive.reroll.signed_game["reading"] == "positive"
    negative = Activation.objects.get(campaign=campaign, kind=Activation.Kind.NEGATIVE)
    assert negative.status == Activation.Status.ACCEPTED
    assert negative.reroll.signed_game["reading"] == "negative"
    attacks = Attack.objects.filter(combat__scene=scene)
    assert attacks.exists()
    test = HorrorTest.objects.get(scene=scene)
    assert all(e.resolved_at for e in test.exposures.all())
    # Every roll of the demo verifies offline.
    call_command("verify_rolls", campaign=campaign.slug)


def test_the_demo_loads_twice_without_repeating_itself():
    demo_load(vaesen=False, aventuras=False)
    rolls, posts = RollEntry.objects.count(), Post.objects.count()
    demo_load(vaesen=False, aventuras=False)
    # Neither the rolls nor the narrator's posts that follow them come twice.
    assert (RollEntry.objects.count(), Post.objects.count()) == (rolls, posts)
