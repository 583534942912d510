"""The absences' pages and the parts that show who is away (campaigns.absence_views):
permissions for every standing, full pages and htmx fragments, Spanish
errors that keep what was typed, the badges, and query counts."""

from __future__ import annotations

import re
from datetime import timedelta
from urllib.parse import quote

import pytest
from django.db import transaction
from django.test import RequestFactory
from django.urls import reverse

from campaigns import absence_views, absences, status
from campaigns.models import Absence, Membership, Notification, Role, Scene, Visibility
from campaigns.permissions import campaign_access
from tests.campaigns.conftest import Table, make_table
from tests.conftest import client_for
from tests.factories import add_member, make_scene

HX = {"HX-Request": "true"}
STANDINGS = ("anonymous", "outsider", "reader", "player", "other", "cogm", "gm")


def _today(t: Table):
    return absences.campaign_today(t.campaign)


def _away(t: Table, user, *, days_ago=0, days_left=3, **fields) -> Absence:
    today = _today(t)
    return Absence.objects.create(
        campaign=t.campaign,
        user=user,
        starts_on=today - timedelta(days=days_ago),
        ends_on=today + timedelta(days=days_left),
        **fields,
    )


def _url(name: str, t: Table, *args) -> str:
    return reverse(f"campaigns:{name}", args=[t.campaign.slug, *args])


def _dates(t: Table, start=0, end=3) -> dict:
    today = _today(t)
    return {
        "starts_on": (today + timedelta(days=start)).isoformat(),
        "ends_on": (today + timedelta(days=end)).isoformat(),
    }


# --- the permission matrix ------------------------------------------------------------

# url name          method  anon outsider reader player other cogm  gm
PUBLIC = """
absences            GET     302  403      200    200    200   200   200
absences            POST    302  403      302    302    302   302   302
absence-consent     POST    302  403      302    302    302   302   403
absence-edit        GET     302  403      403    200    403   403   403
absence-edit        POST    302  403      403    302    403   403   403
absence-cancel      POST    302  403      403    302    403   403   403
absence-return      POST    302  403      403    302    403   403   403
absentees           GET     302  403      200    200    200   200   200
absence-consent     GET     302  405      405    405    405   405   405
absence-cancel      GET     302  405      405    405    405   405   405
absence-return      GET     302  405      405    405    405   405   405
absentees           POST    302  405      405    405    405   405   405
"""
PRIVATE = """
absences            GET     302  404      200    200    200   200   200
absences            POST    302  404      302    302    302   302   302
absence-consent     POST    302  404      302    302    302   302   403
absence-edit        GET     302  404      403    200    403   403   403
absence-edit        POST    302  404      403    302    403   403   403
absence-cancel      POST    302  404      403    302    403   403   403
absence-return      POST    302  404      403    302    403   403   403
absentees           GET     302  404      200    200    200   200   200
absence-consent     GET     302  405      405    405    405   405   405
absence-cancel      GET     302  405      405    405    405   405   405
absence-return      GET     302  405      405    405    405   405   405
absentees           POST    302  405      405    405    405   405   405
"""


def _parse(table: str) -> list[tuple[str, str, dict[str, int]]]:
    rows = []
    for line in table.strip().splitlines():
        name, method, *codes = line.split()
        rows.append((name, method, dict(zip(STANDINGS, map(int, codes), strict=True))))
    return rows


MATRIX = [(Visibility.PUBLIC, *row) for row in _parse(PUBLIC)] + [(Visibility.PRIVATE, *row) for row in _parse(PRIVATE)]


