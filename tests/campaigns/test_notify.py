import logging

import pytest
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from campaigns import notify, services
from campaigns.models import Application, Membership, Notification, Post, Role
from campaigns.permissions import campaign_access, can_view_scene
from tests.factories import CampaignFactory, UserFactory
from tests.factories import add_member as member
from tests.factories import make_post as post
from tests.factories import make_scene as scene

pytestmark = pytest.mark.django_db

Choice = User.EmailChoice


@pytest.fixture(autouse=True)
def _site_url(settings):
    settings.SITE_URL = "https://hitos.example"


@pytest.fixture
def party():
    """A campaign with a GM, a co-GM, two players, a reader, a player who
    left, a removed player and an outsider; everyone wants no e-mail unless a
    test says otherwise."""
    campaign = CampaignFactory(gm=UserFactory(email_notifications=Choice.NEVER, display_name="Dirección"))
    people = {
        "gm": campaign.gm,
        "cogm": member(campaign, role=Role.COGM, email_notifications=Choice.NEVER),
        "ana": member(campaign, email_notifications=Choice.NEVER, display_name="Ana"),
        "bea": member(campaign, email_notifications=Choice.NEVER),
        "reader": member(campaign, role=Role.READER, email_notifications=Choice.NEVER),
        "left": member(campaign, status=Membership.Status.LEFT, email_notifications=Choice.NEVER),
        "removed": member(campaign, status=Membership.Status.REMOVED, email_notifications=Choice.NEVER),
        "outsider": UserFactory(email_notifications=Choice.NEVER),
    }
    return campaign, people


def _notified(people, post_obj) -> dict[str, str]:
    names = {user.pk: name for name, user in people.items()}
    return {names[n.user_id]: n.kind for n in Notification.objects.filter(post=post_obj)}


def _created(post_obj):
    notify.post_created(post_obj)
    return post_obj


# --- who is notified ----------------------------------------------------------


def test_a_post_to_everyone_notifies_every_active_member_and_the_gm_but_not_its_author(party):
    campaign, people = party
    written = _created(post(scene(campaign), people["ana"]))
    kinds = _notified(people, written)
    assert kinds == {"gm": "post", "cogm": "post", "bea": "post", "reader": "post"}


def test_removed_and_departed_members_and_outsiders_are_never_notified(party):
    campaign, people = party
    written = _created(post(scene(campaign), people["gm"]))
    assert set(_notified(people, written)) == {"cogm", "ana", "bea", "reader"}


def test_a_split_party_scene_notifies_only_its_participants_and_the_direction(party):
    campaign, people = party
    split = scene(
        campaign, everyone=False, participants=[people["ana"], people["bea"], people["left"], people["outsider"]]
    )
    written = _created(post(split, people["ana"]))
    assert _notified(people, written) == {"gm": "post", "cogm": "post", "bea": "post"}


def test_a_whisper_to_the_direction_notifies_only_the_gm_and_co_gms_as_addressed(party):
    campaign, people = party
    written = _created(post(scene(campaign), people["bea"], recipients=Post.Recipients.GM))
    assert _notified(people, written) == {"gm": "addressed", "cogm": "addressed"}


def test_a_co_gm_whispering_to_the_direction_notifies_the_gm_only(party):
    campaign, people = party
    written = _created(post(scene(campaign), people["cogm"], recipients=Post.Recipients.GM))
    assert _notified(people, written) == {"gm": "addressed"}


def test_a_post_to_chosen_members_notifies_them_and_the_direction(party):
    campaign, people = party
    written = _created(
        post(scene(campaign), people["ana"], recipients=Post.Recipients.CHOSEN, chosen=[people["reader"]])
    )
    assert _notified(people, written) == {"gm": "addressed", "cogm": "addressed", "reader": "addressed"}


def test_chosen_members_who_cannot_see_the_scene_or_left_are_not_notified(party):
    campaign, people = party
    split = scene(campaign, everyone=False, participants=[people["ana"]])
    chosen = [people["bea"], people["left"], people["outsider"], people["ana"]]
    written = _created(post(split, people["gm"], recipients=Post.Recipients.CHOSEN, chosen=chosen))
    assert _notified(people, written) == {"cogm": "addressed", "ana": "addressed"}


def test_an_inactive_account_is_not_notified(party):
    campaign, people = party
    User.objects.filter(pk=people["bea"].pk).update(is_active=False)
    written = _created(post(scene(campaign), people["ana"]))
    assert "bea" not in _notified(people, written)


@pytest.mark.parametrize(("author", "from_gm"), [("gm", True), ("cogm", True), ("ana", False)])
def test_from_gm_tells_whether_the_direction_wrote_the_post(party, author, from_gm):
    campaign, people = party
    written = _created(post(scene(campaign), people[author]))
    assert set(Notification.objects.filter(post=written).values_list("from_gm", flat=True)) == {from_gm}


