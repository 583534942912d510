"""Second review of the takeovers (issue 17, item 2): rolls made as a
carried character say on whose behalf on the roll's page and in the roll
log (in a constant number of queries), a post written for an absent owner
is edited by the direction only, a player is named only for a scene they
may write in, a refused hand-back keeps the reason typed, and the panels
give times in the campaign's time zone."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from pytest_django.asserts import assertContains, assertNotContains

from accounts.models import TakeoverConsent
from campaigns import permissions as perms
from campaigns import services as forum_services
from campaigns.models import ModerationAction, ModerationLog, Scene
from campaigns.permissions import campaign_access
from table.models import TableRoll, Takeover
from tests.conftest import World, client_for
from tests.factories import client_seed, make_scene
from tests.table.test_takeover import away, start

XSS = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"


def _post_with_roll(world: World, user, character, scene: Scene | None = None) -> TableRoll:
    """``user`` posts as ``character`` with one roll of its sheet (through the table's form)."""
    scene = scene or world.scene
    data = {
        "voice": f"character:{character.pk}",
        "body": "Sujeto la puerta.",
        "recipients": "all",
        "submission_key": client_seed(),
        "tirada-0-characteristic": "fortaleza",
        "tirada-0-skill": "Combate",
        "tirada-0-purpose": "Sujetar la puerta",
    }
    response = client_for(user).post(reverse("table:post-create", args=[world.campaign.slug, scene.pk]), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    return TableRoll.objects.filter(post__author=user).latest("pk")


def _log_url(world: World) -> str:
    return reverse("rolls:roll-log", args=[world.campaign.slug])


# --- 1. rolls say on whose behalf ---------------------------------------------------------------


def test_the_rolls_page_and_the_log_say_on_whose_behalf_the_roll_was_made(play):
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    start(play, taken_by=play.ana, scene=play.scene)
    carried = _post_with_roll(play, play.ana, play.tomas)
    own = _post_with_roll(play, play.ana, play.ines)
    page = client_for(play.reader).get(carried.first.get_absolute_url())
    assertContains(page, 'id="roll-who">Ana · Tomás Ferrer · <span class="roll-on-behalf">en nombre de Bruno</span>')
    page = client_for(play.reader).get(own.first.get_absolute_url())
    assertContains(page, 'id="roll-who">Ana · Inés Salcedo</dd>')
    for headers in ({}, {"HX-Request": "true"}):
        html = client_for(play.reader).get(_log_url(play), headers=headers).content.decode()
        assert ("<html" in html) is not bool(headers)
        assert html.count('<span class="roll-on-behalf">en nombre de Bruno</span>') == 1
        row = html.split(f'id="roll-row-{carried.first.permalink}"')[1].split("</tr>")[0]
        assert "Ana · Tomás Ferrer · <span" in row and "en nombre de Bruno" in row


def test_the_owners_name_on_the_rolls_is_escaped(play):
    play.bruno.display_name = XSS
    play.bruno.save()
    away(play, play.bruno)
    start(play)
    carried = _post_with_roll(play, play.gm, play.tomas)
    for url in (carried.first.get_absolute_url(), _log_url(play)):
        html = client_for(play.ana).get(url).content.decode()
        assert XSS not in html
        assert f"en nombre de {ESCAPED}" in html


def _log_queries(world: World, user) -> int:
    """The roll log's first page computed (``pagina=x``: not from the cache), warm otherwise."""
    client = client_for(user)
    url = _log_url(world) + "?pagina=x"
    client.get(url)
    with CaptureQueriesContext(connection) as queries:
        html = client.get(url).content.decode()
    assert "en nombre de Bruno" in html
    return len(queries)


def test_the_roll_log_costs_the_same_with_1_or_4_rolls_made_on_behalf(play):
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    start(play, taken_by=play.ana, scene=play.scene)
    _post_with_roll(play, play.ana, play.tomas)
    one = _log_queries(play, play.reader)
    for _i in range(3):
        _post_with_roll(play, play.ana, play.tomas)
    assert _log_queries(play, play.reader) == one


def test_the_rolls_page_costs_no_more_for_a_roll_made_on_behalf(play):
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    start(play, taken_by=play.ana, scene=play.scene)
    warm, own, carried = (
        _post_with_roll(play, play.ana, play.ines),
        _post_with_roll(play, play.ana, play.ines),
        _post_with_roll(play, play.ana, play.tomas),
    )
    client = client_for(play.reader)
    client.get(warm.first.get_absolute_url())
    counts = []
    for table_roll in (own, carried):
        with CaptureQueriesContext(connection) as queries:
            client.get(table_roll.first.get_absolute_url())
        counts.append(len(queries))
    assert counts[1] <= counts[0]


# --- 2. who edits a post written on behalf ------------------------------------------------------


def test_only_the_direction_edits_a_post_written_on_behalf(play):
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    takeover = start(play, taken_by=play.ana, scene=play.scene)
    carried = _post_with_roll(play, play.ana, play.tomas).post
    own = _post_with_roll(play, play.ana, play.ines).post
    assert carried.on_behalf_of == play.bruno
    access = {user: campaign_access(user, play.campaign) for user in (play.gm, play.ana, play.bruno)}
    assert perms.can_edit_post(access[play.gm], carried)
    # Neither the taker (during the takeover or after it) nor the owner, who did not write it.
    assert not perms.can_edit_post(access[play.ana], carried)
    assert not perms.can_edit_post(access[play.bruno], carried)
    assert perms.can_edit_post(access[play.ana], own)
    edit = reverse("campaigns:post-edit", args=[carried.pk])
    assert client_for(play.ana).post(edit, {"body": "Otra cosa", "note": ""}).status_code == 403
    takeovers_end = reverse("table:takeover-end", args=[play.campaign.slug, takeover.pk])
    client_for(play.ana).post(takeovers_end, {"reason": ""})
    assert Takeover.objects.get().ended_at is not None
    assert client_for(play.ana).post(edit, {"body": "Otra cosa", "note": ""}).status_code == 403
    assert client_for(play.bruno).post(edit, {"body": "Otra cosa", "note": ""}).status_code == 403
    carried.refresh_from_db()
    assert carried.body == "Sujeto la puerta."
    forum_services.post_edit(access=access[play.gm], post=carried, body="Tomás sujeta la puerta.", note="")
    carried.refresh_from_db()
    assert carried.body == "Tomás sujeta la puerta."


def test_the_edit_link_is_not_offered_to_the_taker(play):
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    start(play, taken_by=play.ana, scene=play.scene)
    carried = _post_with_roll(play, play.ana, play.tomas).post
    edit = reverse("campaigns:post-edit", args=[carried.pk])
    assertNotContains(client_for(play.ana).get(play.scene.get_absolute_url()), f'href="{edit}"')
    assertContains(client_for(play.gm).get(play.scene.get_absolute_url()), f'href="{edit}"')


# --- 3. a player is named only for a scene they may write in ------------------------------------


def test_a_player_is_not_named_for_a_split_scene_they_are_not_in(play):
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    crypt = make_scene(play.campaign, title="La cripta", everyone=False, participants=[play.bruno])
    with pytest.raises(ValidationError) as refused:
        start(play, taken_by=play.ana, scene=crypt)
    assert refused.value.messages == [
        "Ana no puede escribir en la escena «La cripta»: elige otra escena o a otra persona."
    ]
    assert not Takeover.objects.exists()
    data = {"character": play.tomas.pk, "taken_by": play.ana.pk, "scene": crypt.pk, "reason": "Bruno falta"}
    url = reverse("table:takeover-start", args=[play.campaign.slug])
    for headers in ({}, {"HX-Request": "true"}):
        response = client_for(play.gm).post(url, data, headers=headers)
        assertContains(response, "Ana no puede escribir en la escena «La cripta»: elige otra escena o a otra persona.")
        assertContains(response, 'value="Bruno falta"')
    assert not Takeover.objects.exists()
    # In it, she may; and the direction may everywhere.
    crypt.participants.add(play.ana)
    assert start(play, taken_by=play.ana, scene=crypt).scene == crypt


def test_a_player_is_not_named_for_a_locked_scene(play):
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    locked = Scene.objects.create(campaign=play.campaign, title="El sótano", status=Scene.Status.LOCKED)
    with pytest.raises(ValidationError, match="Ana no puede escribir en la escena «El sótano»"):
        start(play, taken_by=play.ana, scene=locked)
    assert start(play, scene=locked).taken_by == play.gm


# --- 4. a refused hand-back keeps the reason --------------------------------------------------------


def test_a_refused_hand_back_comes_back_with_the_reason_typed(play):
    away(play, play.bruno)
    takeover = start(play)
    url = reverse("table:takeover-end", args=[play.campaign.slug, takeover.pk])
    reason = "Bruno vuelve antes " + "x" * 300
    page = client_for(play.gm).post(url, {"reason": reason})
    assert page.status_code == 200
    assertContains(page, "<html")
    assertContains(page, "Devolver un personaje llevado")
    assertContains(page, "Demasiado largo: como mucho 300 caracteres")
    assertContains(page, f'value="{reason}"')
    fragment = client_for(play.gm).post(url, {"reason": reason}, headers={"HX-Request": "true"})
    assert fragment.status_code == 200
    assertNotContains(fragment, "<html")
    assertContains(fragment, f'<form id="devolver-{takeover.pk}"')
    assertContains(fragment, f'value="{reason}"')
    assert fragment["HX-Retarget"] == f"#devolver-{takeover.pk}" and fragment["HX-Reswap"] == "outerHTML"
    assert Takeover.objects.current().filter(pk=takeover.pk).exists()
    # The owner's own form, refused, keeps its button.
    page = client_for(play.bruno).post(url, {"reason": XSS + "x" * 300})
    assertContains(page, "Recuperar mi personaje")
    assert XSS not in page.content.decode()


def test_the_reason_typed_in_the_panel_goes_to_the_log(play):
    away(play, play.bruno)
    takeover = start(play)
    dashboard = client_for(play.gm).get(reverse("campaigns:dashboard", args=[play.campaign.slug]))
    assertContains(dashboard, f'<form id="devolver-{takeover.pk}"')
    assertContains(dashboard, f'for="motivo-devolver-{takeover.pk}"')
    url = reverse("table:takeover-end", args=[play.campaign.slug, takeover.pk])
    client_for(play.gm).post(url, {"reason": "  Bruno  ha vuelto "})
    takeover.refresh_from_db()
    assert takeover.ended_at is not None
    log = ModerationLog.objects.get(action=ModerationAction.TAKEOVER_ENDED)
    assert log.reason.endswith("Bruno ha vuelto")


# --- 5. times in the campaign's time zone -----------------------------------------------------------


def test_the_panels_give_the_start_in_the_campaigns_time_zone(play):
    play.campaign.time_zone = "America/Bogota"
    play.campaign.save()
    away(play, play.bruno, consent=TakeoverConsent.GM_AND_NAMED)
    takeover = start(play, taken_by=play.ana, scene=play.scene)
    # 18:30 UTC: 13:30 in Bogotá, 19:30 in Madrid (the site's zone).
    Takeover.objects.filter(pk=takeover.pk).update(started_at=datetime(2026, 1, 15, 18, 30, tzinfo=UTC))
    dashboard = client_for(play.gm).get(reverse("campaigns:dashboard", args=[play.campaign.slug])).content.decode()
    campaign_page = client_for(play.bruno).get(play.campaign.get_absolute_url()).content.decode()
    for html in (dashboard, campaign_page):
        assert "desde el 15/01/2026 13:30" in html
        assert "19:30" not in html
