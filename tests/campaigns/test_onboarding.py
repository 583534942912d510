"""A newcomer who follows an invitation becomes a member, and every empty
state says what to do next (issue 14).

The invitation link is the GM's consent: a signed-in outsider joins with one
click (a POST; opening the link changes nothing), someone without an account
signs up or logs in and comes back to that button. The campaign page, the
home page and the sheet list tell the GM and the players their next step.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from campaigns import permissions as perms
from campaigns import services
from campaigns.models import Application, Campaign, Invitation, Membership, Notification, Role, Visibility
from campaigns.permissions import campaign_access
from sheets.models import Character
from tests.conftest import client_for
from tests.factories import CharacterFactory, UserFactory, add_member

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}
STRONG = "ornitorrinco-azul-77"


def _invite(campaign: Campaign, role: str = Role.PLAYER, *, max_uses: int = 5) -> Invitation:
    return services.invitation_create(campaign=campaign, actor=campaign.gm, role=role, days=7, max_uses=max_uses)


def _new_campaign(title: str = "Niebla", visibility: str = Visibility.PRIVATE) -> Campaign:
    gm = UserFactory(display_name="La Directora")
    return services.campaign_create(gm=gm, title=title, system="hitos", visibility=visibility)


def _sheet_create_url(campaign: Campaign) -> str:
    return reverse("sheets:sheet-create", args=[campaign.slug])


def _messages(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


# --- the invitation page ------------------------------------------------------------------


def test_a_visitor_without_an_account_is_offered_to_sign_up_or_log_in_and_come_back(client):
    campaign = _new_campaign()
    invitation = _invite(campaign)
    url = invitation.get_absolute_url()
    response = client.get(url)
    assert response.status_code == 200
    assert "Te invitan a «Niebla»" in response.text
    assert "Papel: Jugador" in response.text
    assert "Para unirte necesitas una cuenta." in response.text
    assert f'href="{reverse("accounts:signup")}?next={url}"' in response.text
    assert f'href="{reverse("accounts:login")}?next={url}"' in response.text
    # No application to write: the link is the GM's consent.
    assert "Preséntate" not in response.text
    assert "Unirme a la partida" not in response.text


def test_a_signed_in_outsider_gets_one_button_and_opening_the_link_changes_nothing(django_assert_max_num_queries):
    campaign = _new_campaign()
    invitation = _invite(campaign)
    newcomer = UserFactory()
    client = client_for(newcomer)
    # Session, user, invitation with its campaign and GM, membership, a removal, notifications.
    with django_assert_max_num_queries(6):
        response = client.get(invitation.get_absolute_url())
    assert response.status_code == 200
    url = re.escape(invitation.get_absolute_url())
    form = re.search(rf'<form method="post" action="{url}"[^>]*>(.*?)</form>', response.text, re.S)
    assert 'name="csrfmiddlewaretoken"' in form.group(1)
    assert '<button type="submit" class="btn btn-primary">Unirme a la partida</button>' in form.group(1)
    assert client.head(invitation.get_absolute_url()).status_code == 200
    invitation.refresh_from_db()
    assert invitation.uses == 0
    assert not Membership.objects.filter(user=newcomer).exists()


def test_the_invitation_page_answers_only_get_head_and_post(client):
    invitation = _invite(_new_campaign())
    assert client.put(invitation.get_absolute_url()).status_code == 405
    assert client_for(UserFactory()).delete(invitation.get_absolute_url()).status_code == 405


def test_joining_needs_the_csrf_token():
    invitation = _invite(_new_campaign())
    newcomer = UserFactory()
    client = Client(enforce_csrf_checks=True)
    client.force_login(newcomer)
    assert client.post(invitation.get_absolute_url()).status_code == 403
    assert not Membership.objects.filter(user=newcomer).exists()


def test_one_click_makes_a_member_welcomes_them_with_their_next_step_and_tells_the_direction():
    campaign = _new_campaign("<b>Niebla</b>")
    cogm = add_member(campaign, Role.COGM, display_name="El Codirector")
    invitation = _invite(campaign)
    newcomer = UserFactory(display_name="Carmen")
    response = client_for(newcomer).post(invitation.get_absolute_url(), follow=True)
    assert response.redirect_chain == [(campaign.get_absolute_url(), 302)]
    membership = Membership.objects.get(campaign=campaign, user=newcomer)
    assert (membership.role, membership.status) == (Role.PLAYER, Membership.Status.ACTIVE)
    invitation.refresh_from_db()
    assert invitation.uses == 1
    # The title is escaped, the link to create a character is a real link.
    assert _messages(response) == [
        "¡Te damos la bienvenida a «&lt;b&gt;Niebla&lt;/b&gt;»! Ya eres jugador. Tu siguiente paso: "
        f'<a href="{_sheet_create_url(campaign)}">crea tu personaje</a>.'
    ]
    assert f'<a href="{_sheet_create_url(campaign)}">crea tu personaje</a>' in response.text
    assert "<b>Niebla</b>" not in response.text
    told = Notification.objects.filter(kind=Notification.Kind.APPLICATION).order_by("user_id")
    assert [(n.user, n.campaign, n.url, n.text) for n in told] == [
        (
            director,
            campaign,
            reverse("campaigns:dashboard", args=[campaign.slug]),
            "Carmen se ha unido a «<b>Niebla</b>» con una invitación (papel: Jugador).",
        )
        for director in sorted((campaign.gm, cogm), key=lambda user: user.pk)
    ]
    # The sheet-creation page the welcome points to opens for the new player.
    assert client_for(newcomer).get(_sheet_create_url(campaign)).status_code == 200


@pytest.mark.parametrize(
    ("role", "welcome"),
    [
        (Role.READER, "¡Te damos la bienvenida a «Niebla»! Como lector puedes leer las escenas abiertas a todos"),
        (Role.COGM, "¡Te damos la bienvenida a «Niebla»! Ahora codiriges la partida"),
    ],
)
def test_the_invitation_gives_its_role_and_the_welcome_fits_it(role, welcome):
    campaign = _new_campaign()
    newcomer = UserFactory()
    response = client_for(newcomer).post(_invite(campaign, role).get_absolute_url(), follow=True)
    assert Membership.objects.get(campaign=campaign, user=newcomer).role == role
    assert _messages(response)[0].startswith(welcome)
    assert _sheet_create_url(campaign) not in _messages(response)[0]


def test_a_second_click_spends_no_second_use():
    campaign = _new_campaign()
    invitation = _invite(campaign)
    client = client_for(UserFactory())
    client.post(invitation.get_absolute_url(), follow=True)  # welcomed
    response = client.post(invitation.get_absolute_url(), follow=True)
    assert response.redirect_chain == [(campaign.get_absolute_url(), 302)]
    assert _messages(response) == ["Ya formas parte de esta partida."]
    invitation.refresh_from_db()
    assert invitation.uses == 1


def test_the_last_use_lets_one_person_in_and_the_next_is_told_the_link_is_spent():
    campaign = _new_campaign()
    invitation = _invite(campaign, max_uses=1)
    first, second = UserFactory(), UserFactory()
    assert client_for(first).post(invitation.get_absolute_url()).status_code == 302
    response = client_for(second).post(invitation.get_absolute_url())
    assert response.status_code == 410
    assert "Ya se usó tantas veces como permitía." in response.text
    assert not Membership.objects.filter(user=second).exists()
    # The one who used it is still sent to the campaign, not to a dead link.
    assert client_for(first).get(invitation.get_absolute_url()).url == campaign.get_absolute_url()


@pytest.mark.parametrize("spoilt", ["revoked", "expired"])
def test_a_revoked_or_expired_invitation_lets_nobody_in(spoilt):
    campaign = _new_campaign(visibility=Visibility.PUBLIC)
    invitation = _invite(campaign)
    if spoilt == "revoked":
        services.invitation_revoke(invitation=invitation, actor=campaign.gm)
    else:
        Invitation.objects.filter(pk=invitation.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    newcomer = UserFactory()
    response = client_for(newcomer).post(invitation.get_absolute_url())
    assert response.status_code == 410
    assert "Esta invitación ya no sirve" in response.text
    # A public campaign can still be read (and asked to join).
    assert f'href="{campaign.get_absolute_url()}"' in response.text
    assert not Membership.objects.filter(user=newcomer).exists()


def test_someone_the_direction_removed_is_told_the_link_cannot_bring_them_back(table):
    services.member_remove(membership=table.membership(table.other), actor=table.gm, reason="Ausente")
    client = client_for(table.other)
    message = "La dirección te expulsó de esta partida y una invitación no basta para volver."
    page = client.get(table.invitation.get_absolute_url())
    assert page.status_code == 403
    assert message in page.text
    assert "Unirme a la partida" not in page.text
    response = client.post(table.invitation.get_absolute_url())
    assert response.status_code == 403
    assert message in response.text
    assert table.membership(table.other).status == Membership.Status.REMOVED
    table.invitation.refresh_from_db()
    assert table.invitation.uses == 0


def test_a_member_who_left_comes_back_with_the_invitations_role(table):
    services.membership_leave(membership=table.membership(table.player))
    reader_link = _invite(table.campaign, Role.READER)
    response = client_for(table.player).post(reader_link.get_absolute_url())
    assert response.url == table.campaign.get_absolute_url()
    membership = table.membership(table.player)
    assert (membership.status, membership.role, membership.ended_at) == (Membership.Status.ACTIVE, Role.READER, None)


def test_coming_back_gives_a_new_private_feed_address_and_joining_date(table):
    before = table.membership(table.player)
    services.membership_leave(membership=before)
    client_for(table.player).post(_invite(table.campaign).get_absolute_url())
    after = table.membership(table.player)
    # The old address may have been passed on while they were away: it reads nothing now.
    assert after.feed_token != before.feed_token
    assert after.joined_at > before.joined_at
    assert client_for(table.player).get(reverse("campaigns:member-feed", args=[before.feed_token])).status_code == 404


def test_an_application_accepted_for_someone_who_left_also_renews_the_feed_address(table):
    before = table.membership(table.player)
    services.membership_leave(membership=before)
    application = services.application_create(campaign=table.campaign, user=table.player, text="Vuelvo.")
    services.application_decide(application=application, actor=table.campaign.gm, accept=True, answer="")
    after = table.membership(table.player)
    assert after.status == Membership.Status.ACTIVE
    assert after.feed_token != before.feed_token


def test_a_pending_application_is_withdrawn_when_its_author_joins_by_invitation(table):
    client_for(table.applicant).post(table.invitation.get_absolute_url())
    table.application.refresh_from_db()
    assert table.application.status == Application.Status.WITHDRAWN
    dashboard = client_for(table.gm).get(reverse("campaigns:dashboard", args=[table.campaign.slug]))
    assert list(dashboard.context["applications"]) == []


def test_members_and_the_gm_following_the_link_are_sent_to_the_campaign(table):
    for who in ("gm", "cogm", "player", "reader"):
        response = table.client(who).post(table.invitation.get_absolute_url(), follow=True)
        assert response.redirect_chain == [(table.campaign.get_absolute_url(), 302)]
        assert _messages(response) == ["Ya formas parte de esta partida."]
    table.invitation.refresh_from_db()
    assert table.invitation.uses == 0


def test_an_anonymous_post_is_sent_to_log_in_and_back(client, table):
    members = Membership.objects.filter(campaign=table.campaign).count()
    response = client.post(table.invitation.get_absolute_url())
    assert response.url == f"{reverse('accounts:login')}?next={table.invitation.get_absolute_url()}"
    assert Membership.objects.filter(campaign=table.campaign).count() == members
    table.invitation.refresh_from_db()
    assert table.invitation.uses == 0


def test_only_an_outsider_the_direction_removed_counts_as_removed(table):
    services.member_remove(membership=table.membership(table.other), actor=table.gm, reason="Ausente")
    services.membership_leave(membership=table.membership(table.reader))
    removed = {
        who: perms.was_removed(campaign_access(table.user(who), table.campaign))
        for who in ("gm", "cogm", "player", "other", "reader", "outsider", "applicant")
    }
    assert removed == {
        "gm": False,
        "cogm": False,
        "player": False,
        "other": True,
        "reader": False,
        "outsider": False,
        "applicant": False,
    }


# --- the whole path of a newcomer -----------------------------------------------------------


def test_a_newcomer_signs_up_from_the_invitation_and_is_a_member_asked_for_a_character(client):
    campaign = _new_campaign()
    invitation = _invite(campaign)
    url = invitation.get_absolute_url()
    signup = f"{reverse('accounts:signup')}?next={url}"
    form = client.get(signup)
    assert f'<input type="hidden" name="next" value="{url}">' in form.text
    response = client.post(
        reverse("accounts:signup"),
        {"username": "carmen", "email": "carmen@example.org", "password1": STRONG, "password2": STRONG, "next": url},
        follow=True,
    )
    # Signing up from the link is following it: straight into the campaign, no second step.
    assert response.redirect_chain == [(campaign.get_absolute_url(), 302)]
    assert Membership.objects.get(campaign=campaign, user__username="carmen").role == Role.PLAYER
    assert _messages(response)[0] == "Te damos la bienvenida a Hitos, carmen. Tu cuenta está lista."
    assert "Ya eres jugador" in _messages(response)[1]
    # The campaign page itself asks for the character, and the scenes' empty state speaks to a player.
    assert "Crea tu personaje" in response.text
    assert "La dirección aún no ha abierto ninguna escena." in response.text
    invitation.refresh_from_db()
    assert invitation.uses == 1


def test_a_newcomer_with_an_account_logs_in_from_the_invitation_and_is_a_member(client):
    campaign = _new_campaign()
    invitation = _invite(campaign)
    url = invitation.get_absolute_url()
    UserFactory(username="dario")
    page = client.get(f"{reverse('accounts:login')}?next={url}")
    assert f'<input type="hidden" name="next" value="{url}">' in page.text
    assert f'href="{reverse("accounts:signup")}?next={url}"' in page.text
    response = client.post(
        reverse("accounts:login"), {"username": "dario", "password": "clave-de-prueba-123", "next": url}
    )
    assert response.url == campaign.get_absolute_url()
    assert Membership.objects.active().filter(campaign=campaign, user__username="dario").exists()


def test_logging_in_towards_a_spent_invitation_lands_on_its_page_which_says_why(client):
    campaign = _new_campaign()
    invitation = _invite(campaign)
    invitation.revoked = True
    invitation.save(update_fields=["revoked"])
    url = invitation.get_absolute_url()
    UserFactory(username="dario")
    response = client.post(
        reverse("accounts:login"), {"username": "dario", "password": "clave-de-prueba-123", "next": url}
    )
    assert response.url == url
    assert client.get(url).status_code == 410
    assert not Membership.objects.filter(campaign=campaign, user__username="dario").exists()


def test_logging_in_towards_any_other_page_joins_nothing(client):
    campaign = _new_campaign()
    _invite(campaign)
    UserFactory(username="dario")
    response = client.post(
        reverse("accounts:login"),
        {"username": "dario", "password": "clave-de-prueba-123", "next": campaign.get_absolute_url()},
    )
    assert response.url == campaign.get_absolute_url()
    assert not Membership.objects.filter(campaign=campaign, user__username="dario").exists()


# --- the campaign page: the next step of each reader ----------------------------------------


def test_a_new_campaign_offers_its_gm_to_invite_players_and_create_the_first_scene():
    campaign = _new_campaign()
    response = client_for(campaign.gm).get(campaign.get_absolute_url())
    dashboard = reverse("campaigns:dashboard", args=[campaign.slug])
    assert f'href="{dashboard}#invitaciones">Invitar jugadores</a>' in response.text
    assert f'href="{reverse("campaigns:scene-create", args=[campaign.slug])}">Crear la primera escena</a>' in (
        response.text
    )
    assert "Nueva escena" not in response.text
    assert "Aún no hay jugadores." in response.text
    # The anchor exists on the dashboard.
    assert 'id="invitaciones"' in client_for(campaign.gm).get(dashboard).text


def test_once_the_story_has_a_scene_the_gm_gets_nueva_escena_and_no_empty_state(table):
    response = table.client("gm").get(table.campaign.get_absolute_url())
    assert "Nueva escena" in response.text
    assert "Crear la primera escena" not in response.text
    assert "Invitar jugadores" in response.text
    assert "Aún no hay jugadores." not in response.text


def test_players_and_outsiders_never_see_the_gms_actions(table):
    for who in ("player", "reader", "outsider", "anonymous"):
        text = table.client(who).get(table.campaign.get_absolute_url()).text
        assert "Invitar jugadores" not in text
        assert "Crear la primera escena" not in text


def test_a_player_is_told_no_scene_is_open_yet_and_where_to_say_hello():
    campaign = _new_campaign()
    player = add_member(campaign, Role.PLAYER)
    offgame = campaign.scenes.get(is_offgame=True)
    text = client_for(player).get(campaign.get_absolute_url()).text
    assert (
        "La dirección aún no ha abierto ninguna escena. Mientras tanto, puedes saludar en "
        f'<a href="{offgame.get_absolute_url()}">Fuera de juego</a>.'
    ) in text
    # The scene appears, and the empty state goes at once (the page is cached).
    services.scene_create(campaign=campaign, title="El muelle")
    text = client_for(player).get(campaign.get_absolute_url()).text
    assert "El muelle" in text
    assert "La dirección aún no ha abierto ninguna escena." not in text


def test_role_labels_read_alike_everywhere_they_are_shown(table):
    page = table.client("player").get(table.campaign.get_absolute_url()).text
    for name, role in (("La Directora", "Director"), ("El Codirector", "Codirector"), ("Ana", "Jugador")):
        assert re.search(rf"{name} <span class=\"small text-body-secondary\">\({role}\)</span>", page)
    assert 'La Lectora <span class="small text-body-secondary">(Lector)</span>' in page
    assert "(dirección)" not in page
    dashboard = table.client("gm").get(reverse("campaigns:dashboard", args=[table.campaign.slug])).text
    assert 'Ana <span class="small text-body-secondary">(Jugador)</span>' in dashboard
    assert "Papel: Jugador · 0 de 3 usos" in dashboard
    assert "Papel: Jugador" in table.client("outsider").get(table.invitation.get_absolute_url()).text


# --- the character a player still has to create ----------------------------------------------


def test_a_player_without_a_character_is_asked_to_create_one_until_they_do(table):
    client = table.client("player")
    text = client.get(table.campaign.get_absolute_url()).text
    assert f'<a class="btn btn-primary btn-sm" href="{_sheet_create_url(table.campaign)}">Crea tu personaje</a>' in (
        text
    )
    # A new draft makes the call to action go at once, and says what is left to do.
    draft = CharacterFactory(campaign=table.campaign, owner=table.player, name="Inés", status=Character.Status.DRAFT)
    text = client.get(table.campaign.get_absolute_url()).text
    assert "Crea tu personaje" not in text
    sheet = reverse("sheets:sheet-detail", args=[table.campaign.slug, draft.pk])
    assert f'Tu ficha <a href="{sheet}">Inés</a> está en borrador: termínala y envíala a la dirección.' in text
    draft.status = Character.Status.APPROVED
    draft.save()
    text = client.get(table.campaign.get_absolute_url()).text
    assert "está en borrador" not in text
    assert f'<a href="{sheet}">Inés</a>' in text


def test_only_players_are_asked_for_a_character(table):
    for who in ("gm", "cogm", "reader", "outsider", "anonymous"):
        assert "Crea tu personaje" not in table.client(who).get(table.campaign.get_absolute_url()).text
    # Another player's character does not count as theirs.
    CharacterFactory(campaign=table.campaign, owner=table.other)
    assert "Crea tu personaje" in table.client("player").get(table.campaign.get_absolute_url()).text


def test_the_character_list_says_what_each_reader_can_do_when_empty(table):
    url = reverse("sheets:sheet-list", args=[table.campaign.slug])
    for headers in ({}, HX):
        player = table.client("player").get(url, headers=headers)
        assert player.status_code == 200
        assert f'href="{_sheet_create_url(table.campaign)}">Crea tu personaje</a>' in player.text
        gm = table.client("gm").get(url, headers=headers)
        dashboard = reverse("campaigns:dashboard", args=[table.campaign.slug])
        assert f'<a href="{dashboard}#invitaciones">Invita a tus jugadores</a>' in gm.text
        reader = table.client("reader").get(url, headers=headers)
        assert "No hay fichas que puedas ver." in reader.text
        assert "Crea tu personaje" not in reader.text
    # The htmx answer is the table alone, without the page around it.
    partial = table.client("player").get(url, headers=HX).text
    assert partial.lstrip().startswith('<div id="sheet-table">')
    assert "<html" not in partial


# --- the home page --------------------------------------------------------------------------


def test_a_visitor_is_told_how_to_start_and_an_empty_list_how_to_fill_it(client):
    text = client.get(reverse("home")).text
    assert "Empieza a jugar" in text
    assert f'href="{reverse("accounts:signup")}">Crear una cuenta</a>' in text
    assert f'href="{reverse("accounts:login")}">Ya tengo cuenta</a>' in text
    assert "Aún no hay partidas públicas." in text
    assert f'<a href="{reverse("campaigns:campaign-create")}">Dirige tú la primera: crea una partida</a>' in text


def test_a_signed_in_user_without_campaigns_is_told_their_three_ways_in(client):
    me = UserFactory()
    client.get(reverse("home"))  # an anonymous visit first: the shared list is kept
    text = client_for(me).get(reverse("home")).text
    assert "Empieza a jugar" not in text
    assert "Todavía no juegas en ninguna partida." in text
    assert "Si alguien te ha invitado, abre el enlace de su invitación y pulsa «Unirme a la partida»." in text
    assert f'href="{reverse("campaigns:campaign-create")}">Crear una partida</a>' in text
    assert 'href="#partidas-publicas">Ver las partidas públicas</a>' in text
    assert 'id="partidas-publicas"' in text
    # Once they play somewhere, the list replaces the guidance at once.
    _invite_and_join(me)
    text = client_for(me).get(reverse("home")).text
    assert "Todavía no juegas" not in text
    assert "Niebla" in text


def _invite_and_join(user) -> None:
    client_for(user).post(_invite(_new_campaign()).get_absolute_url())
