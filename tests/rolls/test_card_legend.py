"""Roll cards a newcomer understands, the same everywhere (issue 14): the
dice as they were rolled with their letters explained, which die counts and
why, the total against the difficulty, the outcome in words, what an
activation changed and paid; the roll log's local times and human labels."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from types import SimpleNamespace
from zoneinfo import ZoneInfo

import pytest
from django.template.loader import render_to_string
from django.urls import reverse

from campaigns.models import Post
from rules import hitos
from rules.hitos_options import HitosOptions
from systems.hitos import cards
from systems.hitos.activations import services as activations
from systems.hitos.checks.services import check_setup, table_check
from systems.hitos.reading import hitos_reader
from table.models import TableRoll
from tests.conftest import World, client_for
from tests.factories import client_seed

BREAKDOWN = [("Reflejos", 5), ("Sigilo", 3)]


def _text(html: str) -> str:
    return " ".join(html.split())


def _card_html(
    dice: list[int],
    *,
    reading: str = "normal",
    modifier: int = 8,
    difficulty: int | None = 15,
    breakdown=BREAKDOWN,
    options: HitosOptions | None = None,
) -> str:
    """A card for chosen dice, its game fields read as the signed log reads
    them (``hitos_reader``), rendered by the frame every page uses."""
    read = hitos_reader(
        campaign=None,
        what="Reflejos + Sigilo",
        modifier=modifier,
        difficulty=difficulty,
        breakdown=breakdown,
        reading=hitos.Reading(reading),
        options=options or HitosOptions(),
    )
    game = read(dice)
    signed = {"dice": dice, "game": game, "purpose": "Cruzar el jardín"}
    entry = SimpleNamespace(entry=signed, permalink="abc", get_absolute_url=lambda: "/r/abc/")
    base = {
        "entry": entry,
        "signed_entry": signed,
        "game": game,
        "table_roll": None,
        "chain": [],
        "short_hash": "0123456789ab",
        "compact": False,
        "card_id": "roll-card-abc",
        "body_template": "",
        "actions_template": "",
    }
    access = SimpleNamespace(is_gm=False, user=None)
    card = cards.hitos_card(base, access=access, table_roll=None, has_character=cards.known(False))
    return _text(render_to_string("table/_roll_card.html", {"card": card}))


def _kept(html: str) -> list[str]:
    """The values of the dice marked as the ones that count."""
    return re.findall(r'roll-die roll-die-kept"><span class="roll-die-value">(\d+)</span>', html)


# --- Which dice count, and why -------------------------------------------------------------


def test_a_normal_roll_counts_c_and_ties_take_the_earlier_die_for_the_lower_letter():
    # H1 — «En otra tirada se obtiene 4, 5, 5, así que m será 4, C será 5 y M será 5».
    html = _card_html([5, 4, 5])
    letters = re.findall(r'<abbr class="roll-die-letter" title="[^"]+">(\w)</abbr>', html)
    assert letters == ["C", "m", "M"]
    assert _kept(html) == ["5"] and html.index("roll-die-kept") < html.index(">4</span>")
    # H2 — «mira el valor central de la tirada y súmale la característica y la habilidad».
    assert "Cuenta el dado central (C), el del medio de los tres." in html
    assert "<strong>Total 13</strong> = 5 (dado C) + 8 (Reflejos +5, Sigilo +3), contra dificultad 15." in html


def test_a_positive_reroll_counts_m():
    # H15 — «el dado mayor»: a low pair summed (6) does not beat M (9).
    html = _card_html([3, 3, 9], reading="positive")
    assert _kept(html) == ["9"]
    assert "Tras activar un aspecto a favor, cuenta el dado mayor (M)." in html
    assert "<strong>Total 17</strong> = 9 (dado M) + 8" in html


def test_a_positive_reroll_sums_a_pair_that_beats_m():
    # H15 — «las parejas o tríos se suman considerándose un único valor y pudiendo reemplazar al valor M».
    html = _card_html([6, 2, 6], reading="positive")
    assert _kept(html) == ["6", "6"]
    assert "Tras activar un aspecto a favor, la pareja de 6 se suma y cuenta en lugar del dado mayor (M)." in html
    assert "<strong>Total 20</strong> = 12 (pareja de 6, sumada) + 8" in html
    assert "Supera la dificultad por 5 puntos." in html


def test_a_positive_reroll_sums_a_triple():
    html = _card_html([4, 4, 4], reading="positive")
    assert _kept(html) == ["4", "4", "4"]
    assert "el trío de 4 se suma y cuenta en lugar del dado mayor (M)." in html
    assert "= 12 (trío de 4, sumado) + 8" in html


def test_a_negative_reroll_counts_m_lowest():
    # H19 — «debe escogerse el resultado del dado menor (m)».
    html = _card_html([2, 7, 9], reading="negative")
    assert _kept(html) == ["2"]
    assert "Tras activar un aspecto en contra, cuenta el dado menor (m)." in html
    assert "= 2 (dado m) + 8" in html


def test_a_negative_reroll_reads_a_pair_as_its_face_in_negative():
    # H19 — «dos seises equivaldrían a –6».
    html = _card_html([6, 6, 2], reading="negative")
    assert _kept(html) == ["6", "6"]
    assert "la pareja de 6 cuenta como su número en negativo, en lugar del dado menor (m)." in html
    assert "<strong>Total 2</strong> = -6 (pareja de 6, en negativo) + 8" in html
    assert "Se queda a 13 puntos de la dificultad." in html and "(margen -13)" in html


# --- The total against the difficulty, the outcome in words --------------------------------


def test_success_and_failure_say_by_how_much():
    beats = _card_html([2, 9, 10])
    assert '<span class="badge text-bg-success text-wrap">Éxito</span>' in beats
    assert "Supera la dificultad por 2 puntos. <span" in beats and "(margen +2)" in beats
    short = _card_html([2, 6, 10])
    assert '<span class="badge text-bg-danger text-wrap">Fallo</span>' in short
    assert "Se queda a 1 punto de la dificultad." in short and "(margen -1)" in short


def test_equalling_the_difficulty_succeeds_unless_the_campaign_asks_to_beat_it():
    # H3 — «igual o mayor que la dificultad»; K1 — S002's «mayor a la dificultad».
    html = _card_html([2, 7, 10])
    assert "Éxito" in html and "Iguala la dificultad, y con igualarla basta." in html
    strict = _card_html([2, 7, 10], options=HitosOptions(strict_success=True))
    assert "Fallo" in strict and "Iguala la dificultad, pero en esta partida hay que superarla." in strict


def test_a_critical_succeeds_whatever_the_difficulty():
    # H5 — «es un éxito automático independientemente de la dificultad de la tirada».
    html = _card_html([10, 3, 10], difficulty=30)
    assert "Éxito" in html and "Crítico" in html and "Fallo" not in html
    assert "Dos dieces: éxito automático, sea cual sea la dificultad." in html
    triple = _card_html([10, 10, 10], difficulty=40)
    assert "Crítico triple" in triple and "Tres dieces: éxito automático" in triple


def test_a_fumble_fails_whatever_the_total():
    # H6 — «la tirada se considera un fracaso automáticamente, incluso si se ha superado la dificultad».
    html = _card_html([1, 9, 1], difficulty=5)
    assert "Fallo" in html and "Pifia" in html and "Éxito" not in html
    assert "Dos unos: fallo automático, sea cual sea el total." in html
    assert "Tres unos: fallo automático" in _card_html([1, 1, 1])


def test_modifiers_below_zero_none_and_no_difficulty_read_plainly():
    minus = _card_html([3, 5, 8], modifier=-2, breakdown=[("Herido", -2)])
    assert "<strong>Total 3</strong> = 5 (dado C) − 2 (Herido -2), contra dificultad 15." in minus
    bare = _card_html([3, 5, 8], modifier=0, breakdown=[], difficulty=None)
    assert "<strong>Total 5</strong> = 5 (dado C), sin modificador." in bare
    assert "roll-outcome" not in bare and "margen" not in bare


def test_every_card_has_the_legend_and_no_die_looks_like_a_link():
    html = _card_html([4, 7, 9])
    assert '<details class="roll-legend small mb-1"> <summary>¿Cómo se lee?</summary>' in html
    assert "el del medio C (central)" in html
    dice = html.split('<ul class="roll-dice')[1].split("</ul>")[0]
    assert "<a " not in dice and "<u>" not in dice


# --- The same card on every page -------------------------------------------------------------


def _table_roll(play: World, **kwargs) -> TableRoll:
    kwargs.setdefault("post", play.post)
    return table_check(
        campaign=play.campaign,
        user=play.ana,
        setup=check_setup(play.ines, characteristic="reflejos", skill="Sigilo"),
        purpose="Cruzar el vestíbulo",
        difficulty=15,
        character=play.ines,
        scene=play.scene,
        client_seed=client_seed(),
        **kwargs,
    )


def _the_card(html: str, table_roll: TableRoll) -> str:
    return _text(html.split(f'id="tirada-{table_roll.pk}"')[1].split('class="roll-signature')[0])


def test_the_scene_the_permalink_the_log_and_the_htmx_update_print_one_card(play, dice):
    dice.extend([[9, 2, 6]])
    table_roll = _table_roll(play)
    entry = table_roll.latest
    scene = client_for(play.ana).get(reverse("table:scene-detail", args=[play.campaign.slug, play.scene.pk]))
    permalink = client_for(None).get(entry.get_absolute_url())
    log = client_for(play.ana).get(reverse("rolls:roll-log", args=[play.campaign.slug]))
    log_rows = client_for(play.ana).get(
        reverse("rolls:roll-log", args=[play.campaign.slug]), headers={"HX-Request": "true"}
    )
    assert "<html" not in log_rows.content.decode()
    chips = (
        '<li class="list-inline-item roll-die"><span class="roll-die-value">9</span> '
        '<abbr class="roll-die-letter" title="M: mayor, el dado más alto">M</abbr></li> '
        '<li class="list-inline-item roll-die"><span class="roll-die-value">2</span> '
        '<abbr class="roll-die-letter" title="m: menor, el dado más bajo">m</abbr></li> '
        '<li class="list-inline-item roll-die roll-die-kept"><span class="roll-die-value">6</span> '
        '<abbr class="roll-die-letter" title="C: central, el dado del medio">C</abbr> '
        '<span class="roll-die-counts">cuenta</span></li>'
    )
    reading = "Cuenta el dado central (C), el del medio de los tres."
    total = "<strong>Total 15</strong> = 6 (dado C) + 9 (Reflejos +6, Sigilo +3), contra dificultad 15."
    outcome = "Éxito</span> Iguala la dificultad, y con igualarla basta."
    for response in (scene, permalink):
        assert response.status_code == 200
        card = _the_card(response.content.decode(), table_roll)
        for part in (chips, reading, total, outcome, "¿Cómo se lee?"):
            assert part in card
    for response in (log, log_rows):
        row = _text(response.content.decode().split(f'id="roll-row-{entry.permalink}"')[1].split("</tr>")[0])
        for part in (chips, reading, total, outcome, "¿Cómo se lee?"):
            assert part in row

    # The htmx answer to an activation swaps in the same card, now re-read (H15).
    response = client_for(play.ana).post(
        reverse("hitos:activation-positive", args=[table_roll.pk]),
        {"aspect": f"a{play.ines_aspect.pk}", "payment": "point", "dice": ["1"]},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html
    card = _the_card(html, table_roll)
    assert "Tras activar un aspecto a favor" in card and "¿Cómo se lee?" in card
    assert "→ repite los dados 2 (aspecto «Ágil como una gata» activado a favor; pago: un punto dramático):" in card
    assert "original: <a href=" in card and "— total 15, éxito" in card


def test_payment_codes_reach_no_page(play, dice):
    """The permalink used to print "· point" and "· gm_pool"."""
    table_roll = _table_roll(play)
    activations.activate_positive(
        table_roll=table_roll, user=play.ana, aspect_choice=f"a{play.ines_aspect.pk}", positions=[0], payment="point"
    )
    table_roll.refresh_from_db()
    negative = activations.activate_negative(
        table_roll=table_roll, user=play.gm, aspect_choice=f"s{play.scene_aspect.pk}", positions=[2]
    )
    activations.answer_negative(activation=negative, user=play.ana, accept=True)
    table_roll.refresh_from_db()
    latest = table_roll.latest
    assert (latest.entry["payment"], latest.parent.entry["payment"]) == ("gm_pool", "point")
    pages = {
        "permalink": client_for(None).get(latest.get_absolute_url()),
        "earlier version": client_for(None).get(latest.parent.get_absolute_url()),
        "log": client_for(play.bruno).get(reverse("rolls:roll-log", args=[play.campaign.slug])),
        "scene": client_for(play.bruno).get(reverse("table:scene-detail", args=[play.campaign.slug, play.scene.pk])),
    }
    for name, response in pages.items():
        assert response.status_code == 200, name
        # The verification bundle (a JSON script for programs) keeps the signed codes.
        shown = re.sub(r"<script\b.*?</script>", "", response.content.decode(), flags=re.S)
        assert re.search(r"\b(point|gm_pool|exhaust)\b", shown) is None, name
    permalink = _text(pages["permalink"].content.decode())
    assert (
        "repite los dados 3 (aspecto «Oscuridad casi total» activado en contra; "
        "pago: un punto de la reserva de la dirección)"
    ) in permalink
    assert "repite los dados 1 (aspecto «Ágil como una gata» activado a favor; pago: un punto dramático)" in permalink
    # The log's compact cards have no chain: each version says its own activation.
    log = _text(pages["log"].content.decode())
    assert "Repetida con el aspecto «Ágil como una gata» activado a favor; pago: un punto dramático." in log
    assert (
        "Repetida con el aspecto «Oscuridad casi total» activado en contra; "
        "pago: un punto de la reserva de la dirección."
    ) in log


# --- The roll log: local, human times ----------------------------------------------------------


@pytest.mark.parametrize("zone", ["Europe/Madrid", "America/Mexico_City"])
def test_the_log_shows_local_times_and_keeps_the_signed_instant(play, settings, zone):
    settings.TIME_ZONE = zone
    entry = _table_roll(play).latest
    html = client_for(None).get(reverse("rolls:roll-log", args=[play.campaign.slug])).content.decode()
    signed = entry.entry["time"]
    local = datetime.strptime(signed, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).astimezone(ZoneInfo(zone))
    assert f'<time datetime="{signed}">{local:%d/%m/%Y %H:%M}</time>' in html
    assert f">{signed}<" not in html
    # The column names the zone the times are in.
    zone_name = datetime.now(ZoneInfo(zone)).strftime("%Z")
    assert f'<th scope="col">Cuándo <span class="small text-body-secondary">({zone_name})</span></th>' in html
    # A phone reads each row as a labelled card; the columns keep their names.
    assert 'data-label="Para qué"' in html and 'data-label="Quién"' in html


def test_a_private_rolls_page_shows_its_local_time_too(play, settings):
    settings.TIME_ZONE = "Europe/Madrid"
    whisper = Post.objects.create(
        scene=play.scene,
        author=play.ana,
        body="Robo la llave.",
        body_html="<p>Robo la llave.</p>",
        recipients=Post.Recipients.GM,
    )
    entry = _table_roll(play, post=whisper).latest
    assert entry.is_sealed
    html = client_for(play.bruno).get(entry.get_absolute_url()).content.decode()
    assert "Tirada privada" in html and "Robo la llave" not in html
    signed = entry.outer["time"]
    moment = datetime.strptime(signed, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    when = _text(html.split('id="roll-when">')[1].split("</dd>")[0])
    assert when.startswith(f'<time datetime="{signed}">')
    assert f"a las {moment.astimezone(ZoneInfo('Europe/Madrid')):%H:%M}</time>" in when
    assert f"a las {moment:%H:%M} en UTC)" in when


def test_the_log_costs_the_same_queries_however_many_activations_it_shows(play, django_assert_max_num_queries):
    url = reverse("rolls:roll-log", args=[play.campaign.slug])
    client = client_for(play.bruno)
    _table_roll(play)
    with django_assert_max_num_queries(20) as few:
        assert client.get(url).status_code == 200
    for position in range(3):
        activations.activate_positive(
            table_roll=_table_roll(play),
            user=play.ana,
            aspect_choice=f"a{play.ines_aspect.pk}",
            positions=[position],
            payment="point",
        )
    with django_assert_max_num_queries(len(few)):
        html = client.get(url).content.decode()
    assert html.count("pago: un punto dramático.") == 3
