"""The roll card (issue 7, item 2): one partial in posts, on the permalink page
and in the roll log."""

from __future__ import annotations

from django.template.loader import render_to_string
from django.urls import reverse
from pytest_django.asserts import assertContains, assertNotContains

from campaigns.permissions import campaign_access
from rules import hitos
from systems.hitos.checks.services import check_setup, table_check, table_reroll
from table.cards import card
from table.models import TableRoll
from tests.conftest import World, client_for
from tests.factories import client_seed


def _roll(play: World, *, difficulty=15, hidden=False, purpose="Cruzar el jardín") -> TableRoll:
    setup = check_setup(play.ines, characteristic="reflejos", skill="Sigilo")
    return table_check(
        campaign=play.campaign,
        user=play.ana,
        setup=setup,
        purpose=purpose,
        difficulty=difficulty,
        difficulty_hidden=hidden,
        character=play.ines,
        scene=play.scene,
        post=play.post,
        client_seed=client_seed(),
    )


def _card(table_roll: TableRoll, user) -> str:
    table_roll = TableRoll.objects.select_related("latest", "campaign").get(pk=table_roll.pk)
    access = campaign_access(user, table_roll.campaign)
    return render_to_string(
        "table/_roll_card.html", {"card": card(table_roll.latest, access=access, table_roll=table_roll)}
    )


def test_the_card_shows_dice_letters_the_kept_die_total_difficulty_and_margin(play):
    table_roll = _roll(play)
    html = _card(table_roll, play.bruno)
    game = table_roll.latest.signed_game
    assert f'id="tirada-{table_roll.pk}"' in html
    for die, label in table_roll.latest.labelled_dice:
        kept = " roll-die-kept" if label == "C" else ""
        assert (
            f'roll-die{kept}"><span class="roll-die-value">{die}</span> <span class="roll-die-letter">{label}</span>'
            in html
        )
    assert f'<span class="roll-die-label roll-die-kept">C {game["C"]}</span>' in html
    assert f"valor {game['value']}" in html
    assert "Reflejos +6, Sigilo +3" in html
    assert f"Total {game['total']} (+9)" in html
    assert "dificultad 15" in html
    assert f"margen {game['total'] - 15:+d}" in html
    assert ("Éxito" in html) == game["success"] and ("Fallo" in html) != game["success"]
    assert f"firmada · {table_roll.latest.entry_hash[:12]}" in html
    assert f'href="{table_roll.latest.get_absolute_url()}"' in html


def test_after_a_positive_reroll_the_card_keeps_m_and_shows_the_chain(play):
    table_roll = _roll(play)
    original = table_roll.latest
    table_reroll(
        table_roll,
        user=play.ana,
        positions=[0, 2],
        reading=hitos.Reading.POSITIVE,
        activation="positive",
        aspect="Ágil como una gata",
    )
    html = _card(table_roll, play.ana)
    game = TableRoll.objects.get(pk=table_roll.pk).latest.signed_game
    assert f'<span class="roll-die-label roll-die-kept">M {game["M"]}</span>' in html
    assert f'<span class="roll-die-label">C {game["C"]}</span>' in html
    assert "lectura positiva" in html
    assert f'<s class="roll-chain-dice">[{", ".join(map(str, original.entry["dice"]))}]</s>' in html
    assert "repite los dados 1, 3 (activación positiva: «Ágil como una gata»)" in html


def test_after_a_negative_reroll_the_card_keeps_m(play):
    table_roll = _roll(play)
    table_reroll(table_roll, user=play.bruno, positions=[1], reading=hitos.Reading.NEGATIVE, activation="negative")
    html = _card(table_roll, play.ana)
    game = TableRoll.objects.get(pk=table_roll.pk).latest.signed_game
    assert f'<span class="roll-die-label roll-die-kept">m {game["m"]}</span>' in html
    assert "activación negativa" in html


def test_a_hidden_difficulty_shows_only_to_the_gm(play):
    table_roll = _roll(play, difficulty=18, hidden=True)
    player = _card(table_roll, play.ana)
    assert "dificultad oculta" in player and "dificultad 18" not in player and "oculta a los jugadores" not in player
    assert "margen" not in player
    assert ("Éxito" in player) or ("Fallo" in player)
    gm = _card(table_roll, play.gm)
    total = table_roll.latest.signed_game["total"]
    assert "dificultad 18 (oculta a los jugadores)" in gm
    assert f"margen {total - 18:+d}" in gm


