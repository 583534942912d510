"""What the apps above ``accounts`` do the moment someone signs up or logs
in, knowing where they were going (the safe ``next``): ``campaigns`` makes
the holder of an invitation link a member at once. ``accounts`` never
imports them: they register here from their ``AppConfig.ready()``.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest

# A hook gets the request (its user signed in) and the address they were
# going to; it answers where to send them instead, or None.
SignInHook = Callable[[HttpRequest, str], str | None]

_hooks: list[SignInHook] = []


def on_sign_in(hook: SignInHook) -> SignInHook:
    """Register ``hook`` (once, however often ``ready()`` runs)."""
    if hook not in _hooks:
        _hooks.append(hook)
    return hook


def signed_in(request: HttpRequest, next_url: str) -> str | None:
    """Run the hooks in order; the first address one answers wins."""
    for hook in _hooks:
        target = hook(request, next_url)
        if target:
            return target
    return None
