import ipaddress
import math
from datetime import datetime, timedelta

from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_cool_off, get_failure_limit
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.template.response import TemplateResponse
from django.urls import reverse, reverse_lazy
from django.utils import timezone, translation
from django.utils.cache import add_never_cache_headers
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST
from django_ratelimit.core import get_usage

from accounts import hooks
from accounts.forms import BackgroundPasswordResetForm, LoginForm, ProfileForm, SignUpForm

_LANGUAGE_CODES = {code for code, _name in settings.LANGUAGES}


def _set_language_cookie(response: HttpResponse, language: str) -> None:
    response.set_cookie(
        settings.LANGUAGE_COOKIE_NAME,
        language,
        max_age=settings.LANGUAGE_COOKIE_AGE,
        path=settings.LANGUAGE_COOKIE_PATH,
        domain=settings.LANGUAGE_COOKIE_DOMAIN,
        secure=settings.LANGUAGE_COOKIE_SECURE,
        httponly=settings.LANGUAGE_COOKIE_HTTPONLY,
        samesite=settings.LANGUAGE_COOKIE_SAMESITE,
    )


def _safe_next(request: HttpRequest, default: str) -> str:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return target
    return default


@require_http_methods(["GET", "HEAD", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    """Create an account and log in. A safe ``next`` (an address of this
    site, as the log-in page accepts it) is where the newcomer goes then, an
    invitation's page say; anything else sends them home."""
    next_url = _safe_next(request, "")
    if request.user.is_authenticated:
        return redirect(next_url or "home")
    form = SignUpForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        user = form.save(commit=False)
        # Keep the language the newcomer was reading the site in.
        user.language = translation.get_language() if translation.get_language() in _LANGUAGE_CODES else ""
        user.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        if next_url:
            message = _("Te damos la bienvenida a Hitos, %(name)s. Tu cuenta está lista.")
        else:
            message = _("Te damos la bienvenida a Hitos, %(name)s. Ya puedes unirte a una partida o crear la tuya.")
        messages.success(request, message % {"name": user.public_name})
        # Signing up from an invitation's page is following its link: the apps may send them on.
        return redirect((next_url and hooks.signed_in(request, next_url)) or next_url or "home")
    return render(request, "accounts/signup.html", {"form": form, "next": next_url})


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def profile(request: HttpRequest) -> HttpResponse:
    form = ProfileForm(request.POST if request.method == "POST" else None, instance=request.user)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        messages.success(request, _("Perfil guardado."))
        response = redirect("accounts:profile")
        if user.language:
            _set_language_cookie(response, user.language)
        return response
    return render(request, "accounts/profile.html", {"form": form})


@require_POST
def language_set(request: HttpRequest) -> HttpResponse:
    """Switch the interface language; a signed-in user's choice is saved."""
    language = request.POST.get("language", "")
    if language not in _LANGUAGE_CODES:
        return HttpResponseBadRequest(_("Idioma desconocido."))
    if request.user.is_authenticated and request.user.language != language:
        request.user.language = language
        request.user.save(update_fields=["language"])
    response = redirect(_safe_next(request, reverse("home")))
    _set_language_cookie(response, language)
    return response


# Throttling of log-ins (django-axes, configured in settings) and of
# password-reset requests (django-ratelimit).


def client_ip(request: HttpRequest) -> str | None:
    """The address a request comes from, as throttling counts it.

    Behind ``TRUSTED_PROXY_COUNT`` reverse proxies, each appending to
    X-Forwarded-For the address it received the request from, the client is
    the entry that many places from the right; entries further left were
    written by the client and prove nothing. Without the header (a request
    that did not pass the proxies) the connection's address is used. An IPv6
    address counts by its /64 network, which one home or server usually holds
    whole. ``None`` when no valid address can be read.
    """
    address = request.META.get("REMOTE_ADDR", "")
    proxies = settings.TRUSTED_PROXY_COUNT
    if proxies:
        forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        forwarded = [part for part in forwarded if part]
        if forwarded:
            address = forwarded[-min(proxies, len(forwarded))]
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return None
    if ip.version == 6:
        if ip.ipv4_mapped:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False).network_address)
    return str(ip)


def _throttled(request: HttpRequest, template: str, retry_at: datetime) -> HttpResponse:
    """A 429 page saying when the refused action can be tried again."""
    seconds_left = max(1, math.ceil((retry_at - timezone.now()).total_seconds()))
    context = {"retry_at": retry_at, "minutes_left": math.ceil(seconds_left / 60)}
    response = render(request, template, context, status=429)
    response["Retry-After"] = str(seconds_left)
    add_never_cache_headers(response)
    return response


