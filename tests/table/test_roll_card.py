"""The roll card (issue 7, item 2): one partial in posts, on the permalink page
and in the roll log."""

from __future__ import annotations

import re

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


def _text(html: str) -> str:
    """The card's HTML with its runs of white space made single spaces."""
    return " ".join(html.split())


def test_the_card_shows_dice_letters_the_kept_die_total_difficulty_and_margin(play, dice):
    dice.append([4, 7, 9])
    table_roll = _roll(play)
    html = _text(_card(table_roll, play.bruno))
    assert f'id="tirada-{table_roll.pk}"' in html
    # As rolled, each with its letter; C counts (H2) and says so in words, not by an underline.
    assert (
        '<span class="roll-die-value">4</span> <abbr class="roll-die-letter" title="m: menor, el dado más bajo">m</abbr></li>'
        in html
    )
    assert (
        '<li class="list-inline-item roll-die roll-die-kept"><span class="roll-die-value">7</span> '
        '<abbr class="roll-die-letter" title="C: central, el dado del medio">C</abbr> '
        '<span class="roll-die-counts">cuenta</span></li>'
    ) in html
    assert (
        '<span class="roll-die-value">9</span> <abbr class="roll-die-letter" title="M: mayor, el dado más alto">M</abbr></li>'
        in html
    )
    assert html.count("roll-die-kept") == 1
    assert "Cuenta el dado central (C), el del medio de los tres." in html
    assert "<strong>Total 16</strong> = 7 (dado C) + 9 (Reflejos +6, Sigilo +3), contra dificultad 15." in html
    assert '<span class="badge text-bg-success text-wrap">Éxito</span>' in html
    assert "Supera la dificultad por 1 punto." in html and "(margen +1)" in html
    assert "Fallo" not in html
    assert "<summary>¿Cómo se lee?</summary>" in html
    assert f"firmada · {table_roll.latest.entry_hash[:12]}" in html
    assert f'href="{table_roll.latest.get_absolute_url()}"' in html


def test_after_a_positive_reroll_the_card_says_what_counts_and_what_changed(play):
    table_roll = _roll(play)
    original = table_roll.latest
    table_reroll(
        table_roll,
        user=play.ana,
        positions=[0, 2],
        reading=hitos.Reading.POSITIVE,
        activation="positive",
        aspect="Ágil como una gata",
        payment="point",
    )
    html = _text(_card(table_roll, play.ana))
    game = TableRoll.objects.get(pk=table_roll.pk).latest.signed_game
    if game["value"] == game["M"]:
        # H15 — after a positive activation the roll is worth M.
        assert "Tras activar un aspecto a favor, cuenta el dado mayor (M)." in html
        assert f"<strong>Total {game['total']}</strong> = {game['M']} (dado M) + 9" in html
    else:
        # H15 — «las parejas o tríos se suman … pudiendo reemplazar al valor M».
        assert "se suma y cuenta en lugar del dado mayor (M)." in html
        assert f"<strong>Total {game['total']}</strong> = {game['value']} (" in html
    first = original.signed_game
    assert (
        f'<s class="roll-chain-dice">[{", ".join(map(str, original.entry["dice"]))}]</s></a> '
        f"— total {first['total']}, {'éxito' if first['success'] else 'fallo'}"
    ) in html
    assert (
        "repite los dados 1, 3 (aspecto «Ágil como una gata» activado a favor; pago: un punto dramático): "
        f'<span class="roll-chain-dice">[{", ".join(map(str, game_dice(table_roll)))}]</span> '
        f"— total {game['total']}, {'éxito' if game['success'] else 'fallo'}"
    ) in html
    # The payment's label, never its code.
    assert re.search(r"\bpoint\b", html) is None


def game_dice(table_roll: TableRoll) -> list[int]:
    return TableRoll.objects.get(pk=table_roll.pk).latest.entry["dice"]


def test_after_a_negative_reroll_the_card_keeps_m_or_the_negative_pair(play):
    table_roll = _roll(play)
    table_reroll(
        table_roll,
        user=play.bruno,
        positions=[1],
        reading=hitos.Reading.NEGATIVE,
        activation="negative",
        payment="gm_pool",
    )
    html = _text(_card(table_roll, play.ana))
    game = TableRoll.objects.get(pk=table_roll.pk).latest.signed_game
    if game["value"] == game["m"]:
        # H19 — «debe escogerse el resultado del dado menor (m)».
        assert "Tras activar un aspecto en contra, cuenta el dado menor (m)." in html
        assert f"= {game['m']} (dado m) + 9" in html
    else:
        # H19 — «dos seises equivaldrían a –6».
        assert game["value"] < 0
        assert "cuenta como su número en negativo, en lugar del dado menor (m)." in html
        assert f"= {game['value']} (" in html and "en negativo) + 9" in html
    assert "repite los dados 2 (aspecto activado en contra; pago: un punto de la reserva de la dirección)" in html
    assert "gm_pool" not in html


def test_a_hidden_difficulty_shows_only_to_the_gm(play, dice):
    dice.append([3, 5, 8])
    table_roll = _roll(play, difficulty=18, hidden=True)
    player = _text(_card(table_roll, play.ana))
    assert "dificultad oculta" in player and "dificultad 18" not in player and "oculta a los jugadores" not in player
    assert "margen" not in player and "Supera la dificultad" not in player and "Se queda a" not in player
    assert ("Éxito" in player) or ("Fallo" in player)
    assert "La dirección no muestra la dificultad, solo si se ha superado." in player
    gm = _card(table_roll, play.gm)
    total = table_roll.latest.signed_game["total"]
    assert "contra dificultad 18 (oculta a los jugadores)" in gm
    assert f"margen {total - 18:+d}" in gm
    assert total == 14 and "Se queda a 4 puntos de la dificultad." in _text(gm)


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
