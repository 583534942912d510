"""Fixtures for the campaign view, permission, service and XSS tests."""

from datetime import timedelta

import pytest
from django.utils import timezone

from campaigns.models import Invitation, Visibility
from tests.campaigns.factories import Table, make_table


@pytest.fixture
def table(db) -> Table:
    return make_table(Visibility.PUBLIC)


@pytest.fixture
def private_table(db) -> Table:
    return make_table(Visibility.PRIVATE)


@pytest.fixture
def expired_invitation(table) -> Invitation:
    return Invitation.objects.create(
        campaign=table.campaign,
        created_by=table.gm,
        expires_at=timezone.now() - timedelta(hours=1),
    )
