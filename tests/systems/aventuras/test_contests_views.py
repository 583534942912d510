"""The scene's competitions, cooperations, initiative (A13, A19, A20) and
reactions (A14–A18) through the web: who may do what (outsiders 404,
members without the right 403), the htmx partial and the whole page,
refusals in Spanish with what was typed, and constant queries."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from campaigns.models import Visibility
from rules.aventuras import Tally
from systems.aventuras.contests import reactions, services
from systems.aventuras.contests.services import Side
from systems.aventuras.models import AventurasContest, AventurasContestant, AventurasInitiative, AventurasReaction
from systems.aventuras.rolls import services as rolls
from table.models import TableRoll
from tests.systems.aventuras.conftest import aventuras_character
from tests.systems.aventuras.test_contests import access_of, competition, cooperation, gm_access, queue_d6

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def d6(monkeypatch):
    return queue_d6(monkeypatch)


def url(world, name, *args):
    return reverse(f"aventuras:{name}", args=[world.campaign.slug, world.scene.pk, *args])


def private(world):
    world.campaign.visibility = Visibility.PRIVATE
    world.campaign.save(update_fields=["visibility"])


def cancel_data(contest, reason):
    return {f"anular-{contest.pk}-reason": reason}


def tied_fight(world):
    """Finn (the player's) and Jake (the other player's) tie in everything (A20)."""
    finn = aventuras_character(world.campaign, world.player, "Finn")
    jake = aventuras_character(world.campaign, world.other, "Jake")
    services.initiative_set(scene=world.scene, access=gm_access(world), characters=[finn, jake])
    return finn, jake


def contest_data(world, **extra):
    data = {
        "kind": "competition",
        "title": "La carrera <b>tras</b> el caballo",
        "difficulty": "0",
        "character_1": str(world.pc.pk),
        "attribute_1": "cachas",
        "difficulty_1": "0",
        "character_2": str(world.npc.pk),
        "attribute_2": "espabilado",
        "difficulty_2": "1",
    }
    data.update(extra)
    return data


# --- the page -------------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["gm", "player", "reader", "anonymous"])
def test_everyone_who_reads_the_scene_sees_the_page_and_the_partial(aventuras_world, who):
    world = aventuras_world
    competition(world, (world.pc, "cachas"), (world.npc, "espabilado"))
    client = world.client(who)
    page = client.get(url(world, "contests"))
    assert page.status_code == 200
    html = page.content.decode()
    assert "<html" in html and "La carrera tras el caballo" in html
    partial = client.get(url(world, "contests"), **HTMX)
    assert partial.status_code == 200
    assert "<html" not in partial.content.decode() and 'id="aventuras-contests"' in partial.content.decode()
    # Only the GM gets the set-up form.
    assert ("Preparar una competición" in html) is (who == "gm")


def test_outsiders_of_a_private_campaign_get_404(aventuras_world):
    world = aventuras_world
    private(world)
    contest = competition(world, (world.pc, "cachas"), (world.npc, "espabilado"))
    client = world.client("outsider")
    assert client.get(url(world, "contests")).status_code == 404
    assert client.post(url(world, "contest-create"), contest_data(world)).status_code == 404
    assert client.post(url(world, "contest-cancel", contest.pk), cancel_data(contest, "Porque sí")).status_code == 404
    side = AventurasContestant.objects.get(contest=contest, character=world.pc)
    assert client.post(url(world, "contest-roll", side.pk)).status_code == 404
    assert client.post(url(world, "initiative-set"), {"characters": [world.pc.pk]}).status_code == 404
    assert client.post(url(world, "initiative-agree"), {"orden": [world.pc.pk]}).status_code == 404
    assert AventurasContest.objects.count() == 1 and not TableRoll.objects.exists()
    assert AventurasContest.objects.get().cancelled_at is None


def test_outsiders_of_a_private_campaign_cannot_clear_or_break_the_initiative(aventuras_world, d6):
    world = aventuras_world
    tied_fight(world)
    private(world)
    client = world.client("outsider")
    for htmx in ({}, HTMX):
        assert client.post(url(world, "initiative-clear"), **htmx).status_code == 404
        assert client.post(url(world, "initiative-tiebreak"), **htmx).status_code == 404
    initiative = AventurasInitiative.objects.get()
    assert initiative.tiebreaks == {} and not TableRoll.objects.exists()


def test_anonymous_on_a_private_campaign_gets_404_like_the_scene_page(aventuras_world):
    world = aventuras_world
    private(world)
    competition(world, (world.pc, "cachas"), (world.npc, "espabilado"))
    client = world.client("anonymous")
    # As table.views.scene_detail answers the same visitor.
    assert client.get(world.scene.get_absolute_url()).status_code == 404
    assert client.get(url(world, "contests")).status_code == 404
    assert client.get(url(world, "contests"), **HTMX).status_code == 404
    # A member still reads it.
    assert world.client("reader").get(url(world, "contests")).status_code == 200


def test_another_games_campaign_is_404(aventuras_world):
    world = aventuras_world
    world.campaign.system = "vaesen"
    world.campaign.save(update_fields=["system"])
    assert world.client("gm").get(url(world, "contests")).status_code == 404


@pytest.mark.parametrize("who", ["player", "reader"])
def test_members_without_the_right_get_403(aventuras_world, who):
    world = aventuras_world
    contest = competition(world, (world.pc, "cachas"), (world.npc, "espabilado"))
    client = world.client(who)
    assert client.post(url(world, "contest-create"), contest_data(world)).status_code == 403
    assert client.post(url(world, "contest-cancel", contest.pk), cancel_data(contest, "Porque sí")).status_code == 403
    assert client.post(url(world, "initiative-set"), {"characters": [world.pc.pk]}).status_code == 403
    assert client.post(url(world, "initiative-clear")).status_code == 403
    npc_side = AventurasContestant.objects.get(contest=contest, character=world.npc)
    assert client.post(url(world, "contest-roll", npc_side.pk)).status_code == 403
    assert AventurasContest.objects.count() == 1 and not TableRoll.objects.exists()
    assert AventurasContest.objects.get().cancelled_at is None


# --- the GM sets up -------------------------------------------------------------------------


def test_gm_sets_up_a_competition_htmx_and_plain(aventuras_world):
    world = aventuras_world
    client = world.client("gm")
    response = client.post(url(world, "contest-create"), contest_data(world), **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="aventuras-contests"' in html and "La carrera &lt;b&gt;tras&lt;/b&gt; el caballo" in html
    contest = AventurasContest.objects.get()
    assert contest.kind == "competition"
    assert [(c.character, c.attribute, c.difficulty) for c in contest.contestants.all()] == [
        (world.pc, "cachas", 0),
        (world.npc, "espabilado", 1),
    ]
    response = client.post(url(world, "contest-create"), contest_data(world, kind="cooperation", difficulty="2"))
    assert response.status_code == 302 and response["Location"] == url(world, "contests")
    cooperation = AventurasContest.objects.get(kind="cooperation")
    assert cooperation.difficulty == 2
    # A19 — shown raised by +1 per extra helper.
    page = client.get(url(world, "contests")).content.decode()
    assert "Dificultad 2, +1 por cada ayudante de más: 3." in page


@pytest.mark.parametrize("htmx", [True, False])
def test_a_refused_set_up_keeps_what_was_typed(aventuras_world, htmx):
    world = aventuras_world
    data = contest_data(world, character_2="", attribute_2="", title="Comer bollos sin parar")
    response = world.client("gm").post(url(world, "contest-create"), data, **(HTMX if htmx else {}))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Una competición necesita al menos dos bandos." in html
    assert 'value="Comer bollos sin parar"' in html
    assert ("<html" in html) is not htmx
    assert not AventurasContest.objects.exists()


def test_a_side_without_attribute_is_refused(aventuras_world):
    world = aventuras_world
    data = contest_data(world, attribute_2="")
    html = world.client("gm").post(url(world, "contest-create"), data, **HTMX).content.decode()
    assert "Elige el atributo que tira." in html
    assert not AventurasContest.objects.exists()


def test_gm_cancels_saying_why_and_everyone_sees_who_and_why(aventuras_world):
    world = aventuras_world
    contest = competition(world, (world.pc, "cachas"), (world.npc, "espabilado"))
    client = world.client("gm")
    # Before confirming, the GM reads that the hero points spent stay spent (A22).
    page = client.get(url(world, "contests")).content.decode()
    assert "Los puntos de Héroe gastados en sus tiradas no se devuelven." in page
    assert f'name="anular-{contest.pk}-reason"' in page
    response = client.post(
        url(world, "contest-cancel", contest.pk), cancel_data(contest, "El caballo <b>huye</b>"), **HTMX
    )
    assert response.status_code == 200
    html = response.content.decode()
    shown = f"Anulada por {world.gm.public_name}: El caballo &lt;b&gt;huye&lt;/b&gt;"
    assert "<html" not in html and shown in html
    contest.refresh_from_db()
    assert contest.cancelled_at is not None
    assert (contest.cancelled_by, contest.cancel_reason) == (world.gm, "El caballo <b>huye</b>")
    side = AventurasContestant.objects.get(contest=contest, character=world.pc)
    for who in ("reader", "player", "anonymous"):
        html = world.client(who).get(url(world, "contests")).content.decode()
        assert shown in html and ">anulada<" in html and "<b>huye</b>" not in html
        # Nobody rolls in it or cancels it again.
        assert url(world, "contest-roll", side.pk) not in html
        assert url(world, "contest-cancel", contest.pk) not in html
    scene_page = world.client("reader").get(world.scene.get_absolute_url()).content.decode()
    assert shown in scene_page
    again = client.post(url(world, "contest-cancel", contest.pk), cancel_data(contest, "Otra vez"), **HTMX)
    assert "Ya estaba anulada." in again.content.decode()
    contest.refresh_from_db()
    assert contest.cancel_reason == "El caballo <b>huye</b>"


@pytest.mark.parametrize("htmx", [True, False])
@pytest.mark.parametrize(
    ("typed", "message"),
    [("", "Explica por qué se anula."), ("   ", "Explica por qué se anula."), ("x" * 301, "como mucho 300 caracteres")],
)
def test_cancelling_without_a_good_reason_is_refused_with_what_was_typed(aventuras_world, htmx, typed, message):
    world = aventuras_world
    contest = competition(world, (world.pc, "cachas"), (world.npc, "espabilado"))
    response = world.client("gm").post(
        url(world, "contest-cancel", contest.pk), cancel_data(contest, typed), **(HTMX if htmx else {})
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert message in html and ("<html" in html) is not htmx
    if typed.strip():
        assert f'value="{typed}"' in html
    # The form stays open, with its warning.
    assert '<details class="mt-1" open>' in html and "no se devuelven" in html
    contest.refresh_from_db()
    assert (contest.cancelled_at, contest.cancelled_by, contest.cancel_reason) == (None, None, "")


def test_cancel_without_htmx_redirects_and_its_refusal_shows_the_page(aventuras_world, d6):
    world = aventuras_world
    contest = competition(world, (world.pc, "cachas"), (world.npc, "espabilado"))
    client = world.client("gm")
    response = client.post(url(world, "contest-cancel", contest.pk), cancel_data(contest, "Se acaba la sesión"))
    assert response.status_code == 302 and response["Location"] == url(world, "contests")
    contest.refresh_from_db()
    assert contest.cancelled_by == world.gm and contest.cancel_reason == "Se acaba la sesión"
    # A resolved one cannot be called off: the page says why.
    resolved = competition(world, (world.npc, "espabilado"), (world.other_pc, "cachas"), title="Otra")
    d6.extend([[1, 2, 3], [1, 2]])
    services.contest_roll(
        contestant=AventurasContestant.objects.get(contest=resolved, character=world.npc), access=access_of(world, "gm")
    )
    other = services.contest_roll(
        contestant=AventurasContestant.objects.get(contest=resolved, character=world.other_pc),
        access=access_of(world, "other"),
    )
    rolls.settle(other, by=world.other)
    refused = client.post(url(world, "contest-cancel", resolved.pk), cancel_data(resolved, "Tarde"))
    html = refused.content.decode()
    assert refused.status_code == 200 and "<html" in html and "Ya está resuelta: no se puede anular." in html
    resolved.refresh_from_db()
    assert resolved.cancelled_at is None


# --- participants roll ------------------------------------------------------------------------


def test_each_controller_rolls_their_side_and_everyone_sees_the_result(aventuras_world, d6):
    world = aventuras_world
    contest = competition(world, (world.pc, "cachas"), (world.npc, "espabilado"))
    mine = AventurasContestant.objects.get(contest=contest, character=world.pc)
    theirs = AventurasContestant.objects.get(contest=contest, character=world.npc)
    # The other player may not roll Palomita's side.
    assert world.client("other").post(url(world, "contest-roll", mine.pk), **HTMX).status_code == 403
    d6.extend([[4, 4, 1], [5, 1, 1]])
    response = world.client("player").post(
        url(world, "contest-roll", mine.pk), {f"lado-{mine.pk}-modifier": "0"}, **HTMX
    )
    assert response.status_code == 200
    mine.refresh_from_db()
    assert mine.roll is not None and mine.roll.kind == "contest" and mine.roll.post_id is None
    # Rolling twice for one side: refused in Spanish, nothing rolled.
    count = TableRoll.objects.count()
    again = world.client("player").post(url(world, "contest-roll", mine.pk), {f"lado-{mine.pk}-modifier": "0"}, **HTMX)
    assert "ya ha tirado" in again.content.decode()
    assert TableRoll.objects.count() == count
    world.client("gm").post(url(world, "contest-roll", theirs.pk), {f"lado-{theirs.pk}-modifier": "0"})
    rolls.settle(TableRoll.objects.get(pk=mine.roll_id), by=world.player)
    contest.refresh_from_db()
    assert contest.result["winners"] == [world.pc.pk]
    page = world.client("reader").get(url(world, "contests")).content.decode()
    assert "Gana Palomita" in page and "más éxitos normales" in page


def test_a_bad_modifier_comes_back_with_its_error(aventuras_world):
    world = aventuras_world
    contest = competition(world, (world.pc, "cachas"), (world.npc, "espabilado"))
    mine = AventurasContestant.objects.get(contest=contest, character=world.pc)
    response = world.client("player").post(
        url(world, "contest-roll", mine.pk), {f"lado-{mine.pk}-modifier": "99"}, **HTMX
    )
    html = response.content.decode()
    assert "Escribe un número de 10 o menos." in html and 'value="99"' in html
    assert not TableRoll.objects.exists()


def test_a_refused_roll_without_htmx_shows_the_page_with_what_was_typed(aventuras_world):
    world = aventuras_world
    contest = competition(world, (world.pc, "cachas"), (world.npc, "espabilado"))
    mine = AventurasContestant.objects.get(contest=contest, character=world.pc)
    tool = world.pc.aventuras.tools.get()
    prefix = f"lado-{mine.pk}"
    data = {f"{prefix}-modifier": "99", f"{prefix}-tool": str(tool.pk), f"{prefix}-hero_point": "on"}
    response = world.client("player").post(url(world, "contest-roll", mine.pk), data)
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" in html and "Escribe un número de 10 o menos." in html
    assert 'value="99"' in html
    assert re.search(rf'<option value="{tool.pk}"\s+selected', html)
    assert re.search(rf'name="{prefix}-hero_point"[^>]*checked', html)
    assert not TableRoll.objects.exists()
    world.pc.aventuras.refresh_from_db()
    assert world.pc.aventuras.hero_points == 5


def test_a_roll_without_htmx_redirects_to_the_panel(aventuras_world, d6):
    world = aventuras_world
    contest = competition(world, (world.pc, "cachas"), (world.npc, "espabilado"))
    mine = AventurasContestant.objects.get(contest=contest, character=world.pc)
    d6.extend([[4, 2, 1]])
    response = world.client("player").post(url(world, "contest-roll", mine.pk), {f"lado-{mine.pk}-modifier": "0"})
    assert response.status_code == 302 and response["Location"] == url(world, "contests")
    mine.refresh_from_db()
    assert mine.roll is not None and mine.roll.kind == "contest"


# --- initiative ---------------------------------------------------------------------------------


def test_initiative_set_shown_to_all_and_tie_break_button(aventuras_world, d6):
    world = aventuras_world
    from tests.systems.aventuras.conftest import aventuras_character

    finn = aventuras_character(world.campaign, world.player, "Finn")
    client = world.client("gm")
    response = client.post(url(world, "initiative-set"), {"characters": [finn.pk, world.pc.pk]}, **HTMX)
    assert response.status_code == 200
    assert set(AventurasInitiative.objects.get().characters.all()) == {finn, world.pc}
    # Palomita (Cachas 3) before Finn (Cachas 2): no tie, no button.
    html = world.client("reader").get(url(world, "contests")).content.decode()
    assert html.index("Palomita") < html.index("Finn") and "Tirar para desempatar" not in html
    jake = aventuras_character(world.campaign, world.other, "Jake")
    client.post(url(world, "initiative-set"), {"characters": [finn.pk, jake.pk]})
    assert "Tirar para desempatar" in world.client("player").get(url(world, "contests")).content.decode()
    assert "Tirar para desempatar" not in world.client("reader").get(url(world, "contests")).content.decode()
    assert world.client("reader").post(url(world, "initiative-tiebreak")).status_code == 403
    d6.extend([[2], [6]])
    # A20 — the player rolls for Finn only, then Jake's player for Jake.
    assert world.client("player").post(url(world, "initiative-tiebreak"), **HTMX).status_code == 200
    assert list(AventurasInitiative.objects.get().tiebreaks) == [str(finn.pk)]
    again = world.client("player").post(url(world, "initiative-tiebreak"), **HTMX).content.decode()
    assert "falta que tiren los demás" in again
    assert world.client("other").post(url(world, "initiative-tiebreak"), **HTMX).status_code == 200
    assert len(AventurasInitiative.objects.get().tiebreaks) == 2
    refused = world.client("gm").post(url(world, "initiative-tiebreak"), **HTMX).content.decode()
    assert "No hay empates que desempatar." in refused


def test_the_gm_agreed_order_shown_to_all(aventuras_world):
    """A20 «se pongan de acuerdo»: the GM's order for a tie, without dice."""
    world = aventuras_world
    from tests.systems.aventuras.conftest import aventuras_character

    finn = aventuras_character(world.campaign, world.player, "Finn")
    jake = aventuras_character(world.campaign, world.other, "Jake")
    world.client("gm").post(url(world, "initiative-set"), {"characters": [finn.pk, jake.pk]})
    page = world.client("gm").get(url(world, "contests")).content.decode()
    assert "Orden acordado (sin dados)" in page
    assert "Orden acordado (sin dados)" not in world.client("player").get(url(world, "contests")).content.decode()
    assert world.client("reader").post(url(world, "initiative-agree"), {"orden": [jake.pk, finn.pk]}).status_code == 403
    assert world.client("player").post(url(world, "initiative-agree"), {"orden": [jake.pk, finn.pk]}).status_code == 403
    bad = world.client("gm").post(url(world, "initiative-agree"), {"orden": [jake.pk, jake.pk]}, **HTMX)
    html = bad.content.decode()
    assert bad.status_code == 200 and "cada uno una sola vez" in html
    assert services.AGREED not in AventurasInitiative.objects.get().tiebreaks
    ok = world.client("gm").post(url(world, "initiative-agree"), {"orden": [jake.pk, finn.pk]}, **HTMX)
    assert ok.status_code == 200
    for who in ("reader", "player"):
        html = world.client(who).get(url(world, "contests")).content.decode()
        assert "orden acordado" in html and html.index("Jake") < html.index("Finn")
        assert "Tirar para desempatar" not in html