def _request(t: Table, name: str, absence: Absence) -> tuple[str, dict]:
    return {
        "absences": (_url("absences", t), {**_dates(t, 10, 12), "note": "de viaje", "hold_notifications": "on"}),
        "absence-consent": (_url("absence-consent", t), {"consent": "gm"}),
        # The absence started yesterday: its first day stays.
        "absence-edit": (_url("absence-edit", t, absence.pk), {**_dates(t, -1, 5), "note": "vuelvo antes"}),
        "absence-cancel": (_url("absence-cancel", t, absence.pk), {}),
        "absence-return": (_url("absence-return", t, absence.pk), {}),
        "absentees": (_url("absentees", t), {}),
    }[name]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("visibility", "name", "method", "expected"),
    [pytest.param(v, n, m, e, id=f"{v}-{n}-{m}") for v, n, m, e in MATRIX],
)
def test_every_absence_url_answers_each_standing_with_the_expected_status(visibility, name, method, expected):
    t = make_table(visibility)
    absence = _away(t, t.player, days_ago=1)
    clients = {standing: client_for(t.user(standing)) for standing in STANDINGS}
    actual = {}
    for standing in STANDINGS:
        with transaction.atomic():
            url, data = _request(t, name, absence)
            client = clients[standing]
            response = client.post(url, data) if method == "POST" else client.get(url)
            actual[standing] = response.status_code
            if standing == "anonymous":
                assert response.url == f"{reverse('accounts:login')}?next={quote(url)}"
            transaction.set_rollback(True)
    assert actual == expected


# --- announcing -----------------------------------------------------------------------


@pytest.mark.django_db
def test_the_absences_page_offers_the_form_with_today_and_holding_by_default(table):
    response = client_for(table.player).get(_url("absences", table))
    assert response.status_code == 200
    html = response.text
    assert "<h1" in html and "Tus ausencias" in html and "No has anunciado ninguna ausencia." in html
    assert f'value="{_today(table).isoformat()}"' in html
    assert 'name="hold_notifications"' in html and "checked" in html
    # What the player allows: the profile's choice is named.
    assert "Lo que diga mi perfil (Nadie lleva a mi personaje)" in html
    # Real forms that htmx enhances: each posts to its own address and swaps itself.
    url = _url("absences", table)
    assert f'id="ausencia-form" method="post" action="{url}"' in html or (
        'id="ausencia-form"' in html and f'action="{url}"' in html
    )
    assert f'data-hx-post="{url}"' in html and 'data-hx-target="#ausencia-form"' in html
    assert f'data-hx-post="{_url("absence-consent", table)}"' in html
    ids = re.findall(r'\sid="([^"]+)"', html)
    assert len(ids) == len(set(ids)), "an id is repeated on the page"


@pytest.mark.django_db
def test_the_absences_page_htmx_fragment_has_no_page_chrome(table):
    response = client_for(table.player).get(_url("absences", table), headers=HX)
    assert response.status_code == 200
    assert "<html" not in response.text and '<div id="ausencias">' in response.text
    assert "HX-Request" in response["Vary"]


@pytest.mark.django_db
def test_a_player_announces_an_absence_and_the_direction_is_told(table):
    response = client_for(table.player).post(
        _url("absences", table), {**_dates(table, 0, 9), "note": "de viaje hasta el 12", "hold_notifications": "on"}
    )
    assert response.status_code == 302 and response.url == _url("absences", table)
    absence = Absence.objects.get(user=table.player)
    assert (absence.starts_on, absence.ends_on) == (_today(table), _today(table) + timedelta(days=9))
    assert absence.note == "de viaje hasta el 12" and absence.hold_notifications
    told = set(Notification.objects.filter(kind=Notification.Kind.ABSENCE).values_list("user_id", flat=True))
    assert told == {table.gm.pk, table.cogm.pk}
    page = client_for(table.player).get(_url("absences", table)).text
    assert "de viaje hasta el 12" in page and "Ya he vuelto" in page and "Anular" in page


@pytest.mark.django_db
def test_an_htmx_announcement_redirects_the_whole_page(table):
    response = client_for(table.player).post(_url("absences", table), _dates(table, 2, 4), headers=HX)
    assert response.status_code == 200
    assert response["HX-Redirect"] == _url("absences", table)
    assert Absence.objects.get(user=table.player).hold_notifications is False


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        (3, 1, "La vuelta no puede ser antes de la salida."),
        (-5, -1, "La fecha de vuelta ya ha pasado."),
        (0, 400, "Una ausencia dura como mucho un año."),
    ],
)
def test_refused_dates_come_back_in_spanish_with_what_was_typed(table, start, end, message):
    data = {**_dates(table, start, end), "note": "Me voy <b>lejos</b>"}
    response = client_for(table.player).post(_url("absences", table), data)
    assert response.status_code == 200
    assert message in response.text
    assert 'value="Me voy &lt;b&gt;lejos&lt;/b&gt;"' in response.text
    assert f'value="{data["ends_on"]}"' in response.text
    assert not Absence.objects.exists()


