import pytest
from django.test import Client

from tests.factories import CampaignFactory, UserFactory


@pytest.fixture(autouse=True)
def _fast_password_hasher(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _plain_static_storage(settings):
    # Tests render templates without running collectstatic first.
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


@pytest.fixture
def user(db):
    return UserFactory()


@pytest.fixture
def user_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def campaign(db):
    return CampaignFactory()
