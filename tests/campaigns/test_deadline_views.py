"""The deadline pages: the direction gives a scene a deadline, withdraws
one, and settles one that passed; the permission matrix for each, in a
public and a private campaign, the full page and the htmx fragment."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.urls import reverse
from django.utils import timezone

from campaigns import deadlines
from campaigns.models import Deadline, ModerationAction, ModerationLog, Notification
from tests.factories import make_scene

pytestmark = pytest.mark.django_db

MADRID = ZoneInfo("Europe/Madrid")
HX = {"HTTP_HX_REQUEST": "true"}
STANDINGS = ["anonymous", "outsider", "reader", "player", "other", "cogm", "gm"]
# Only the direction; an outsider gets 404 in a private campaign, 403 in a public one.
EXPECTED = {
    "public": {"anonymous": 302, "outsider": 403, "reader": 403, "player": 403, "other": 403, "cogm": 200, "gm": 200},
    "private": {"anonymous": 302, "outsider": 404, "reader": 403, "player": 403, "other": 403, "cogm": 200, "gm": 200},
}


def _deadline(table, due_at=None) -> Deadline:
    return deadlines.set_deadline(
        campaign=table.campaign,
        scene=table.scene,
        kind=deadlines.SCENE,
        target_id=table.scene.pk,
        due_at=due_at or timezone.now() + timedelta(days=2),
        actor=table.gm,
    )


def _passed(table) -> Deadline:
    deadline = _deadline(table)
    Deadline.objects.filter(pk=deadline.pk).update(due_at=timezone.now() - timedelta(hours=2))
    deadline.refresh_from_db()
    return deadline


def _url(name, table, *args):
    return reverse(f"campaigns:{name}", args=[table.campaign.slug, *args])


# --- the permission matrix -------------------------------------------------------------------


@pytest.mark.parametrize("visibility", ["public", "private"])
@pytest.mark.parametrize("standing", STANDINGS)
def test_only_the_direction_opens_the_scene_deadline_form(request, visibility, standing):
    table = request.getfixturevalue("table" if visibility == "public" else "private_table")
    response = table.client(standing).get(_url("scene-deadline", table, table.scene.pk))
    assert response.status_code == EXPECTED[visibility][standing]
    if response.status_code == 302:
        assert response["Location"].startswith(reverse("accounts:login"))


@pytest.mark.parametrize("visibility", ["public", "private"])
@pytest.mark.parametrize("standing", STANDINGS)
def test_only_the_direction_settles_a_passed_deadline(request, visibility, standing):
    table = request.getfixturevalue("table" if visibility == "public" else "private_table")
    deadline = _passed(table)
    response = table.client(standing).get(_url("deadline-settle", table, deadline.pk))
    assert response.status_code == EXPECTED[visibility][standing]


@pytest.mark.parametrize("visibility", ["public", "private"])
@pytest.mark.parametrize("standing", STANDINGS)
def test_only_the_direction_withdraws_a_deadline(request, visibility, standing):
    table = request.getfixturevalue("table" if visibility == "public" else "private_table")
    deadline = _deadline(table)
    response = table.client(standing).post(_url("deadline-withdraw", table, deadline.pk))
    expected = EXPECTED[visibility][standing]
    assert response.status_code == (302 if expected == 200 else expected)
    deadline.refresh_from_db()
    assert deadline.is_open is (expected != 200)


@pytest.mark.parametrize("visibility", ["public", "private"])
@pytest.mark.parametrize("standing", ["outsider", "reader", "player"])
def test_members_without_the_right_cannot_set_a_deadline(request, visibility, standing):
    table = request.getfixturevalue("table" if visibility == "public" else "private_table")
    data = {"plazo": "2031-01-10T20:00", "recordar": "86400"}
    response = table.client(standing).post(_url("scene-deadline", table, table.scene.pk), data)
    assert response.status_code == EXPECTED[visibility][standing]
    assert not Deadline.objects.exists()


def test_the_wrong_method_is_refused(table):
    client = table.client("gm")
    deadline = _deadline(table)
    assert client.get(_url("deadline-withdraw", table, deadline.pk)).status_code == 405
    assert client.put(_url("scene-deadline", table, table.scene.pk)).status_code == 405
    assert client.delete(_url("deadline-settle", table, deadline.pk)).status_code == 405


# --- giving a scene a deadline ---------------------------------------------------------------


def test_the_form_page_and_its_fragment(table):
    client = table.client("gm")
    page = client.get(_url("scene-deadline", table, table.scene.pk))
    html = page.content.decode()
    assert "<html" in html and f'id="plazo-escena-{table.scene.pk}"' in html
    assert "Fecha y hora en la zona horaria de la partida (Europe/Madrid)." in html
    # On its own page the form is a plain POST (no swap into a status region it does not have).
    assert "data-hx-post" not in html.split(f'id="plazo-escena-{table.scene.pk}"')[1].split(">")[0]
    fragment = client.get(_url("scene-deadline", table, table.scene.pk), **HX).content.decode()
    assert "<html" not in fragment and fragment.strip().startswith(f'<form id="plazo-escena-{table.scene.pk}"')


def test_setting_a_deadline_takes_the_campaigns_wall_time(table):
    data = {"plazo": "2031-01-10T20:00", "recordar": str(12 * 3600)}
    response = table.client("cogm").post(_url("scene-deadline", table, table.scene.pk), data)
    assert response.status_code == 302
    assert response["Location"] == _url("scene-status", table, table.scene.pk)
    deadline = Deadline.objects.get()
    assert (deadline.kind, deadline.target_id, deadline.created_by) == ("scene", table.scene.pk, table.cogm)
    assert deadline.due_at == datetime(2031, 1, 10, 20, 0, tzinfo=MADRID)
    assert deadline.remind_before == timedelta(hours=12)


def test_setting_a_deadline_with_htmx_answers_the_status_region(table):
    data = {"plazo": "2031-01-10T20:00", "recordar": "86400"}
    response = table.client("gm").post(_url("scene-deadline", table, table.scene.pk), data, **HX)
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert html.strip().startswith('<div id="estado-escena"')
    assert "viernes 10 de enero, 20:00 (Europe/Madrid)" in html


def test_moving_a_deadline_keeps_one_row(table):
    _deadline(table)
    data = {"plazo": "2031-02-01T09:30", "recordar": "7200"}
    table.client("gm").post(_url("scene-deadline", table, table.scene.pk), data)
    assert Deadline.objects.get().due_at == datetime(2031, 2, 1, 9, 30, tzinfo=MADRID)


@pytest.mark.parametrize(
    ("plazo", "message"),
    [
        ("", "Escribe la fecha y la hora del plazo."),
        ("2001-01-01T10:00", "El plazo tiene que ser en el futuro."),
        ("el viernes", "Escribe una fecha y una hora válidas."),
        ("2031-03-30T02:30", "Esa hora no existe ese día en Europe/Madrid (se adelantan los relojes). Elige otra."),
    ],
)
def test_a_bad_date_is_refused_and_the_form_comes_back_with_what_was_typed(table, plazo, message):
    client = table.client("gm")
    data = {"plazo": plazo, "recordar": "7200"}
    page = client.post(_url("scene-deadline", table, table.scene.pk), data)
    assert page.status_code == 200
    html = page.content.decode()
    assert message in html and "<html" in html
    if plazo:
        assert f'value="{plazo}"' in html
    fragment = client.post(_url("scene-deadline", table, table.scene.pk), data, **HX)
    assert fragment["HX-Retarget"] == f"#plazo-escena-{table.scene.pk}"
    assert fragment["HX-Reswap"] == "outerHTML"
    assert message in fragment.content.decode() and "<html" not in fragment.content.decode()
    assert not Deadline.objects.exists()


def test_the_gm_sees_the_form_and_the_withdraw_button_on_the_scene_status(table):
    deadline = _deadline(table)
    gm = table.client("gm").get(_url("scene-status", table, table.scene.pk), **HX).content.decode()
    assert _url("scene-deadline", table, table.scene.pk) in gm
    assert _url("deadline-withdraw", table, deadline.pk) in gm
    player = table.client("player").get(_url("scene-status", table, table.scene.pk)).content.decode()
    assert "Plazo de la escena." in player
    assert _url("scene-deadline", table, table.scene.pk) not in player
    assert _url("deadline-withdraw", table, deadline.pk) not in player


# --- withdrawing ---------------------------------------------------------------------------


def test_withdrawing_with_htmx_answers_the_status_region(table):
    deadline = _deadline(table)
    response = table.client("gm").post(_url("deadline-withdraw", table, deadline.pk), **HX)
    html = response.content.decode()
    assert html.strip().startswith('<div id="estado-escena"') and "Plazo de la escena." not in html
    deadline.refresh_from_db()
    assert deadline.cancelled_at is not None


def test_withdrawing_from_the_dashboard_goes_back_there(table):
    deadline = _deadline(table)
    response = table.client("gm").post(_url("deadline-withdraw", table, deadline.pk), {"volver": "direccion"})
    assert response["Location"] == _url("dashboard", table)


def test_withdrawing_twice_says_so(table):
    deadline = _deadline(table)
    client = table.client("gm")
    client.post(_url("deadline-withdraw", table, deadline.pk))
    response = client.post(_url("deadline-withdraw", table, deadline.pk), follow=True)
    assert "Este plazo ya está resuelto o retirado." in response.content.decode()


def test_withdrawing_a_passed_deadline_is_recorded(table):
    deadline = _passed(table)
    table.client("gm").post(_url("deadline-withdraw", table, deadline.pk))
    deadline.refresh_from_db()
    assert deadline.settled_by == table.gm
    assert ModerationLog.objects.filter(action=ModerationAction.DEADLINE_SETTLED).count() == 1


# --- settling ---------------------------------------------------------------------------


def test_a_deadline_not_yet_passed_offers_only_moving_or_withdrawing_it(table):
    deadline = _deadline(table)
    client = table.client("gm")
    response = client.get(_url("deadline-settle", table, deadline.pk))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Este plazo aún no ha vencido" in html
    assert "Dar más tiempo" in html and "Retirar el plazo" in html
    assert "Seguir sin esperar" not in html
    fragment = client.get(_url("deadline-settle", table, deadline.pk), **HX).content.decode()
    assert "<html" not in fragment and "Este plazo aún no ha vencido" in fragment
    # The kind's own option is refused until it passes.
    response = client.post(_url("deadline-settle", table, deadline.pk), {"choice": "continue"}, **HX)
    assert "Elige una de las opciones que se ofrecen." in response.content.decode()
    deadline.refresh_from_db()
    assert deadline.is_open
    # Moving it works before it passes.
    response = client.post(
        _url("deadline-settle", table, deadline.pk),
        {"choice": "_more", "plazo": "2030-12-06T20:00", "recordar": "7200"},
    )
    assert response["Location"] == _url("dashboard", table)
    deadline.refresh_from_db()
    assert deadline.due_at == datetime(2030, 12, 6, 20, 0, tzinfo=MADRID) and deadline.is_open
    # Other members still get 403.
    assert table.client("player").get(_url("deadline-settle", table, deadline.pk)).status_code == 403


def test_withdrawing_a_deadline_before_it_passes_is_recorded_and_told(table):
    deadline = _deadline(table)
    response = table.client("gm").post(_url("deadline-settle", table, deadline.pk), {"choice": "_withdraw"})
    assert response["Location"] == _url("dashboard", table)
    deadline.refresh_from_db()
    assert deadline.cancelled_at is not None and deadline.settled_at is None
    log = ModerationLog.objects.get(action=ModerationAction.DEADLINE_SETTLED)
    assert log.actor == table.gm and log.scene == table.scene
    assert log.reason == "Retiró el plazo de la escena «El vestíbulo» antes de que venciera."
    told = Notification.objects.filter(kind="deadline").values_list("user_id", flat=True)
    assert set(told) == {table.player.pk, table.other.pk}


def test_the_withdraw_button_before_the_deadline_is_recorded_and_told(table):
    deadline = _deadline(table)
    table.client("gm").post(_url("deadline-withdraw", table, deadline.pk))
    deadline.refresh_from_db()
    assert deadline.cancelled_at is not None
    assert ModerationLog.objects.filter(action=ModerationAction.DEADLINE_SETTLED).count() == 1
    assert Notification.objects.filter(kind="deadline", user=table.player).exists()


def test_the_settle_page_offers_the_kinds_options_more_time_and_withdrawing(table):
    deadline = _passed(table)
    client = table.client("gm")
    html = client.get(_url("deadline-settle", table, deadline.pk)).content.decode()
    assert "<html" in html
    for label in ("Seguir sin esperar", "Dar más tiempo", "Retirar el plazo"):
        assert label in html
    assert "venció hace 2 horas" in html
    fragment = client.get(_url("deadline-settle", table, deadline.pk), **HX).content.decode()
    assert "<html" not in fragment and fragment.strip().startswith(f'<section id="resolver-plazo-{deadline.pk}"')


def test_settling_records_it_and_goes_to_the_dashboard(table):
    deadline = _passed(table)
    client = table.client("cogm")
    response = client.post(_url("deadline-settle", table, deadline.pk), {"choice": "continue"})
    assert response["Location"] == _url("dashboard", table)
    deadline.refresh_from_db()
    assert deadline.settlement == "La escena «El vestíbulo» sigue sin esperar más."
    assert ModerationLog.objects.get(action=ModerationAction.DEADLINE_SETTLED).actor == table.cogm
    assert Notification.objects.filter(kind="deadline", user=table.player).exists()
    # With htmx: a client redirect.
    deadline = _passed(table)
    response = client.post(_url("deadline-settle", table, deadline.pk), {"choice": "continue"}, **HX)
    assert response["HX-Redirect"] == _url("dashboard", table)


def test_more_time_needs_a_new_date_and_keeps_what_was_typed(table):
    deadline = _passed(table)
    client = table.client("gm")
    response = client.post(_url("deadline-settle", table, deadline.pk), {"choice": "_more", "recordar": "7200"}, **HX)
    html = response.content.decode()
    assert "Para dar más tiempo, escribe el nuevo plazo." in html
    assert response["HX-Retarget"] == f"#resolver-plazo-{deadline.pk}"
    assert re.search(r'<input[^>]*value="_more"[^>]*checked>', html)
    data = {"choice": "_more", "plazo": "2031-01-10T20:00", "recordar": "7200"}
    assert client.post(_url("deadline-settle", table, deadline.pk), data).status_code == 302
    deadline.refresh_from_db()
    assert deadline.due_at == datetime(2031, 1, 10, 20, 0, tzinfo=MADRID) and deadline.passed_at is None


def test_an_unknown_choice_is_refused_in_spanish(table):
    deadline = _passed(table)
    response = table.client("gm").post(_url("deadline-settle", table, deadline.pk), {"choice": "inventar"})
    assert "Elige una de las opciones que se ofrecen." in response.content.decode()
    deadline.refresh_from_db()
    assert deadline.is_open


def test_settling_twice_says_it_is_already_settled(table):
    deadline = _passed(table)
    client = table.client("gm")
    client.post(_url("deadline-settle", table, deadline.pk), {"choice": "continue"})
    response = client.post(_url("deadline-settle", table, deadline.pk), {"choice": "continue"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "Este plazo ya está resuelto o retirado." in html
    assert "sigue sin esperar más" in html
    assert ModerationLog.objects.filter(action=ModerationAction.DEADLINE_SETTLED).count() == 1


def test_a_deadline_of_another_campaign_is_not_found(table, private_table):
    deadline = _passed(private_table)
    response = table.client("gm").get(_url("deadline-settle", table, deadline.pk))
    assert response.status_code == 404


def test_the_dashboard_lists_passed_and_open_deadlines(table):
    passed = _passed(table)
    later = make_scene(table.campaign, title="La biblioteca")
    upcoming = deadlines.set_deadline(
        campaign=table.campaign,
        scene=later,
        kind=deadlines.SCENE,
        target_id=later.pk,
        due_at=timezone.now() + timedelta(days=3, minutes=5),
        actor=table.gm,
    )
    html = table.client("gm").get(_url("dashboard", table)).content.decode()
    settled_part, open_part = html.split("Vencidos, por resolver")[1].split("Abiertos")
    assert _url("deadline-settle", table, passed.pk) in settled_part and "venció hace 2 horas" in settled_part
    assert "La biblioteca" in open_part and "quedan 3 días" in open_part
    assert _url("deadline-withdraw", table, upcoming.pk) in open_part