@pytest.mark.django_db
def test_an_overlapping_absence_is_refused_and_htmx_gets_the_form_back_in_place(table):
    _away(table, table.player, days_left=5)
    response = client_for(table.player).post(_url("absences", table), {**_dates(table, 2, 8), "note": "x"}, headers=HX)
    assert response.status_code == 200
    assert response["HX-Retarget"] == "#ausencia-form" and response["HX-Reswap"] == "outerHTML"
    assert response.text.lstrip().startswith("<form") and "<html" not in response.text
    assert "Ya tienes una ausencia en esas fechas" in response.text
    assert Absence.objects.count() == 1


@pytest.mark.django_db
def test_missing_dates_and_a_long_note_are_refused_in_spanish(table):
    response = client_for(table.player).post(_url("absences", table), {"note": "n" * 201})
    assert "¿Desde qué día?" in response.text and "¿Hasta qué día?" in response.text
    assert "Demasiado largo: como mucho 200 caracteres (has escrito 201)." in response.text


# --- changing one's absence -------------------------------------------------------------


@pytest.mark.django_db
def test_the_owner_edits_an_absence_full_page_and_htmx(table):
    absence = _away(table, table.player, note="antes")
    client = client_for(table.player)
    page = client.get(_url("absence-edit", table, absence.pk))
    assert page.status_code == 200 and 'value="antes"' in page.text and "<html" in page.text
    fragment = client.get(_url("absence-edit", table, absence.pk), headers=HX)
    assert fragment.text.lstrip().startswith("<form") and "<html" not in fragment.text
    response = client.post(_url("absence-edit", table, absence.pk), {**_dates(table, 0, 6), "note": "después"})
    assert response.status_code == 302
    absence.refresh_from_db()
    assert absence.note == "después" and absence.ends_on == _today(table) + timedelta(days=6)
    assert absence.hold_notifications is False


@pytest.mark.django_db
def test_a_refused_edit_keeps_what_was_typed_and_htmx_swaps_the_form(table):
    absence = _away(table, table.player)
    response = client_for(table.player).post(
        _url("absence-edit", table, absence.pk), {**_dates(table, 4, 1), "note": "tecleado"}, headers=HX
    )
    assert response["HX-Retarget"] == "#ausencia-form"
    assert "La vuelta no puede ser antes de la salida." in response.text and 'value="tecleado"' in response.text


@pytest.mark.django_db
def test_the_gm_may_not_edit_cancel_or_end_someone_elses_absence(table):
    absence = _away(table, table.player, note="mía")
    gm = client_for(table.gm)
    assert gm.post(_url("absence-edit", table, absence.pk), {**_dates(table), "note": "suya"}).status_code == 403
    assert gm.post(_url("absence-cancel", table, absence.pk)).status_code == 403
    assert gm.post(_url("absence-return", table, absence.pk)).status_code == 403
    absence.refresh_from_db()
    assert absence.note == "mía" and absence.cancelled_at is None and absence.returned_at is None


@pytest.mark.django_db
def test_an_absence_of_another_campaign_or_over_is_a_404(table):
    other = make_table(Visibility.PUBLIC)
    theirs = _away(other, other.player)
    client = client_for(table.player)
    assert client.get(_url("absence-edit", table, theirs.pk)).status_code == 404
    over = _away(table, table.player, days_ago=5, days_left=-2)
    assert client.get(_url("absence-edit", table, over.pk)).status_code == 404


@pytest.mark.django_db
def test_cancelling_removes_the_absence_from_the_list_with_htmx(table):
    absence = _away(table, table.player, days_ago=-3, days_left=5, note="el viaje")
    response = client_for(table.player).post(_url("absence-cancel", table, absence.pk), headers=HX)
    assert response.status_code == 200
    assert response.text.lstrip().startswith('<div id="tus-ausencias-lista"')
    assert "No has anunciado ninguna ausencia." in response.text and "el viaje" not in response.text
    absence.refresh_from_db()
    assert absence.cancelled_at is not None


