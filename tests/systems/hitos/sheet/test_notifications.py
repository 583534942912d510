import pytest

from campaigns.models import Membership, Notification, Role
from sheets import services as core
from sheets.models import Character
from systems.hitos.sheet import services
from tests.factories import UserFactory


@pytest.fixture
def draft(world):
    world.sheet.status = Character.Status.DRAFT
    world.sheet.save(update_fields=["status"])
    return world.sheet


def test_submitting_a_sheet_tells_the_gm_and_co_gms_with_a_link_to_it(world, draft):
    cogm = UserFactory()
    Membership.objects.create(campaign=world.campaign, user=cogm, role=Role.COGM)
    core.sheet_submit(character=world.sheet, actor=world.player)
    notes = Notification.objects.filter(kind=Notification.Kind.SHEET).order_by("user_id")
    assert sorted(n.user_id for n in notes) == sorted([world.gm.pk, cogm.pk])
    assert {n.url for n in notes} == {world.sheet.get_absolute_url()}
    assert all("«Inés»" in n.text for n in notes)
    assert not Notification.objects.filter(user=world.player).exists()


@pytest.mark.parametrize(("approve", "expected"), [(True, "ha aprobado"), (False, "te ha devuelto")])
def test_reviewing_a_sheet_tells_its_owner(world, draft, approve, expected):
    core.sheet_submit(character=world.sheet, actor=world.player)
    services.sheet_review(
        character=world.sheet, actor=world.gm, approve=approve, comment="Falta la cita", accept_budget=True
    )
    note = Notification.objects.get(user=world.player, kind=Notification.Kind.SHEET)
    assert expected in note.text
    assert note.url == world.sheet.get_absolute_url()
    assert world.sheet.status == (Character.Status.APPROVED if approve else Character.Status.RETURNED)
