"""The sheet addresses every game system shares (``sheets.kinds``): a
campaign whose system registered no sheet kind has no sheet pages."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse

from campaigns.models import Membership, Role
from sheets import kinds
from sheets.models import Character
from tests.conftest import client_for
from tests.factories import CampaignFactory, CharacterFactory, UserFactory

SHARED_PAGES = [
    ("sheet-list", False),
    ("sheet-create", False),
    ("npc-create", False),
    ("sheet-import", False),
    ("sheet-options", False),
    ("sheet-detail", True),
    ("sheet-edit", True),
    ("sheet-print", True),
    ("sheet-export", True),
    ("sheet-history", True),
]


@pytest.fixture
def sheetless(db):
    """A campaign of a system with no sheets (none is registered for it),
    with a character row of its own."""
    campaign = CampaignFactory(system="sin-fichas")
    player = UserFactory()
    Membership.objects.create(campaign=campaign, user=player, role=Role.PLAYER)
    character = Character.objects.create(campaign=campaign, owner=player, name="Nadie")
    return campaign, character


@pytest.mark.parametrize(("name", "per_sheet"), SHARED_PAGES)
def test_a_system_without_sheets_has_no_sheet_pages(sheetless, name, per_sheet):
    campaign, character = sheetless
    args = [campaign.slug, character.pk] if per_sheet else [campaign.slug]
    response = client_for(campaign.gm).get(reverse(f"sheets:{name}", args=args))
    assert response.status_code == 404


def test_the_campaign_page_offers_no_sheets_link_without_sheets(sheetless):
    campaign, _character = sheetless
    response = client_for(campaign.gm).get(campaign.get_absolute_url())
    assert response.status_code == 200
    assert reverse("sheets:sheet-list", args=[campaign.slug]) not in response.text


def test_a_hitos_campaign_serves_its_pages_at_the_shared_addresses(db):
    character = CharacterFactory()
    response = client_for(character.campaign.gm).get(character.get_absolute_url())
    assert response.status_code == 200
    assert kinds.get("hitos") is not None


def test_a_kind_may_only_serve_the_shared_pages():
    with pytest.raises(ImproperlyConfigured, match="unknown sheet pages"):
        kinds.register(kinds.SheetKind("otro", {"perfil": lambda request, campaign: None}))
    assert kinds.get("otro") is None


def test_two_kinds_for_one_system_are_refused():
    with pytest.raises(ImproperlyConfigured, match="Two sheet kinds"):
        kinds.register(kinds.SheetKind("hitos", {}))


@pytest.mark.parametrize("slug", ["no-existe", None])
def test_pages_that_need_an_account_ask_for_it_before_anything_else(db, slug):
    """Without an account, a page that needs one redirects to the log-in
    page whether the campaign exists or not (it never tells)."""
    slug = slug or CampaignFactory().slug
    response = client_for(None).get(reverse("sheets:sheet-create", args=[slug]))
    assert response.status_code == 302
    assert response.url.startswith(reverse("accounts:login"))