def test_the_notification_names_the_speaker_and_scene_and_links_to_the_permalink(party):
    campaign, people = party
    written = _created(post(scene(campaign, title="El faro"), people["ana"]))
    notification = Notification.objects.get(post=written, user=people["gm"])
    assert notification.text == f"Ana ha escrito en «El faro» ({campaign.title})."
    assert notification.url == f"/mensajes/{written.pk}/"
    assert notification.campaign == campaign
    assert notification.read_at is None and notification.emailed_at is None


def test_a_whisper_notification_says_it_is_private(party):
    campaign, people = party
    written = _created(post(scene(campaign, title="El faro"), people["ana"], recipients=Post.Recipients.GM))
    notification = Notification.objects.get(post=written, user=people["gm"])
    assert notification.text == f"Ana te ha escrito un mensaje privado en «El faro» ({campaign.title})."


def test_an_npc_post_is_announced_with_the_npc_name_stored_as_plain_text(party):
    campaign, people = party
    payload = "<script>alert(1)</script>"
    written = _created(post(scene(campaign, title="<b>x</b>"), people["gm"], voice=Post.Voice.NPC, npc_name=payload))
    notification = Notification.objects.get(post=written, user=people["ana"])
    assert notification.text.startswith(f"{payload} ha escrito en «<b>x</b>»")


def test_a_long_title_is_cut_to_fit_the_text_column(party):
    campaign, people = party
    written = _created(
        post(scene(campaign, title="larga " * 20), people["gm"], voice=Post.Voice.NPC, npc_name="n" * 80)
    )
    text = Notification.objects.get(post=written, user=people["ana"]).text
    assert len(text) <= 300


def test_post_created_runs_a_constant_number_of_queries_whatever_the_number_of_members(django_assert_max_num_queries):
    counts = []
    for size in (2, 12):
        campaign = CampaignFactory(gm=UserFactory(email_notifications=Choice.IMMEDIATE))
        players = [member(campaign, email_notifications=Choice.IMMEDIATE) for _ in range(size)]
        split = scene(campaign, everyone=False, participants=players)
        written = post(split, players[0], recipients=Post.Recipients.CHOSEN, chosen=players[1:])
        with CaptureQueriesContext(connection) as queries:
            notify.post_created(written)
        counts.append(len(queries))
        assert Notification.objects.filter(post=written).count() == size
    assert counts[0] == counts[1]
    with django_assert_max_num_queries(counts[0]):
        notify.post_created(written)


def test_the_post_service_notifies_through_this_module(party, django_capture_on_commit_callbacks):
    campaign, people = party
    User.objects.filter(pk=people["gm"].pk).update(email_notifications=Choice.IMMEDIATE)
    access = campaign_access(people["ana"], campaign)
    with django_capture_on_commit_callbacks(execute=True):
        written = services.post_create(access=access, scene=scene(campaign), voice=Post.Voice.OOC, body="Hola")
    assert set(_notified(people, written)) == {"gm", "cogm", "bea", "reader"}
    assert [m.to for m in mail.outbox] == [[people["gm"].email]]


# --- e-mail per preference ----------------------------------------------------


def _mail_table():
    campaign = CampaignFactory(gm=UserFactory(email_notifications=Choice.NEVER))
    users = {
        choice: member(campaign, email_notifications=choice, username=f"u-{choice}", email=f"{choice}@example.org")
        for choice in Choice.values
    }
    # The author would like every e-mail, but never gets one about their own post.
    author = member(campaign, email_notifications=Choice.IMMEDIATE, email="author@example.org")
    return campaign, users, author


def test_immediate_users_get_an_e_mail_after_commit_and_it_is_marked_sent(django_capture_on_commit_callbacks):
    campaign, users, author = _mail_table()
    written = post(scene(campaign, title="El faro"), author)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        notify.post_created(written)
    assert mail.outbox == []  # Nothing before the transaction commits.
    for callback in callbacks:
        callback()
    assert [m.to for m in mail.outbox] == [["immediate@example.org"]]
    message = mail.outbox[0]
    assert message.subject == f"[Hitos] {author.public_name} ha escrito en «El faro» ({campaign.title})."
    assert f"https://hitos.example/mensajes/{written.pk}/" in message.body
    assert "https://hitos.example/cuenta/perfil/" in message.body
    assert message.body.startswith(f"Hola, {users['immediate'].public_name}:")
    sent = Notification.objects.get(post=written, user=users["immediate"])
    assert sent.emailed_at is not None
    assert not Notification.objects.filter(post=written, emailed_at__isnull=False).exclude(pk=sent.pk).exists()