@pytest.mark.django_db
def test_ya_he_vuelto_ends_the_absence_and_welcomes_the_member(table):
    absence = _away(table, table.player, days_ago=2, days_left=5)
    response = client_for(table.player).post(_url("absence-return", table, absence.pk))
    assert response.status_code == 302 and response.url == _url("absences", table)
    absence.refresh_from_db()
    assert absence.ends_on == _today(table) and absence.returned_at is not None
    assert Notification.objects.filter(user=table.player, kind=Notification.Kind.ABSENCE).count() == 1
    assert absences.away_user_ids(table.campaign) == set()


@pytest.mark.django_db
def test_ya_he_vuelto_is_refused_for_an_absence_that_has_not_started(table):
    absence = _away(table, table.player, days_ago=-2, days_left=5)
    response = client_for(table.player).post(_url("absence-return", table, absence.pk), headers=HX)
    assert "Esa ausencia aún no ha empezado: anúlala si ya no te vas." in response.text
    absence.refresh_from_db()
    assert absence.returned_at is None


@pytest.mark.django_db
def test_a_member_chooses_what_they_allow_in_this_campaign(table):
    client = client_for(table.player)
    response = client.post(_url("absence-consent", table), {"consent": "gm"})
    assert response.status_code == 302
    membership = table.membership(table.player)
    assert membership.takeover_consent == "gm" and absences.effective_consent(membership) == "gm"
    client.post(_url("absence-consent", table), {"consent": ""})
    assert table.membership(table.player).takeover_consent == ""


@pytest.mark.django_db
def test_an_unknown_consent_is_refused_in_spanish_in_place(table):
    response = client_for(table.player).post(_url("absence-consent", table), {"consent": "todo"}, headers=HX)
    assert response["HX-Retarget"] == "#si-falto-form"
    assert "Elige una de las opciones." in response.text
    assert table.membership(table.player).takeover_consent == ""


# --- who is away ------------------------------------------------------------------------


@pytest.mark.django_db
def test_members_see_who_is_away_with_the_note_escaped(table):
    _away(table, table.other, days_left=4, note="<script>alert(1)</script>")
    response = client_for(table.reader).get(_url("absentees", table))
    assert "Bruno" in response.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in response.text and "<script>alert" not in response.text
    fragment = client_for(table.reader).get(_url("absentees", table), headers=HX)
    assert fragment.text.lstrip().startswith('<div id="ausentes"') and "Bruno" in fragment.text


@pytest.mark.django_db
def test_the_campaign_page_marks_away_members_and_the_mark_goes_with_the_day(table, monkeypatch):
    _away(table, table.other, days_left=0, note="de viaje")
    client = client_for(table.player)
    html = client.get(table.campaign.get_absolute_url()).text
    end = _today(table)
    assert "ausente hasta el" in html and "de viaje" in html
    assert "Ausentes ahora" in html and "¿Vas a faltar? Avisa de tu ausencia" in html
    # Next day (in the campaign's time zone) the cached page is not reused.
    monkeypatch.setattr(absences, "campaign_today", lambda campaign, now=None: end + timedelta(days=1))
    monkeypatch.setattr(
        absences,
        "away_now",
        lambda campaign, now=None: {},
    )
    html = client.get(table.campaign.get_absolute_url()).text
    assert "ausente hasta el" not in html


@pytest.mark.django_db
def test_a_new_absence_shows_on_the_cached_campaign_page_at_once(table):
    client = client_for(table.player)
    assert "ausente hasta el" not in client.get(table.campaign.get_absolute_url()).text
    absences.absence_create(campaign=table.campaign, user=table.other, **_date_values(table))
    assert "ausente hasta el" in client.get(table.campaign.get_absolute_url()).text


def _date_values(t: Table) -> dict:
    return {"starts_on": _today(t), "ends_on": _today(t) + timedelta(days=2), "note": "fuera"}


