"""A broken mail server for the notification tests (the members, scenes and
posts they build come from tests/factories.py)."""

from django.core.mail.backends.base import BaseEmailBackend


class BrokenBackend(BaseEmailBackend):
    """A mail backend whose server is always down."""

    def send_messages(self, email_messages):
        raise ConnectionRefusedError("mail server down")
