from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.forms import ProfileForm, SignUpForm
from campaigns import notify
from campaigns.models import Notification
from hitos_site.htmx import HtmxHttpRequest

NOTIFICATIONS_PAGE_SIZE = 30


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


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("home")
    form = SignUpForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        user = form.save(commit=False)
        # Keep the language the newcomer was reading the site in.
        user.language = translation.get_language() if translation.get_language() in _LANGUAGE_CODES else ""
        user.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(
            request,
            _("Bienvenido a Hitos, %(name)s. Ya puedes unirte a una partida o crear la tuya.")
            % {"name": user.public_name},
        )
        return redirect("home")
    return render(request, "accounts/signup.html", {"form": form})


@login_required
@require_http_methods(["GET", "POST"])
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


def _notifications_page(request: HtmxHttpRequest, *, template: str) -> HttpResponse:
    notifications = Notification.objects.filter(user=request.user).select_related("campaign")
    page_obj = Paginator(notifications, NOTIFICATIONS_PAGE_SIZE).get_page(request.GET.get("pagina"))
    # A history restore needs the whole page, never the fragment.
    if request.htmx and not request.htmx.history_restore_request:
        template += "#notification-list"
    response = render(request, template, {"notifications": page_obj.object_list, "page_obj": page_obj})
    patch_vary_headers(response, ["HX-Request"])
    return response


@login_required
@require_GET
def notifications(request: HtmxHttpRequest) -> HttpResponse:
    """The user's notifications, newest first, 30 a page; unread ones marked."""
    return _notifications_page(request, template="accounts/notifications.html")


@login_required
@require_GET
def notification_open(request: HttpRequest, notification_id: int) -> HttpResponse:
    """Mark one of the user's notifications read and go where it points.

    A GET is enough: it only changes the reader's own read marker. Only
    site-relative addresses are followed, so a stored URL can never send the
    user to another site.
    """
    notification = get_object_or_404(Notification, pk=notification_id, user=request.user)
    notify.notification_mark_read(notification=notification)
    target = notification.url
    if target.startswith("/") and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return redirect(target)
    return redirect("accounts:notifications")


@login_required
@require_POST
def notifications_read_all(request: HtmxHttpRequest) -> HttpResponse:
    count = notify.notifications_mark_all_read(user=request.user)
    if request.htmx:
        return _notifications_page(request, template="accounts/notifications.html")
    if count:
        messages.success(request, _("Todos los avisos están marcados como leídos."))
    return redirect("accounts:notifications")