@pytest.mark.django_db
def test_outsiders_of_a_public_campaign_see_no_absences(table):
    _away(table, table.other, note="de viaje")
    for user in (None, table.outsider):
        html = client_for(user).get(table.campaign.get_absolute_url()).text
        assert "ausente hasta el" not in html and "de viaje" not in html and "Ausentes ahora" not in html


def _part_request(user):
    request = RequestFactory().get("/")
    request.user = user
    return request


@pytest.mark.django_db
def test_the_scene_part_lists_only_the_scenes_people_who_are_away(table):
    _away(table, table.other, note="de viaje")
    _away(table, table.reader)
    split = make_scene(table.campaign, everyone=False, participants=[table.player, table.other])
    split.campaign = table.campaign
    access = campaign_access(table.player, table.campaign)
    html = absence_views.scene_part(_part_request(table.player), split, access)
    assert "Bruno" in html and "de viaje" in html and "La Lectora" not in html
    everyone = Scene.objects.get(pk=table.scene.pk)
    everyone.campaign = table.campaign
    html = absence_views.scene_part(_part_request(table.player), everyone, access)
    assert "Bruno" in html and "La Lectora" in html
    response = client_for(table.player).get(reverse("campaigns:scene-status", args=[table.campaign.slug, split.pk]))
    assert "Bruno" in response.text and "ausente hasta el" in response.text


@pytest.mark.django_db
def test_the_dashboard_lists_who_is_away_back_soon_and_back_lately(table):
    _away(table, table.player, days_left=2)
    _away(table, table.other, days_ago=6, days_left=-2)
    _away(table, table.reader, days_ago=-4, days_left=6, note="boda")
    html = client_for(table.gm).get(reverse("campaigns:dashboard", args=[table.campaign.slug])).text
    assert "Ausentes ahora" in html and "Vuelven en los próximos 7 días" in html
    assert "Han vuelto en los últimos 7 días" in html and "Próximas ausencias" in html
    start = html.index('id="ausencias-direccion"')
    section = html[start : html.index("</section>", start)]
    assert section.count("Ana") == 2 and section.count("Bruno") == 1 and "boda" in section
    assert (
        absence_views.dashboard_part(
            _part_request(table.player), table.campaign, campaign_access(table.player, table.campaign)
        )
        == ""
    )


@pytest.mark.django_db
def test_the_home_part_tells_the_member_where_they_are_away(table):
    _away(table, table.player)
    html = absence_views.home_part(_part_request(table.player))
    assert "La mansión" in html and _url("absences", table) in html
    assert absence_views.home_part(_part_request(table.other)) == ""


@pytest.mark.django_db
def test_the_campaign_part_is_only_for_members(table):
    request = _part_request(table.outsider)
    assert absence_views.campaign_part(request, table.campaign, campaign_access(table.outsider, table.campaign)) == ""
    assert status.campaign_status_html(request, table.campaign, campaign_access(table.outsider, table.campaign)) == ""


# --- query counts ---------------------------------------------------------------------


def _many_absences(t: Table, n: int) -> None:
    for i in range(n):
        user = add_member(t.campaign, Role.PLAYER, display_name=f"Viajera {i}")
        _away(t, user, days_ago=i % 2, days_left=3, note=f"nota {i}")
        # And one of the player's own, in the future.
        if i < n:
            Absence.objects.create(
                campaign=t.campaign,
                user=t.player,
                starts_on=_today(t) + timedelta(days=10 * i + 10),
                ends_on=_today(t) + timedelta(days=10 * i + 12),
            )