def test_a_rolled_back_post_sends_no_e_mail(django_capture_on_commit_callbacks):
    campaign, users, author = _mail_table()
    written = post(scene(campaign), author)
    with django_capture_on_commit_callbacks(execute=False):
        notify.post_created(written)
    assert mail.outbox == []


def test_gm_only_users_get_an_e_mail_when_the_gm_writes(django_capture_on_commit_callbacks):
    campaign, users, _author = _mail_table()
    written = post(scene(campaign), campaign.gm)
    with django_capture_on_commit_callbacks(execute=True):
        notify.post_created(written)
    assert sorted(m.to[0] for m in mail.outbox) == [
        "author@example.org",
        "gm_only@example.org",
        "immediate@example.org",
    ]


def test_gm_only_users_get_an_e_mail_when_a_co_gm_writes(django_capture_on_commit_callbacks):
    campaign, users, _author = _mail_table()
    cogm = member(campaign, role=Role.COGM, email_notifications=Choice.NEVER)
    written = post(scene(campaign), cogm)
    with django_capture_on_commit_callbacks(execute=True):
        notify.post_created(written)
    assert sorted(m.to[0] for m in mail.outbox) == [
        "author@example.org",
        "gm_only@example.org",
        "immediate@example.org",
    ]


def test_gm_only_users_get_no_e_mail_when_a_player_writes(django_capture_on_commit_callbacks):
    campaign, users, author = _mail_table()
    written = post(scene(campaign), author)
    with django_capture_on_commit_callbacks(execute=True):
        notify.post_created(written)
    assert [m.to for m in mail.outbox] == [["immediate@example.org"]]
    assert Notification.objects.get(post=written, user=users["gm_only"]).emailed_at is None


def test_digest_and_never_users_get_no_e_mail_now_but_see_the_notification(django_capture_on_commit_callbacks):
    campaign, users, _author = _mail_table()
    written = post(scene(campaign), campaign.gm)
    with django_capture_on_commit_callbacks(execute=True):
        notify.post_created(written)
    recipients = {m.to[0] for m in mail.outbox}
    assert "digest@example.org" not in recipients and "never@example.org" not in recipients
    for choice in (Choice.DIGEST, Choice.NEVER):
        assert Notification.objects.get(post=written, user=users[choice]).emailed_at is None


def test_a_user_without_an_address_gets_no_e_mail(django_capture_on_commit_callbacks):
    campaign, users, author = _mail_table()
    User.objects.filter(pk=users["immediate"].pk).update(email="")
    written = post(scene(campaign), author)
    with django_capture_on_commit_callbacks(execute=True):
        notify.post_created(written)
    assert mail.outbox == []


def test_a_mail_server_failure_is_logged_and_leaves_the_notification_unsent(
    settings, caplog, django_capture_on_commit_callbacks
):
    settings.MAILERS = {"default": {"BACKEND": "tests.campaigns.notify_helpers.BrokenBackend"}}
    campaign, users, author = _mail_table()
    written = post(scene(campaign), author)
    with caplog.at_level(logging.ERROR, logger="campaigns.notify"):
        with django_capture_on_commit_callbacks(execute=True):
            notify.post_created(written)
    assert "Could not send 1 notification e-mails" in caplog.text
    assert Notification.objects.get(post=written, user=users["immediate"]).emailed_at is None


# --- applications and moderation ----------------------------------------------


def _application(campaign, **fields):
    applicant = UserFactory(display_name="Carla", email_notifications=fields.pop("choice", Choice.IMMEDIATE))
    return Application.objects.create(campaign=campaign, user=applicant, text="Quiero jugar", **fields)


@pytest.mark.parametrize(
    ("gm_choice", "emailed"),
    [(Choice.IMMEDIATE, True), (Choice.GM_ONLY, True), (Choice.DIGEST, False), (Choice.NEVER, False)],
)
def test_an_application_notifies_the_gm_and_co_gms(gm_choice, emailed, django_capture_on_commit_callbacks):
    campaign = CampaignFactory(title="La Marca", gm=UserFactory(email_notifications=gm_choice))
    cogm = member(campaign, role=Role.COGM, email_notifications=Choice.NEVER)
    member(campaign, email_notifications=Choice.IMMEDIATE)
    with django_capture_on_commit_callbacks(execute=True):
        notify.application_received(_application(campaign))
    notifications = Notification.objects.filter(kind=Notification.Kind.APPLICATION)
    assert {n.user for n in notifications} == {campaign.gm, cogm}
    assert {n.text for n in notifications} == {"Carla quiere unirse a «La Marca»."}
    assert {n.url for n in notifications} == {f"/partidas/{campaign.slug}/direccion/"}
    assert [m.to for m in mail.outbox] == ([[campaign.gm.email]] if emailed else [])


