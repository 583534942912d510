"""Playing an absent player's character (issue 17, item 2): who may take it
over and when (the owner away, what they allow), starting and ending it
with the moderation log and the notifications, and what the owner is told
on return. The pages are in test_takeover_views.py, the posts in
test_takeover_posts.py."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from accounts.models import TakeoverConsent
from campaigns import absences, extensions
from campaigns.absences import campaign_today
from campaigns.models import Absence, Membership, ModerationAction, ModerationLog, Notification, Role, Scene
from campaigns.notify import site_url
from campaigns.permissions import campaign_access
from table import services as table_services
from table import takeover as takeovers
from table.models import Takeover
from tests.conftest import World
from tests.factories import UserFactory

# --- helpers the other takeover tests share -----------------------------------------------


def away(world: World, user, *, consent: str = TakeoverConsent.GM, days: int = 3) -> Absence:
    """``user`` is away from the world's campaign from yesterday for ``days``
    more days, allowing ``consent`` there (their membership's choice)."""
    today = campaign_today(world.campaign)
    Membership.objects.filter(campaign=world.campaign, user=user).update(takeover_consent=consent)
    return Absence.objects.create(
        campaign=world.campaign, user=user, starts_on=today - timedelta(days=1), ends_on=today + timedelta(days=days)
    )


def add_cogm(world: World):
    cogm = UserFactory(display_name="El Codirector")
    Membership.objects.create(campaign=world.campaign, user=cogm, role=Role.COGM)
    return cogm


def start(world: World, *, by=None, taken_by=None, scene=None, reason: str = "Bruno está de viaje") -> Takeover:
    """The direction (the GM unless ``by``) gives Tomás to ``taken_by`` (the GM)."""
    actor = by or world.gm
    return takeovers.takeover_start(
        access=campaign_access(actor, world.campaign),
        character=world.tomas,
        taken_by=taken_by or world.gm,
        scene=scene,
        reason=reason,
    )


# --- who may take it over --------------------------------------------------------------------


def test_the_gm_takes_over_an_away_players_character_logged_and_told(play):
    away(play, play.bruno)
    takeover = start(play)
    assert (takeover.character, takeover.owner, takeover.taken_by, takeover.started_by, takeover.scene) == (
        play.tomas,
        play.bruno,
        play.gm,
        play.gm,
        None,
    )
    assert takeover.reason == "Bruno está de viaje" and takeover.ended_at is None
    log = ModerationLog.objects.get()
    assert (log.action, log.actor, log.target_user) == (ModerationAction.TAKEOVER_STARTED, play.gm, play.bruno)
    assert log.reason == "Tomás Ferrer, para La Directora. Bruno está de viaje"
    told = Notification.objects.get()
    assert (told.user, told.kind) == (play.bruno, Notification.Kind.CHARACTER)
    assert told.text == "Mientras estás fuera, La Directora lleva a Tomás Ferrer (La mansión)."


def test_a_named_player_takes_it_for_one_scene_and_both_are_told(play):
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    takeover = start(play, taken_by=play.ana, scene=play.scene)
    assert (takeover.taken_by, takeover.scene) == (play.ana, play.scene)
    texts = dict(Notification.objects.values_list("user__display_name", "text"))
    assert texts == {
        "Bruno": "Mientras estás fuera, Ana lleva a Tomás Ferrer en «El vestíbulo» (La mansión).",
        "Ana": "La dirección te da a Tomás Ferrer para la escena «El vestíbulo» (La mansión).",
    }


def test_a_cogm_may_take_it_over_too(play):
    cogm = add_cogm(play)
    away(play, play.bruno)
    takeover = start(play, by=cogm, taken_by=cogm)
    assert takeover.taken_by == cogm and ModerationLog.objects.get().actor == cogm


def test_the_profiles_consent_counts_when_the_campaign_says_nothing(play):
    away(play, play.bruno, consent="")
    play.bruno.takeover_consent = TakeoverConsent.GM
    play.bruno.save(update_fields=["takeover_consent"])
    assert start(play).owner == play.bruno


@pytest.mark.parametrize(
    ("consent", "taker", "scene", "message"),
    [
        (TakeoverConsent.NOBODY, "gm", False, "Bruno no ha dado permiso para que otro lleve a su personaje."),
        (TakeoverConsent.GM, "ana", True, "Bruno solo permite que la dirección lleve a su personaje."),
        (
            TakeoverConsent.GM_AND_NAMED,
            "ana",
            False,
            "Un jugador lleva el personaje de otro solo en una escena: elígela.",
        ),
    ],
)
def test_what_the_owner_allows_decides_and_the_refusal_says_why(play, consent, taker, scene, message):
    away(play, play.bruno, consent=consent)
    with pytest.raises(ValidationError) as refused:
        start(play, taken_by=play.user(taker), scene=play.scene if scene else None)
    assert refused.value.messages == [message]
    assert not Takeover.objects.exists() and not ModerationLog.objects.exists()


def test_nobody_takes_the_character_of_a_player_who_is_not_away(play):
    Membership.objects.filter(user=play.bruno).update(takeover_consent=TakeoverConsent.GM_AND_NAMED)
    with pytest.raises(ValidationError) as refused:
        start(play)
    assert refused.value.messages == ["Bruno no está ausente hoy: solo se lleva el personaje de quien falta."]
    # An absence that ended yesterday does not count either.
    today = campaign_today(play.campaign)
    Absence.objects.create(
        campaign=play.campaign, user=play.bruno, starts_on=today - timedelta(days=5), ends_on=today - timedelta(days=1)
    )
    with pytest.raises(ValidationError):
        start(play)


def test_only_the_direction_starts_one(play):
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    with pytest.raises(PermissionDenied):
        start(play, by=play.ana, taken_by=play.ana, scene=play.scene)


def test_a_reader_or_the_owner_cannot_be_named(play):
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    with pytest.raises(ValidationError) as refused:
        start(play, taken_by=play.reader, scene=play.scene)
    assert refused.value.messages == ["Solo la dirección o un jugador de la partida pueden llevar el personaje."]
    with pytest.raises(ValidationError) as refused:
        start(play, taken_by=play.bruno)
    assert refused.value.messages == ["Su dueño no se lleva a sí mismo el personaje: elige a otra persona."]


def test_one_current_takeover_per_character(play):
    cogm = add_cogm(play)
    away(play, play.bruno)
    start(play)
    with pytest.raises(ValidationError) as refused:
        start(play, by=cogm, taken_by=cogm)
    assert refused.value.messages == ["Tomás Ferrer ya lo lleva La Directora: devuélvelo antes."]
    assert Takeover.objects.count() == 1


def test_an_archived_scene_is_refused(play):
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    play.scene.status = Scene.Status.ARCHIVED
    play.scene.save()
    with pytest.raises(ValidationError) as refused:
        start(play, taken_by=play.ana, scene=play.scene)
    assert refused.value.messages == ["Elige una escena de la partida que no esté archivada."]


# --- ending it -------------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["gm", "ana", "bruno"])
def test_the_direction_the_taker_or_the_owner_ends_it(play, who):
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    takeover = start(play, taken_by=play.ana, scene=play.scene)
    Notification.objects.all().delete()
    actor = play.user(who)
    takeovers.takeover_end(access=campaign_access(actor, play.campaign), takeover=takeover, reason="Ha vuelto")
    takeover.refresh_from_db()
    assert takeover.ended_at is not None and takeover.ended_by == actor
    log = ModerationLog.objects.filter(action=ModerationAction.TAKEOVER_ENDED).get()
    assert (log.actor, log.target_user, log.reason) == (actor, play.bruno, "Tomás Ferrer, que llevaba Ana. Ha vuelto")
    told = set(Notification.objects.values_list("user__display_name", flat=True))
    assert told == {"Bruno", "Ana"} - {actor.display_name}


def test_the_owner_may_take_it_back_while_still_away(play):
    away(play, play.bruno)
    takeover = start(play)
    takeovers.takeover_end(access=campaign_access(play.bruno, play.campaign), takeover=takeover)
    assert not Takeover.objects.current().exists()
    # The character may be taken again afterwards.
    assert start(play).pk != takeover.pk


def test_another_player_cannot_end_it_and_it_ends_once(play):
    away(play, play.bruno)
    takeover = start(play)
    with pytest.raises(PermissionDenied):
        takeovers.takeover_end(access=campaign_access(play.ana, play.campaign), takeover=takeover)
    takeovers.takeover_end(access=campaign_access(play.gm, play.campaign), takeover=takeover)
    with pytest.raises(ValidationError) as refused:
        takeovers.takeover_end(access=campaign_access(play.gm, play.campaign), takeover=takeover)
    assert refused.value.messages == ["Ese personaje ya estaba devuelto."]
    assert ModerationLog.objects.filter(action=ModerationAction.TAKEOVER_ENDED).count() == 1


# --- the candidates --------------------------------------------------------------------------


def test_the_candidates_are_the_away_players_approved_characters_with_their_consent(play):
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    found = takeovers.candidates(play.campaign)
    assert [(c.character, c.owner, c.consent, c.may_be_taken) for c in found] == [
        (play.tomas, play.bruno, TakeoverConsent.GM_AND_NAMED, True)
    ]
    assert found[0].consent_label == TakeoverConsent.GM_AND_NAMED.label
    takeover = start(play)
    (again,) = takeovers.candidates(play.campaign)
    assert again.current == takeover and not again.may_be_taken


# --- told on return ----------------------------------------------------------------------------


def test_the_return_hook_ends_the_takeover_and_tells_the_owner_once_what_was_done(play):
    away(play, play.bruno)
    takeover = start(play)
    post = table_services.post_with_rolls_create(
        access=campaign_access(play.gm, play.campaign),
        scene=play.scene,
        voice="character",
        body="Tomás vigila la puerta.",
        character=play.tomas,
        takeover_id=takeover.pk,
    )
    Notification.objects.all().delete()
    lines = extensions.member_returned(play.campaign, play.bruno)
    assert lines[0].startswith("La Directora (dirección) llevó a Tomás Ferrer del ") and " al " in lines[0]
    assert lines[1:] == [
        f"«El vestíbulo»: La Directora escribió como Tomás Ferrer (mensaje #{post.pk}): "
        + site_url(post.get_absolute_url())
    ]
    takeover.refresh_from_db()
    # The absence that allowed it is over: the takeover ends with it, by its owner.
    assert takeover.owner_told_at is not None and takeover.ended_at is not None and takeover.ended_by == play.bruno
    log = ModerationLog.objects.get(action=ModerationAction.TAKEOVER_ENDED)
    assert (log.actor, log.target_user, log.reason) == (
        play.bruno,
        play.bruno,
        "Tomás Ferrer, que llevaba La Directora. Bruno ha vuelto.",
    )
    told = Notification.objects.get()
    assert (told.user, told.kind, told.text) == (
        play.gm,
        Notification.Kind.CHARACTER,
        "Ya no llevas a Tomás Ferrer: Bruno ha vuelto.",
    )
    # Told once: the next return says nothing more of it.
    assert extensions.member_returned(play.campaign, play.bruno) == []
    # Nothing for who had nothing carried.
    assert extensions.member_returned(play.campaign, play.ana) == []


def test_the_owners_return_ends_the_takeover_and_the_taker_can_no_longer_write_as_the_character(play):
    absence = away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    takeover = start(play, taken_by=play.ana, scene=play.scene)
    assert takeovers.voiceable(campaign_access(play.ana, play.campaign), play.scene).keys() == {play.tomas.pk}
    # «Ya he vuelto»: the return is noticed, and the return hook runs.
    assert absences.absence_return(absence=absence)
    takeover.refresh_from_db()
    assert (takeover.ended_by, takeover.owner_told_at is not None) == (play.bruno, True)
    assert ModerationLog.objects.filter(action=ModerationAction.TAKEOVER_ENDED, actor=play.bruno).count() == 1
    assert Notification.objects.filter(user=play.ana, text="Ya no llevas a Tomás Ferrer: Bruno ha vuelto.").exists()
    welcome = Notification.objects.filter(user=play.bruno, kind=Notification.Kind.ABSENCE).get()
    assert "En tu nombre: Ana llevó a Tomás Ferrer del " in welcome.text
    assert takeovers.voiceable(campaign_access(play.ana, play.campaign), play.scene) == {}
    with pytest.raises(PermissionDenied):
        table_services.post_with_rolls_create(
            access=campaign_access(play.ana, play.campaign),
            scene=play.scene,
            voice="character",
            body="Sigo aquí.",
            character=play.tomas,
            takeover_id=takeover.pk,
        )


def test_a_takeover_ended_before_the_return_is_told_not_ended_again(play):
    absence = away(play, play.bruno)
    takeover = start(play)
    takeovers.takeover_end(access=campaign_access(play.gm, play.campaign), takeover=takeover, reason="Basta")
    absences.absence_return(absence=absence)
    takeover.refresh_from_db()
    assert takeover.ended_by == play.gm
    assert ModerationLog.objects.filter(action=ModerationAction.TAKEOVER_ENDED).count() == 1


def test_an_ended_takeover_is_told_with_its_dates(play):
    away(play, play.bruno)
    takeover = start(play)
    takeovers.takeover_end(access=campaign_access(play.gm, play.campaign), takeover=takeover)
    (line,) = takeovers.returned_lines(play.campaign, play.bruno)
    assert line.startswith("La Directora (dirección) llevó a Tomás Ferrer del ") and " al " in line