def _login_locked_until(request: HttpRequest, credentials: dict | None) -> datetime:
    """When the lock on this request's username, or its address, ends.

    Axes counts the failures newer than the cool-off, per username and per
    address, so a lock lasts until the failure that reached the limit, counted
    from the newest, is a cool-off old. With several locks, the latest end.
    """
    AxesProxyHandler.update_request(request)
    limit = get_failure_limit(request, credentials)
    cool_off = get_cool_off(request)
    ends = []
    for attempts in AxesProxyHandler.get_implementation().get_user_attempts(request, credentials):
        counted = 0
        for attempt_time, failures in attempts.order_by("-attempt_time").values_list(
            "attempt_time", "failures_since_start"
        ):
            counted += failures
            if counted >= limit:
                ends.append(attempt_time + cool_off)
                break
    return max(ends, default=timezone.now() + cool_off)


def login_locked_out(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: dict | None = None
) -> HttpResponse:
    """django-axes' lockout response (``AXES_LOCKOUT_CALLABLE``), for the site's and the admin's log-in."""
    # Axes' async middleware passes the credentials one place early; the
    # request keeps them either way.
    credentials = getattr(request, "axes_credentials", None) or credentials
    return _throttled(request, "accounts/login_locked.html", _login_locked_until(request, credentials))


_login_form = auth_views.LoginView.as_view(
    template_name="accounts/login.html", redirect_authenticated_user=True, authentication_form=LoginForm
)


@require_http_methods(["GET", "HEAD", "POST"])
def login_page(request: HttpRequest) -> HttpResponse:
    """Django's log-in view; after a failed attempt it says how many remain
    before a lockout. Logged in, the apps' hooks may send the person on from
    where they were going (an invitation's page: into its campaign)."""
    was_anonymous = not request.user.is_authenticated
    response = _login_form(request)
    if request.method == "POST" and was_anonymous and request.user.is_authenticated and response.status_code == 302:
        target = hooks.signed_in(request, response["Location"])
        if target:
            return redirect(target)
    failures = getattr(request, "axes_failures_since_start", None)
    if failures and isinstance(response, TemplateResponse):
        response.context_data["attempts_left"] = max(get_failure_limit(request, None) - failures, 0)
        response.context_data["lockout_minutes"] = math.ceil(get_cool_off(request).total_seconds() / 60)
    return response


_password_reset_form = auth_views.PasswordResetView.as_view(
    form_class=BackgroundPasswordResetForm,
    template_name="accounts/password_reset.html",
    email_template_name="accounts/email/password_reset.txt",
    subject_template_name="accounts/email/password_reset_subject.txt",
    success_url=reverse_lazy("accounts:password-reset-done"),
)


def _reset_email_key(group: str, request: HttpRequest) -> str:
    return request.POST.get("email", "").strip().casefold()


def _reset_address_key(group: str, request: HttpRequest) -> str:
    return client_ip(request) or ""


def _password_reset_refused_until(request: HttpRequest) -> datetime | None:
    """Count this request for its e-mail address and for its client address.

    Returns when the request may be repeated if either count is over its
    limit (the later of the two windows' ends), else ``None``. Addresses are
    counted whether or not an account has them, so a refusal reveals nothing.
    """
    waits = []
    for group, key, rate in (
        ("accounts:password-reset:email", _reset_email_key, settings.PASSWORD_RESET_RATE_PER_EMAIL),
        ("accounts:password-reset:address", _reset_address_key, settings.PASSWORD_RESET_RATE_PER_IP),
    ):
        usage = get_usage(request, group=group, key=key, rate=rate, method="POST", increment=True)
        if usage is not None and usage["should_limit"]:
            waits.append(usage["time_left"])
    if not waits:
        return None
    return timezone.now() + timedelta(seconds=max(waits))


@require_http_methods(["GET", "HEAD", "POST"])
def password_reset(request: HttpRequest) -> HttpResponse:
    """Django's password-reset request, refused for a while after too many."""
    if request.method == "POST":
        retry_at = _password_reset_refused_until(request)
        if retry_at is not None:
            return _throttled(request, "accounts/password_reset_throttled.html", retry_at)
    return _password_reset_form(request)
