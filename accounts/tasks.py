"""Background tasks of the accounts: the password-reset e-mail.

The request only enqueues the task, so a slow or silent mail server never
holds it, and it looks nobody up: the worker finds the accounts with that
address and makes their one-time links itself (no link is ever stored in the
task queue).

The link is built from ``SITE_URL``, never from the host the request came in
on: a forged ``Host`` header cannot send someone's reset link elsewhere, and
the link points at the public site, not at the port the application listens
on. The message is transactional: it says it was sent by a machine
(``Auto-Submitted``, RFC 3834) and has a Message-ID in the site's domain, but
no unsubscribe.
"""

from __future__ import annotations

import logging
from email.utils import make_msgid
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.forms import PasswordResetForm
from django.core.mail import EmailMessage
from django.tasks import task
from django.template.loader import render_to_string
from django.utils import translation

logger = logging.getLogger(__name__)


class _SiteMailPasswordResetForm(PasswordResetForm):
    """Django's reset form, sending its message with the site's headers."""

    def send_mail(
        self,
        subject_template_name,
        email_template_name,
        context,
        from_email,
        to_email,
        html_email_template_name=None,
    ):
        # A subject must not hold a line break (a header injection otherwise).
        subject = "".join(render_to_string(subject_template_name, context).splitlines())
        body = render_to_string(email_template_name, context)
        message = EmailMessage(
            subject,
            body,
            from_email,
            [to_email],
            headers={
                "Message-ID": make_msgid(domain=urlsplit(settings.SITE_URL).hostname or "localhost"),
                "Auto-Submitted": "auto-generated",
            },
        )
        try:
            message.send()
        except Exception:
            # As Django's form does: the page already answered, and the log says why nothing came.
            logger.exception("Failed to send password reset email to %s", context["user"].pk)


@task
def send_password_reset(
    *,
    email: str,
    language: str,
    subject_template_name: str,
    email_template_name: str,
    domain: str = "",
    use_https: bool = False,
) -> None:
    """E-mail a one-time link to each active account with this address.

    ``domain`` and ``use_https`` (the request's host and scheme) are accepted
    for the tasks already queued with them, and not used: the link's address
    is ``SITE_URL``'s.
    """
    form = _SiteMailPasswordResetForm({"email": email})
    if not form.is_valid():
        return
    site = urlsplit(settings.SITE_URL)
    with translation.override(language):
        form.save(
            # The templates write ``{{ protocol }}://{{ domain }}`` before the path.
            domain_override=site.netloc + site.path.rstrip("/"),
            use_https=site.scheme == "https",
            subject_template_name=subject_template_name,
            email_template_name=email_template_name,
        )
