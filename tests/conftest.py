import pytest
from django.db import connection, transaction
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


# The PostgreSQL triggers that refuse TRUNCATE (the roll log's, rolls 0003).
TRUNCATE_TRIGGERS = """
SELECT tgrelid::regclass::text, quote_ident(tgname) FROM pg_trigger
WHERE NOT tgisinternal AND tgtype & 32 <> 0 AND tgenabled <> 'D'
"""


@pytest.fixture(autouse=True, scope="session")
def _flush_past_the_truncate_triggers():
    """Let the flush after a ``transaction=True`` test empty the roll log.

    pytest-django empties the database after such a test with one TRUNCATE of
    every table, which the log's triggers refuse. Here the flush does what
    docs/deploy.md reserves for the tables' owner (the role the tests connect
    as): in the flush's own transaction it disables the TRUNCATE triggers,
    truncates, and enables them again. No other session ever sees them
    disabled, the UPDATE and DELETE triggers stay on, and the triggers
    themselves keep no way around them that the site's role could use.
    """
    if connection.vendor != "postgresql":
        yield
        return
    operations = type(connection.ops)
    flush = operations.execute_sql_flush

    def execute_sql_flush(self, sql_list):
        with transaction.atomic(using=self.connection.alias), self.connection.cursor() as cursor:
            cursor.execute(TRUNCATE_TRIGGERS)
            triggers = cursor.fetchall()
            for table, trigger in triggers:
                cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER {trigger}")
            flush(self, sql_list)
            for table, trigger in triggers:
                cursor.execute(f"ALTER TABLE {table} ENABLE TRIGGER {trigger}")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(operations, "execute_sql_flush", execute_sql_flush)
        yield


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