def test_the_agreed_order_without_htmx(aventuras_world):
    world = aventuras_world
    finn, jake = tied_fight(world)
    client = world.client("gm")
    # Refused: the whole page, the refusal and the order as it was chosen (Jake twice).
    bad = client.post(url(world, "initiative-agree"), {"orden": [jake.pk, jake.pk]})
    assert bad.status_code == 200
    html = bad.content.decode()
    assert "<html" in html and "cada uno una sola vez" in html
    assert len(re.findall(rf'<option value="{jake.pk}" selected>', html)) == 2
    assert f'<option value="{finn.pk}" selected>' not in html
    assert services.AGREED not in AventurasInitiative.objects.get().tiebreaks
    ok = client.post(url(world, "initiative-agree"), {"orden": [jake.pk, finn.pk]})
    assert ok.status_code == 302 and ok["Location"] == url(world, "contests")
    assert AventurasInitiative.objects.get().tiebreaks[services.AGREED] == [[jake.pk, finn.pk]]


def test_gm_clears_the_initiative_htmx_and_plain(aventuras_world):
    world = aventuras_world
    client = world.client("gm")
    services.initiative_set(scene=world.scene, access=gm_access(world), characters=[world.pc, world.npc])
    response = client.post(url(world, "initiative-clear"), **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html and "No hay orden de iniciativa en esta escena." in html
    assert not AventurasInitiative.objects.exists()
    services.initiative_set(scene=world.scene, access=gm_access(world), characters=[world.pc])
    plain = client.post(url(world, "initiative-clear"))
    assert plain.status_code == 302 and plain["Location"] == url(world, "contests")
    assert not AventurasInitiative.objects.exists()
    # Nothing to clear: the refusal in Spanish, in the panel or as the page's message.
    refused = client.post(url(world, "initiative-clear"), **HTMX).content.decode()
    assert "Esta escena no tiene orden de iniciativa." in refused
    followed = client.post(url(world, "initiative-clear"), follow=True).content.decode()
    assert "<html" in followed and "Esta escena no tiene orden de iniciativa." in followed


def test_the_tie_break_without_htmx(aventuras_world, d6):
    world = aventuras_world
    finn, _jake = tied_fight(world)
    d6.extend([[4]])
    response = world.client("player").post(url(world, "initiative-tiebreak"))
    assert response.status_code == 302 and response["Location"] == url(world, "contests")
    assert AventurasInitiative.objects.get().tiebreaks == {str(finn.pk): [TableRoll.objects.get(kind="tiebreak").pk]}
    # Again before Jake rolls: refused, said on the page it goes back to.
    followed = world.client("player").post(url(world, "initiative-tiebreak"), follow=True).content.decode()
    assert "<html" in followed and "falta que tiren los demás" in followed
    assert TableRoll.objects.filter(kind="tiebreak").count() == 1


def test_initiative_refusals_keep_the_choice(aventuras_world):
    world = aventuras_world
    html = world.client("gm").post(url(world, "initiative-set"), {"characters": ["999999"]}, **HTMX).content.decode()
    assert "Ese personaje no está en la partida." in html
    assert not AventurasInitiative.objects.exists()


# --- reactions ---------------------------------------------------------------------------------


def _action_with_reaction(world, d6, target):
    d6.extend([[4, 4, 1]])
    setup = rolls.roll_setup(world.pc, attribute="cachas", difficulty=1)
    action = rolls.make_roll(
        campaign=world.campaign, user=world.player, setup=setup, purpose="Atizar", character=world.pc, scene=world.scene
    )
    (reaction,) = reactions.open_reactions(action, [target], by=world.player)
    return action, reaction


def counted(get) -> tuple[int, object]:
    """The queries one request makes (counted as they run: a request resets
    the connection's query log when it starts), and its response."""
    calls = []

    def count(execute, sql, params, many, context):
        calls.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        response = get()
    return len(calls), response


def rurl(world, name, reaction):
    return reverse(f"aventuras:{name}", args=[world.campaign.slug, reaction.pk])


def test_react_from_the_card_htmx_and_plain(aventuras_world, d6):
    world = aventuras_world
    action, reaction = _action_with_reaction(world, d6, world.npc)
    prefix = f"reaccion-{reaction.pk}"
    assert world.client("player").post(rurl(world, "reaction-roll", reaction), {}).status_code == 403
    d6.extend([[5, 5, 5]])
    response = world.client("gm").post(
        rurl(world, "reaction-roll", reaction), {f"{prefix}-attribute": "espabilado", f"{prefix}-modifier": "0"}, **HTMX
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert f'id="reacciones-{action.pk}"' in html and "reacciona" in html
    reaction.refresh_from_db()
    assert reaction.roll.kind == "reaction" and reaction.roll.post_id is None and reaction.roll.scene == world.scene
    # A reaction with more successes blocks the action completely (A16), once both are final.
    rolls.settle(TableRoll.objects.get(pk=action.pk), by=world.player)
    if not rolls.is_final(TableRoll.objects.get(pk=reaction.roll_id)):
        rolls.settle(TableRoll.objects.get(pk=reaction.roll_id), by=world.gm)
    again = world.client("gm").post(rurl(world, "reaction-decline", reaction), **HTMX).content.decode()
    assert "ya ha reaccionado" in again and "Bloqueada por completo." in again


def test_decline_plain_post_redirects_to_the_scene(aventuras_world, d6):
    world = aventuras_world
    _action, reaction = _action_with_reaction(world, d6, world.other_pc)
    response = world.client("other").post(rurl(world, "reaction-decline", reaction))
    assert response.status_code == 302 and response["Location"] == world.scene.get_absolute_url()
    reaction.refresh_from_db()
    assert reaction.declined_at is not None and reaction.declined_by == world.other


def test_react_without_htmx_redirects_to_the_scene(aventuras_world, d6):
    world = aventuras_world
    _action, reaction = _action_with_reaction(world, d6, world.other_pc)
    prefix = f"reaccion-{reaction.pk}"
    d6.extend([[5, 1]])
    response = world.client("other").post(
        rurl(world, "reaction-roll", reaction), {f"{prefix}-attribute": "cachas", f"{prefix}-modifier": "0"}
    )
    assert response.status_code == 302 and response["Location"] == world.scene.get_absolute_url()
    reaction.refresh_from_db()
    assert reaction.roll is not None and reaction.roll.kind == "reaction" and reaction.roll.owner == world.other


def test_outsiders_of_a_private_campaign_cannot_react(aventuras_world, d6):
    world = aventuras_world
    _action, reaction = _action_with_reaction(world, d6, world.other_pc)
    private(world)
    prefix = f"reaccion-{reaction.pk}"
    data = {f"{prefix}-attribute": "cachas", f"{prefix}-modifier": "0"}
    count = TableRoll.objects.count()
    for htmx in ({}, HTMX):
        assert world.client("outsider").post(rurl(world, "reaction-roll", reaction), data, **htmx).status_code == 404
    reaction.refresh_from_db()
    assert reaction.open and TableRoll.objects.count() == count


def test_reaction_permissions(aventuras_world, d6):
    world = aventuras_world
    _action, reaction = _action_with_reaction(world, d6, world.other_pc)
    assert world.client("reader").post(rurl(world, "reaction-decline", reaction)).status_code == 403
    assert world.client("player").post(rurl(world, "reaction-decline", reaction)).status_code == 403
    # The GM answers for the GM's characters only.
    assert world.client("gm").post(rurl(world, "reaction-decline", reaction)).status_code == 403
    private(world)
    assert world.client("outsider").post(rurl(world, "reaction-decline", reaction)).status_code == 404
    reaction.refresh_from_db()
    assert reaction.open


def test_a_bad_reaction_form_keeps_what_was_typed(aventuras_world, d6):
    world = aventuras_world
    _action, reaction = _action_with_reaction(world, d6, world.other_pc)
    prefix = f"reaccion-{reaction.pk}"
    data = {f"{prefix}-attribute": "fuerza", f"{prefix}-modifier": "3"}
    page = world.client("other").post(rurl(world, "reaction-roll", reaction), data)
    assert page.status_code == 200
    html = page.content.decode()
    assert "Elige uno de los cuatro atributos." in html and 'value="3"' in html and "<html" in html
    partial = world.client("other").post(rurl(world, "reaction-roll", reaction), data, **HTMX).content.decode()
    assert "Elige uno de los cuatro atributos." in partial and "<html" not in partial
    assert AventurasReaction.objects.get().open


# --- constant queries ---------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["gm", "player"])
def test_the_panel_keeps_a_constant_number_of_queries(aventuras_world, d6, who):
    world = aventuras_world
    client = world.client(who)

    def add(n):
        for i in range(n):
            contest = services.contest_create(
                scene=world.scene,
                access=gm_access(world),
                kind="competition",
                title=f"Prueba {i}",
                sides=[Side(world.pc, "cachas"), Side(world.npc, "espabilado")],
            )
            d6.extend([[4, 1, 1]])
            services.contest_roll(
                contestant=AventurasContestant.objects.select_related(
                    "contest__campaign", "contest__scene", "character"
                ).get(contest=contest, character=world.npc),
                access=access_of(world, "gm"),
            )

    services.initiative_set(scene=world.scene, access=gm_access(world), characters=[world.pc, world.npc])
    add(1)
    client.get(url(world, "contests"))
    one, _response = counted(lambda: client.get(url(world, "contests"), **HTMX))
    assert 5 < one <= 30
    add(4)
    many, response = counted(lambda: client.get(url(world, "contests"), **HTMX))
    assert many <= one
    assert response.content.decode().count('class="aventuras-contest ') == 5
    # Contests called off stay listed with who and why, in the same queries.
    for contest in AventurasContest.objects.all()[:3]:
        services.contest_cancel(contest=contest, access=gm_access(world), reason=f"Anulada {contest.pk}")
    cancelled, response = counted(lambda: client.get(url(world, "contests"), **HTMX))
    assert cancelled <= one
    html = response.content.decode()
    assert html.count('class="aventuras-contest ') == 5 and html.count(f"Anulada por {world.gm.public_name}:") == 3


def test_the_scene_page_shows_the_panel(aventuras_world):
    world = aventuras_world
    competition(world, (world.pc, "cachas"), (world.npc, "espabilado"))
    html = world.client("reader").get(world.scene.get_absolute_url()).content.decode()
    assert 'id="aventuras-contests"' in html and "La carrera tras el caballo" in html


def test_the_scene_page_keeps_its_queries_as_contests_grow(aventuras_world, d6):
    world = aventuras_world
    client = world.client("gm")

    def add(n):
        for i in range(n):
            contest = competition(world, (world.pc, "cachas"), (world.npc, "espabilado"), title=f"Prueba {i}")
            d6.extend([[4, 1, 1]])
            services.contest_roll(
                contestant=AventurasContestant.objects.select_related(
                    "contest__campaign", "contest__scene", "character"
                ).get(contest=contest, character=world.npc),
                access=access_of(world, "gm"),
            )

    add(1)
    client.get(world.scene.get_absolute_url())
    one, _response = counted(lambda: client.get(world.scene.get_absolute_url()))
    assert 10 < one <= 80
    add(3)
    client.get(world.scene.get_absolute_url())
    many, response = counted(lambda: client.get(world.scene.get_absolute_url()))
    assert many <= one
    html = response.content.decode()
    assert html.count('class="aventuras-contest ') == 4


def test_an_action_in_a_post_shows_its_reactions_and_the_targets_buttons(aventuras_world, d6):
    from campaigns.models import Post
    from tests.factories import make_post

    world = aventuras_world
    post = make_post(world.scene, world.player, voice=Post.Voice.CHARACTER, character=world.pc)
    d6.extend([[4, 4, 1]])
    setup = rolls.roll_setup(world.pc, attribute="cachas")
    action = rolls.make_roll(
        campaign=world.campaign,
        user=world.player,
        setup=setup,
        purpose="Atizar",
        character=world.pc,
        scene=world.scene,
        post=post,
    )
    reactions.open_reactions(action, [world.other_pc, world.npc], by=world.player)
    html = world.client("other").get(world.scene.get_absolute_url()).content.decode()
    assert f'id="reacciones-{action.pk}"' in html and "Tarta Dulce" in html
    assert html.count("No reaccionar") == 1  # Tarta Dulce's, not the Profesor's
    reader = world.client("reader").get(world.scene.get_absolute_url()).content.decode()
    assert "esperando su reacción" in reader and "No reaccionar" not in reader


# --- words and announcements ------------------------------------------------------------------


def _resolve_with(contest, *tallies):
    """Store the result ``contest_result`` computes for these tallies, as resolved."""
    contestants = list(contest.contestants.select_related("character"))
    contest.result = services.contest_result(contest, list(zip(contestants, tallies, strict=True)))
    contest.resolved_at = timezone.now()
    contest.save(update_fields=["result", "resolved_at"])


def test_the_results_say_one_success_in_the_singular(aventuras_world):
    world = aventuras_world
    # A19 — pooled: 1 normal and 1 chachi against 0 + 1 for the extra helper.
    pooled = cooperation(world, (world.pc, "espabilado"), (world.npc, "espabilado"), difficulty=0)
    _resolve_with(pooled, Tally(normals=1), Tally(chachis=1))
    # A13 — Palomita gets through with 1 normal and 1 chachi.
    race = competition(world, (world.pc, "cachas"), (world.npc, "espabilado"), title="Otra carrera")
    _resolve_with(race, Tally(normals=1, chachis=1), Tally())
    html = " ".join(world.client("reader").get(url(world, "contests")).content.decode().split())
    assert "Entre todos: 1 éxito normal y 1 éxito chachi contra dificultad 1." in html
    assert "lo consigue (dificultad 0), con 1 éxito normal y 1 chachi" in html
    assert "1 éxitos" not in html and "1 chachis" not in html
    many = cooperation(world, (world.pc, "espabilado"), (world.npc, "espabilado"), difficulty=0, title="Más")
    _resolve_with(many, Tally(normals=2, chachis=1), Tally(chachis=1))
    html = " ".join(world.client("reader").get(url(world, "contests")).content.decode().split())
    assert "Entre todos: 2 éxitos normales y 2 éxitos chachis contra dificultad 1." in html


def test_only_the_message_is_a_live_region(aventuras_world, d6):
    world = aventuras_world
    client = world.client("gm")
    html = client.post(url(world, "initiative-clear"), **HTMX).content.decode()
    (section,) = re.findall(r'<section id="aventuras-contests"[^>]*>', html)
    assert "aria-live" not in section
    # The refusal is inside the one live region of the panel.
    assert html.count("aria-live") == 1
    status = html[html.index('id="aventuras-contests-status"') :]
    assert 'aria-live="polite"' in status[:60]
    region = status[: status.index("</div></div>") + len("</div></div>")]
    assert "Esta escena no tiene orden de iniciativa." in region and 'role="alert"' in region
    # The same for a card's reactions: declining twice is refused inside the live region only.
    _action, reaction = _action_with_reaction(world, d6, world.npc)
    client.post(rurl(world, "reaction-decline", reaction), **HTMX)
    part = client.post(rurl(world, "reaction-decline", reaction), **HTMX).content.decode()
    (wrapper,) = re.findall(r'<div class="aventuras-reactions[^>]*>', part)
    assert "aria-live" not in wrapper and part.count("aria-live") == 1
    live = part[part.index('aria-live="polite"') :]
    assert "ya ha decidido no reaccionar" in live[: live.index("</div></div>")]