@pytest.mark.parametrize(
    ("status", "answer", "text"),
    [
        (Application.Status.ACCEPTED, "", "Te han aceptado en «La Marca»."),
        (Application.Status.ACCEPTED, "¡Bienvenida!", "Te han aceptado en «La Marca». Respuesta: ¡Bienvenida!"),
        (
            Application.Status.REJECTED,
            "Ya somos muchos",
            "Han rechazado tu solicitud para «La Marca». Respuesta: Ya somos muchos",
        ),
    ],
)
def test_the_applicant_is_told_the_decision_with_the_answer(status, answer, text, django_capture_on_commit_callbacks):
    campaign = CampaignFactory(title="La Marca")
    application = _application(campaign, status=status, answer=answer)
    with django_capture_on_commit_callbacks(execute=True):
        notify.application_decided(application)
    notification = Notification.objects.get()
    assert (notification.user, notification.kind, notification.text) == (application.user, "application", text)
    assert notification.url == f"/partidas/{campaign.slug}/"
    assert [m.to for m in mail.outbox] == [[application.user.email]]
    assert text in mail.outbox[0].body


@pytest.mark.parametrize(
    ("choice", "emailed"),
    [(Choice.IMMEDIATE, True), (Choice.GM_ONLY, True), (Choice.DIGEST, False), (Choice.NEVER, False)],
)
def test_the_decision_is_e_mailed_by_preference(choice, emailed, django_capture_on_commit_callbacks):
    application = _application(CampaignFactory(), choice=choice, status=Application.Status.REJECTED)
    with django_capture_on_commit_callbacks(execute=True):
        notify.application_decided(application)
    assert len(mail.outbox) == int(emailed)
    assert (Notification.objects.get().emailed_at is not None) is emailed


def test_moderation_notifies_the_member_concerned_with_a_link_to_the_post(django_capture_on_commit_callbacks):
    campaign = CampaignFactory()
    ana = member(campaign, email_notifications=Choice.GM_ONLY)
    hidden = post(scene(campaign), ana)
    with django_capture_on_commit_callbacks(execute=True):
        notify.moderation(campaign, ana, "La dirección ha ocultado tu mensaje. Motivo: spoiler", post=hidden)
    notification = Notification.objects.get()
    assert (notification.user, notification.kind, notification.post) == (ana, "moderation", hidden)
    assert notification.url == f"/mensajes/{hidden.pk}/"
    assert notification.text == "La dirección ha ocultado tu mensaje. Motivo: spoiler"
    assert [m.to for m in mail.outbox] == [[ana.email]]


def test_moderation_without_a_post_links_to_the_campaign_and_cuts_a_long_reason():
    campaign = CampaignFactory()
    ana = member(campaign, email_notifications=Choice.DIGEST)
    notify.moderation(campaign, ana, "Te han expulsado. Motivo: " + "x" * 1000)
    notification = Notification.objects.get()
    assert notification.url == f"/partidas/{campaign.slug}/"
    assert len(notification.text) == 300 and notification.text.endswith("…")
    assert mail.outbox == []


def test_the_service_that_hides_a_post_tells_its_author(django_capture_on_commit_callbacks):
    campaign = CampaignFactory()
    ana = member(campaign, email_notifications=Choice.NEVER)
    written = post(scene(campaign), ana)
    services.post_hide(post=written, actor=campaign.gm, reason="spoiler")
    notification = Notification.objects.get(kind=Notification.Kind.MODERATION)
    assert notification.user == ana
    assert "spoiler" in notification.text


@pytest.mark.parametrize("everyone", [True, False])
@pytest.mark.parametrize("recipients", Post.Recipients.values)
@pytest.mark.parametrize("author", ["gm", "cogm", "ana", "reader"])
def test_the_people_notified_are_exactly_those_the_permissions_let_read_the_post(party, everyone, recipients, author):
    campaign, people = party
    where = scene(campaign, everyone=everyone, participants=[people["ana"], people["reader"], people["left"]])
    written = post(where, people[author], recipients=recipients, chosen=[people["bea"], people["reader"]])
    readers, _gm_ids = notify.post_readers(written)
    participant_ids = set(where.participants.values_list("pk", flat=True))
    for name, user in people.items():
        if name == author:
            continue  # Authors are never notified of their own posts.
        access = campaign_access(user, campaign)
        may_read = (
            can_view_scene(access, where, participant_ids)
            and access.is_member
            and Post.objects.addressed_to(user, is_gm=access.is_gm).filter(pk=written.pk).exists()
        )
        assert (user.pk in readers) is may_read, name