def test_the_permalink_page_uses_the_card(play):
    table_roll = _roll(play, difficulty=18, hidden=True)
    url = table_roll.latest.get_absolute_url()
    response = client_for(None).get(url)
    assertContains(response, f'id="tirada-{table_roll.pk}"')
    assertContains(response, "dificultad oculta")
    assertNotContains(response, "margen")
    assertContains(client_for(play.gm).get(url), "dificultad 18 (oculta a los jugadores)")


def test_an_earlier_version_permalink_shows_its_own_card_without_actions(play):
    table_roll = _roll(play)
    original = table_roll.latest
    table_reroll(table_roll, user=play.ana, positions=[0], reading=hitos.Reading.POSITIVE)
    response = client_for(play.ana).get(original.get_absolute_url())
    assertContains(response, f'id="roll-card-{original.permalink}"')
    assertNotContains(response, f'id="tirada-{table_roll.pk}"')


def test_the_roll_log_uses_the_compact_card(play):
    table_roll = _roll(play, purpose="<b>Cruzar</b>")
    response = client_for(play.bruno).get(reverse("rolls:roll-log", args=[play.campaign.slug]))
    assertContains(response, "roll-card card roll-card-compact")
    assertContains(response, f"firmada · {table_roll.latest.entry_hash[:12]}")
    assertContains(response, "&lt;b&gt;Cruzar&lt;/b&gt;")
    fragment = client_for(play.bruno).get(
        reverse("rolls:roll-log", args=[play.campaign.slug]), headers={"HX-Request": "true"}
    )
    assertNotContains(fragment, "<html")
    assertContains(fragment, "roll-card-compact")


def test_the_card_reads_the_gm_from_the_readers_access(play):
    table_roll = _roll(play)
    as_gm, as_player = campaign_access(play.gm, play.campaign), campaign_access(play.ana, play.campaign)
    assert card(table_roll.latest, access=as_gm, table_roll=table_roll)["is_gm"] is True
    assert card(table_roll.latest, access=as_player, table_roll=table_roll)["is_gm"] is False
    assert card(table_roll.latest, access=as_player)["card_id"] == f"roll-card-{table_roll.latest.permalink}"


def test_a_roll_no_installed_system_reads_gets_the_plain_card(play):
    """A game key no system registered (a game uninstalled since): the log's
    plain body, no actions."""
    table_roll = _roll(play)
    entry = table_roll.latest
    entry.entry["game"]["system"] = "desconocido"
    plain = card(entry, access=campaign_access(play.ana, play.campaign), table_roll=table_roll)
    assert plain["body_template"] == "" and plain["actions_template"] == ""
    html = render_to_string("table/_roll_card.html", {"card": plain})
    assert " → " in html


def test_the_roll_log_leaves_out_rolls_of_whispers_the_reader_may_not_read(play):
    from campaigns.models import Post
    from systems.hitos.checks import services as table

    whisper = Post.objects.create(
        scene=play.scene,
        author=play.ana,
        character=play.ines,
        body="Robo la llave.",
        body_html="<p>Robo la llave.</p>",
        recipients=Post.Recipients.GM,
    )
    table.table_check(
        campaign=play.campaign,
        user=play.ana,
        setup=table.check_setup(play.ines, characteristic="reflejos", skill="Sigilo"),
        purpose="Robar la llave de Tomás",
        difficulty=15,
        character=play.ines,
        scene=play.scene,
        post=whisper,
        client_seed=client_seed(),
    )
    url = reverse("rolls:roll-log", args=[play.campaign.slug])
    assert "Robar la llave de Tomás" not in client_for(play.bruno).get(url).content.decode()
    assert "Robar la llave de Tomás" not in client_for(None).get(url).content.decode()
    assert "Robar la llave de Tomás" in client_for(play.ana).get(url).content.decode()
    assert "Robar la llave de Tomás" in client_for(play.gm).get(url).content.decode()


def test_the_gm_sees_a_hidden_difficulty_in_the_roll_log_and_players_do_not(play):
    from systems.hitos.checks import services as table

    table.table_check(
        campaign=play.campaign,
        user=play.ana,
        setup=table.check_setup(play.ines, characteristic="reflejos", skill="Sigilo"),
        purpose="Forzar la cerradura",
        difficulty=23,
        difficulty_hidden=True,
        character=play.ines,
        scene=play.scene,
        post=play.post,
        client_seed=client_seed(),
    )
    url = reverse("rolls:roll-log", args=[play.campaign.slug])
    assert "dificultad 23" in client_for(play.gm).get(url).content.decode()
    player_view = client_for(play.ana).get(url).content.decode()
    assert "dificultad 23" not in player_view and "dificultad oculta" in player_view