@pytest.mark.django_db
@pytest.mark.parametrize("n", [1, 10])
def test_absence_pages_and_parts_run_a_constant_number_of_queries(table, django_assert_max_num_queries, n):
    _many_absences(table, n)
    client = client_for(table.player)
    # session, user, campaign, membership, own absences (the rest is the navbar's count).
    with django_assert_max_num_queries(7):
        response = client.get(_url("absences", table))
    assert response.text.count("Anular") == n
    with django_assert_max_num_queries(7):
        response = client.get(_url("absentees", table))
    assert response.text.count("nota ") == n
    gm = client_for(table.gm)
    gm.get(reverse("campaigns:dashboard", args=[table.campaign.slug]))
    access = campaign_access(table.gm, table.campaign)
    with django_assert_max_num_queries(1):
        absence_views.dashboard_part(_part_request(table.gm), table.campaign, access)
    with django_assert_max_num_queries(1):
        absence_views.campaign_part(_part_request(table.gm), table.campaign, access)
    scene = Scene.objects.get(pk=table.scene.pk)
    scene.campaign = table.campaign
    with django_assert_max_num_queries(1):
        html = absence_views.scene_part(_part_request(table.gm), scene, access)
    assert html.count("ausente hasta el") == n


@pytest.mark.django_db
def test_a_removed_member_no_longer_shows_as_away(table):
    _away(table, table.other)
    Membership.objects.filter(campaign=table.campaign, user=table.other).update(status=Membership.Status.REMOVED)
    assert absences.away_user_ids(table.campaign) == set()


@pytest.mark.django_db
def test_the_campaign_part_is_kept_until_an_absence_changes(table, django_assert_max_num_queries):
    access = campaign_access(table.player, table.campaign)
    first = absence_views.campaign_part(_part_request(table.player), table.campaign, access)
    assert "Nadie está ausente hoy." in first
    with django_assert_max_num_queries(0):
        assert absence_views.campaign_part(_part_request(table.player), table.campaign, access) == first
    absence = absences.absence_create(campaign=table.campaign, user=table.other, **_date_values(table))
    assert "Bruno" in absence_views.campaign_part(_part_request(table.player), table.campaign, access)
    absences.absence_cancel(absence=absence)
    assert absence_views.campaign_part(_part_request(table.player), table.campaign, access) == first


@pytest.mark.django_db
@pytest.mark.parametrize("htmx", [False, True])
def test_a_started_absence_refuses_a_new_first_day_beside_that_field(table, htmx):
    absence = _away(table, table.player, days_ago=2, note="antes")
    client = client_for(table.player)
    page = client.get(_url("absence-edit", table, absence.pk))
    assert "Esta ausencia ya empezó: el día de salida no se puede cambiar." in page.text
    moved = (_today(table) + timedelta(days=1)).isoformat()
    response = client.post(
        _url("absence-edit", table, absence.pk),
        {**_dates(table, 1, 4), "note": "tecleado", "hold_notifications": "on"},
        headers=HX if htmx else {},
    )
    assert response.status_code == 200
    assert "Esta ausencia ya empezó: no puedes cambiar el día de salida" in response.text
    assert f'value="{moved}"' in response.text and 'value="tecleado"' in response.text
    if htmx:
        assert response["HX-Retarget"] == "#ausencia-form" and "<html" not in response.text
    else:
        assert "<html" in response.text
    form = response.context["form"]
    assert form.errors["starts_on"][0].startswith("Esta ausencia ya empezó")
    absence.refresh_from_db()
    assert absence.starts_on == _today(table) - timedelta(days=2) and absence.note == "antes"


@pytest.mark.django_db
def test_the_dashboard_says_the_day_of_return_where_the_campaign_is_played(table):
    from datetime import datetime, time
    from zoneinfo import ZoneInfo

    from django.utils import formats

    table.campaign.time_zone = "America/Bogota"
    table.campaign.save(update_fields=["time_zone"])
    day = _today(table) - timedelta(days=2)
    # 23:30 in Bogotá: already the next day in Madrid (and in UTC).
    returned_at = datetime.combine(day, time(23, 30), tzinfo=ZoneInfo("America/Bogota"))
    _away(table, table.player, days_ago=4, days_left=-2, returned_at=returned_at)
    html = client_for(table.gm).get(reverse("campaigns:dashboard", args=[table.campaign.slug])).text
    start = html.index('id="ausencias-direccion"')
    section = html[start : html.index("</section>", start)]
    shown = formats.date_format(day, "MONTH_DAY_FORMAT")
    madrid = formats.date_format(day + timedelta(days=1), "MONTH_DAY_FORMAT")
    assert f"volvió el {shown}" in section
    assert f"volvió el {madrid}" not in section
