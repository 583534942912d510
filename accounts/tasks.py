"""Background tasks of the accounts: the password-reset e-mail.

The request only enqueues the task, so a slow or silent mail server never
holds it, and it looks nobody up: the worker finds the accounts with that
address and makes their one-time links itself (no link is ever stored in the
task queue).
"""

from __future__ import annotations

from django.contrib.auth.forms import PasswordResetForm
from django.tasks import task
from django.utils import translation


@task
def send_password_reset(
    *,
    email: str,
    domain: str,
    use_https: bool,
    language: str,
    subject_template_name: str,
    email_template_name: str,
) -> None:
    form = PasswordResetForm({"email": email})
    if not form.is_valid():
        return
    with translation.override(language):
        form.save(
            domain_override=domain,
            use_https=use_https,
            subject_template_name=subject_template_name,
            email_template_name=email_template_name,
        )
