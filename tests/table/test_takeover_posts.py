"""Posting and rolling as an absent player's character (issue 17, item 2):
the taker's post form offers the character (in the allowed scene only) and
the requests addressed to it, the post names who wrote it on whose behalf
(the scene page, the feeds), its rolls use the character's sheet, the
sheet's history records each, and nobody else can write as it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from pytest_django.asserts import assertContains, assertNotContains

from accounts.models import TakeoverConsent
from campaigns import absences
from campaigns.absences import campaign_today
from campaigns.models import Absence, Membership, Post, Scene
from campaigns.permissions import campaign_access
from sheets.models import SheetEvent
from systems.hitos.system import request_facts
from table import services as table_services
from table import takeover as takeovers
from table.models import RollRequest, TableRoll
from tests.conftest import World, client_for, make_world
from tests.factories import client_seed
from tests.table.test_takeover import away, start

XSS = "<script>alert(1)</script>"


def _create_url(world: World, scene: Scene | None = None) -> str:
    return reverse("table:post-create", args=[world.campaign.slug, (scene or world.scene).pk])


def _as_tomas(world: World, **extra) -> dict[str, str]:
    return {
        "voice": f"character:{world.tomas.pk}",
        "body": "Tomás vigila la puerta.",
        "recipients": "all",
        "submission_key": client_seed(),
        **extra,
    }


def _row(i: int, **fields) -> dict[str, str]:
    return {f"tirada-{i}-{name}": str(value) for name, value in fields.items()}


def _write_for_bruno(world: World, takeover, n: int) -> None:
    access = campaign_access(takeover.taken_by, world.campaign)
    for i in range(n):
        table_services.post_with_rolls_create(
            access=access,
            scene=world.scene,
            voice=Post.Voice.CHARACTER,
            body=f"Mensaje {i} de Tomás.",
            character=world.tomas,
            takeover_id=takeover.pk,
        )


# --- the post form ---------------------------------------------------------------------------


def test_the_gm_who_carries_the_character_is_offered_it_and_posts_as_it(play):
    away(play, play.bruno)
    takeover = start(play)
    page = client_for(play.gm).get(play.scene.get_absolute_url())
    assertContains(page, "Personaje: Tomás Ferrer (en nombre de Bruno)")
    response = client_for(play.gm).post(_create_url(play), _as_tomas(play))
    post = Post.objects.latest("pk")
    assert response.status_code == 302 and response.url == post.get_absolute_url()
    assert (post.author, post.character, post.on_behalf_of, post.voice) == (
        play.gm,
        play.tomas,
        play.bruno,
        Post.Voice.CHARACTER,
    )
    page = client_for(play.ana).get(play.scene.get_absolute_url())
    assertContains(page, "Escrito por La Directora (dirección) en nombre de Bruno")
    event = SheetEvent.objects.get(character=play.tomas, kind=takeovers.SHEET_EVENT)
    assert (event.actor, event.post, event.roll) == (play.gm, post, None)
    assert event.summary == f"La Directora escribió el mensaje #{post.pk} en nombre de Bruno"
    assert takeover.pk == takeovers.voiceable(campaign_access(play.gm, play.campaign), play.scene)[play.tomas.pk].pk


def test_a_named_player_posts_and_rolls_with_the_sheet_in_their_scene_only(play):
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    start(play, taken_by=play.ana, scene=play.scene)
    other_scene = Scene.objects.create(campaign=play.campaign, title="El desván")
    assertNotContains(client_for(play.ana).get(other_scene.get_absolute_url()), "Tomás Ferrer (en nombre de Bruno)")
    data = _as_tomas(play, **_row(0, characteristic="fortaleza", skill="Combate", purpose="Sujetar la puerta"))
    response = client_for(play.ana).post(_create_url(play), data)
    post = Post.objects.latest("pk")
    assert response.status_code == 302 and post.on_behalf_of == play.bruno and post.author == play.ana
    table_roll = TableRoll.objects.get(post=post)
    assert (table_roll.character, table_roll.owner) == (play.tomas, play.ana)
    # The sheet's own numbers: Fortaleza 5 and Combate 4.
    assert table_roll.latest.signed_game["breakdown"][:2] == [["Fortaleza", 5], ["Combate", 4]]
    events = list(SheetEvent.objects.filter(character=play.tomas, kind=takeovers.SHEET_EVENT).order_by("pk"))
    assert [(e.actor, e.post, e.roll) for e in events] == [
        (play.ana, post, None),
        (play.ana, post, table_roll.first),
    ]
    assert events[1].summary == f"Ana tiró con la ficha en el mensaje #{post.pk} en nombre de Bruno"
    page = client_for(play.gm).get(play.scene.get_absolute_url())
    assertContains(page, "Escrito por Ana en nombre de Bruno")
    # In the other scene the form does not take the character either.
    response = client_for(play.ana).post(_create_url(play, other_scene), _as_tomas(play))
    assert response.status_code == 200
    assertContains(response, "No puedes escribir así: elige una de las voces que te ofrece la lista.")


def test_the_taker_answers_a_request_addressed_to_the_character(play):
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    start(play, taken_by=play.ana, scene=play.scene)
    from table.roll_requests import services as roll_requests

    request = roll_requests.request_create(
        access=campaign_access(play.gm, play.campaign),
        scene=play.scene,
        character=play.tomas,
        facts=request_facts(characteristic="reflejos", skill="Sigilo", modifier=0),
        difficulty=15,
        difficulty_hidden=False,
        purpose="Que no te vean",
    )
    page = client_for(play.ana).get(play.scene.get_absolute_url())
    assertContains(page, "Contestar: Que no te vean (Tomás Ferrer)")
    data = _as_tomas(play, answers=str(request.pk), answer_seed=client_seed())
    response = client_for(play.ana).post(_create_url(play), data)
    assert response.status_code == 302
    request.refresh_from_db()
    post = Post.objects.latest("pk")
    assert request.answer.post == post and request.answer.character == play.tomas
    assert SheetEvent.objects.filter(character=play.tomas, kind=takeovers.SHEET_EVENT, roll__isnull=False).count() == 1
    # Bruno's own form is not where it waits while Ana carries Tomás.
    assert not RollRequest.objects.filter(pk=request.pk, answered_at__isnull=True).exists()


# --- nobody else writes as the character -------------------------------------------------------


def test_a_forged_post_as_someone_elses_character_is_refused(play):
    away(play, play.bruno)
    response = client_for(play.ana).post(_create_url(play), _as_tomas(play))
    assert response.status_code == 200
    assertContains(response, "No puedes escribir así: elige una de las voces que te ofrece la lista.")
    assert not Post.objects.filter(character=play.tomas).exists()


def test_once_ended_the_takeover_no_longer_lets_anyone_write_as_the_character(play):
    away(play, play.bruno)
    takeover = start(play)
    client = client_for(play.gm)
    assertContains(client.get(play.scene.get_absolute_url()), "Tomás Ferrer (en nombre de Bruno)")
    takeovers.takeover_end(access=campaign_access(play.gm, play.campaign), takeover=takeover)
    # The writer kept in the cache moved with the takeover.
    assertNotContains(client.get(play.scene.get_absolute_url()), "Tomás Ferrer (en nombre de Bruno)")
    response = client.post(_create_url(play), _as_tomas(play))
    assertContains(response, "No puedes escribir así: elige una de las voces que te ofrece la lista.")
    # The service itself refuses an ended or someone else's takeover.
    with pytest.raises(PermissionDenied):
        table_services.post_with_rolls_create(
            access=campaign_access(play.gm, play.campaign),
            scene=play.scene,
            voice=Post.Voice.CHARACTER,
            body="Otra vez.",
            character=play.tomas,
            takeover_id=takeover.pk,
        )
    assert not Post.objects.filter(character=play.tomas).exists()


def _service_post(world: World, takeover):
    return table_services.post_with_rolls_create(
        access=campaign_access(takeover.taken_by, world.campaign),
        scene=world.scene,
        voice=Post.Voice.CHARACTER,
        body="Tomás sigue aquí.",
        character=world.tomas,
        takeover_id=takeover.pk,
    )


def _set_consent(world: World, consent: str, *, via: str) -> None:
    """Bruno changes what he allows in the campaign, or in his profile (the
    campaign then saying nothing), as the pages do."""
    membership = Membership.objects.select_related("user").get(campaign=world.campaign, user=world.bruno)
    if via == "campaign":
        absences.consent_set(membership=membership, consent=consent)
        return
    absences.consent_set(membership=membership, consent="")
    bruno = membership.user
    bruno.takeover_consent = consent
    bruno.save()


@pytest.mark.parametrize(
    ("taker", "consent", "via"),
    [
        ("gm", TakeoverConsent.NOBODY, "campaign"),
        ("gm", TakeoverConsent.NOBODY, "profile"),
        ("ana", TakeoverConsent.NOBODY, "campaign"),
        # Only the direction now: the player the direction named may no longer.
        ("ana", TakeoverConsent.GM, "campaign"),
        ("ana", TakeoverConsent.GM, "profile"),
    ],
)
def test_when_the_owner_withdraws_consent_the_taker_can_no_longer_write_as_the_character(play, taker, consent, via):
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    taker = play.user(taker)
    takeover = start(play, taken_by=taker, scene=play.scene if taker == play.ana else None)
    client = client_for(taker)
    assertContains(client.get(play.scene.get_absolute_url()), "Tomás Ferrer (en nombre de Bruno)")
    _set_consent(play, consent, via=via)
    # The post form kept in the cache moved with the consent.
    assertNotContains(client.get(play.scene.get_absolute_url()), "Tomás Ferrer (en nombre de Bruno)")
    assert takeovers.voiceable(campaign_access(taker, play.campaign), play.scene) == {}
    response = client.post(_create_url(play), _as_tomas(play))
    assertContains(response, "No puedes escribir así: elige una de las voces que te ofrece la lista.")
    # The service itself refuses, and says why.
    with pytest.raises(ValidationError) as refused:
        _service_post(play, takeover)
    assert refused.value.messages == ["Bruno ya no permite que lleves a Tomás Ferrer: no puedes escribir como él."]
    assert not Post.objects.filter(character=play.tomas).exists()


def test_the_gm_still_writes_as_the_character_when_the_owner_allows_only_the_direction(play):
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    takeover = start(play)
    _set_consent(play, TakeoverConsent.GM, via="campaign")
    assert _service_post(play, takeover).on_behalf_of == play.bruno


def test_once_the_owner_is_back_the_service_refuses_even_before_the_return_is_noticed(play):
    absence = away(play, play.bruno)
    takeover = start(play)
    # The absence's last day was yesterday; the clock has not noticed the return yet.
    Absence.objects.filter(pk=absence.pk).update(ends_on=campaign_today(play.campaign) - timedelta(days=1))
    assert takeovers.voiceable(campaign_access(play.gm, play.campaign), play.scene) == {}
    with pytest.raises(ValidationError) as refused:
        _service_post(play, takeover)
    assert refused.value.messages == ["Bruno ha vuelto: Tomás Ferrer vuelve a ser suyo y no puedes escribir como él."]
    assert not Post.objects.filter(character=play.tomas).exists()


def test_the_kept_post_form_does_not_outlive_the_absences_last_day(play, monkeypatch):
    today = campaign_today(play.campaign)
    Membership.objects.filter(campaign=play.campaign, user=play.bruno).update(
        takeover_consent=TakeoverConsent.GM_AND_NAMED
    )
    Absence.objects.create(campaign=play.campaign, user=play.bruno, starts_on=today, ends_on=today)
    start(play, taken_by=play.ana, scene=play.scene)
    client = client_for(play.ana)
    assertContains(client.get(play.scene.get_absolute_url()), "Tomás Ferrer (en nombre de Bruno)")
    # A day later, before the clock notices the return: the kept form and page do not offer Tomás.
    tomorrow = timezone.now() + timedelta(days=1)
    monkeypatch.setattr(timezone, "now", lambda: tomorrow)
    assertNotContains(client.get(play.scene.get_absolute_url()), "Tomás Ferrer (en nombre de Bruno)")


def test_an_owner_who_left_the_campaign_is_no_longer_written_for(play):
    away(play, play.bruno)
    takeover = start(play)
    Membership.objects.filter(campaign=play.campaign, user=play.bruno).update(status=Membership.Status.LEFT)
    with pytest.raises(ValidationError) as refused:
        _service_post(play, takeover)
    assert refused.value.messages == ["Bruno ya no juega en la partida: no puedes escribir como Tomás Ferrer."]


def test_someone_elses_takeover_is_refused_by_the_service(play):
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    takeover = start(play, taken_by=play.ana, scene=play.scene)
    with pytest.raises(PermissionDenied):
        table_services.post_with_rolls_create(
            access=campaign_access(play.gm, play.campaign),
            scene=play.scene,
            voice=Post.Voice.CHARACTER,
            body="Me lo quedo.",
            character=play.tomas,
            takeover_id=takeover.pk,
        )


# --- how it reads ------------------------------------------------------------------------------


def test_the_names_in_the_byline_are_escaped(play):
    play.bruno.display_name = XSS
    play.bruno.save()
    play.gm.display_name = XSS + "2"
    play.gm.save()
    away(play, play.bruno)
    _write_for_bruno(play, start(play), 1)
    html = client_for(play.ana).get(play.scene.get_absolute_url()).content.decode()
    assert XSS not in html
    assert "Escrito por &lt;script&gt;alert(1)&lt;/script&gt;2 (dirección) en nombre de &lt;script&gt;" in html
    feed = client_for(None).get(reverse("campaigns:campaign-feed", args=[play.campaign.slug])).content.decode()
    assert XSS not in feed
    assert "&lt;script&gt;" in feed


def test_the_feeds_say_who_wrote_on_whose_behalf(play):
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    _write_for_bruno(play, start(play, taken_by=play.ana, scene=play.scene), 1)
    feed = client_for(None).get(reverse("campaigns:campaign-feed", args=[play.campaign.slug])).content.decode()
    assert "&lt;p&gt;&lt;em&gt;Escrito por Ana en nombre de Bruno&lt;/em&gt;&lt;/p&gt;" in feed
    scene_feed = reverse("campaigns:scene-feed", args=[play.campaign.slug, play.scene.pk])
    assert "Escrito por Ana en nombre de Bruno" in client_for(None).get(scene_feed).content.decode()


def test_the_permalink_leads_to_the_post_that_says_so(play):
    away(play, play.bruno)
    _write_for_bruno(play, start(play), 1)
    post = Post.objects.latest("pk")
    response = client_for(play.ana).get(post.get_absolute_url(), follow=True)
    assertContains(response, f'id="mensaje-{post.pk}"')
    assertContains(response, "Escrito por La Directora (dirección) en nombre de Bruno")


def _first_visit_queries(world: World, user) -> tuple[int, str]:
    client = client_for(user)
    with CaptureQueriesContext(connection) as queries:
        html = client.get(world.scene.get_absolute_url()).content.decode()
    return len(queries), html


def test_the_scene_page_costs_the_same_with_1_or_10_posts_written_on_behalf(db):
    used = {}
    for n in (1, 10):
        world = make_world()
        away(world, world.bruno)
        _write_for_bruno(world, start(world), n)
        for role in ("gm", "ana", "anonymous"):
            count, html = _first_visit_queries(world, world.user(role))
            assert html.count("Escrito por La Directora (dirección) en nombre de Bruno") == n
            used[n, role] = count
    for role in ("gm", "ana", "anonymous"):
        assert used[1, role] == used[10, role], role


@pytest.mark.parametrize("n", [1, 10])
def test_the_scene_page_query_count_is_pinned_with_posts_written_on_behalf(play, django_assert_max_num_queries, n):
    away(play, play.bruno)
    _write_for_bruno(play, start(play), n)
    # The scene page's first visit (tests/table/test_post_rolls.py), with
    # the GM's post form carrying Tomás (the takeover, who is away and the
    # owner's membership for what it still allows, its requests, the sheet)
    # and the direction's ids for the byline of the posts rendered.
    for user, bound in ((play.gm, 23), (play.ana, 18), (None, 4)):
        client = client_for(user)
        with django_assert_max_num_queries(bound):
            response = client.get(play.scene.get_absolute_url())
        assert response.content.decode().count("en nombre de Bruno</span>") == n


def test_the_sheets_history_shows_who_wrote_on_whose_behalf_with_the_post(play):
    away(play, play.bruno)
    _write_for_bruno(play, start(play), 1)
    post = Post.objects.latest("pk")
    url = reverse("sheets:sheet-history", args=[play.campaign.slug, play.tomas.pk])
    for user in (play.gm, play.bruno):
        page = client_for(user).get(url)
        assertContains(page, f"La Directora escribió el mensaje #{post.pk} en nombre de Bruno")
        assertContains(page, f'<a href="{post.get_absolute_url()}">mensaje #{post.pk}</a>', html=False)
