"""Absences: a member announces, changes, cancels or ends theirs; everyone in
the campaign sees who is away (``campaigns.absences`` holds the rules).

Every page is for members only (``campaigns.access.campaign_for``: 404 for
an outsider of a private campaign, 403 for one of a public campaign), and
an absence is changed only by its owner (the direction may not edit
someone's absence: 403). The parts shown around the cached pages
(``campaign_part``, ``scene_part``, ``dashboard_part``, ``home_part``) are
put in place by ``campaigns.status``.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from campaigns import absences, fragments
from campaigns.access import campaign_for
from campaigns.forms_absences import AbsenceForm, ConsentForm
from campaigns.models import Absence, Campaign, Membership
from campaigns.permissions import Access
from hitos_site.htmx import HtmxHttpRequest, after_action, form_again, page_or_fragment, redirect_after, wants_fragment


def _is_member(access: Access) -> bool:
    return access.is_member


def _campaign_for(request: HttpRequest, slug: str) -> tuple[Campaign, Access]:
    return campaign_for(
        request, slug, need=_is_member, denied=gettext_lazy("Solo los miembros de la partida ven sus ausencias.")
    )


# --- pages --------------------------------------------------------------------------


def _urls(campaign: Campaign) -> dict[str, str]:
    return {
        "absences": reverse("campaigns:absences", args=[campaign.slug]),
        "consent": reverse("campaigns:absence-consent", args=[campaign.slug]),
        "absentees": reverse("campaigns:absentees", args=[campaign.slug]),
    }


def _absences_context(
    request: HttpRequest,
    campaign: Campaign,
    access: Access,
    *,
    form: AbsenceForm | None = None,
    consent_form: ConsentForm | None = None,
) -> dict:
    urls = _urls(campaign)
    today = absences.campaign_today(campaign)
    mine = absences.own_absences(campaign, request.user)
    for absence in mine:
        absence.current = absences.is_current(absence, today)
    if form is None:
        form = AbsenceForm(campaign=campaign, user=request.user, action=urls["absences"])
    membership = access.membership
    if membership is not None:
        # The profile's choice is shown beside "what my profile says".
        membership.user = request.user
        if consent_form is None:
            consent_form = ConsentForm(membership=membership, action=urls["consent"])
    return {
        "campaign": campaign,
        "access": access,
        "mine": mine,
        "today": today,
        "form": form,
        "consent_form": consent_form,
        "urls": urls,
    }


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def absence_list(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The member's own absences and the form to announce one."""
    campaign, access = _campaign_for(request, slug)
    urls = _urls(campaign)
    form = None
    if request.method == "POST":
        form = AbsenceForm(request.POST, campaign=campaign, user=request.user, action=urls["absences"])
        if form.is_valid():
            try:
                absences.absence_create(campaign=campaign, user=request.user, **form.cleaned_data)
            except ValidationError as exc:
                form.add_error(None, exc)
            else:
                messages.success(request, _("Ausencia anunciada. La dirección ya lo sabe."))
                return redirect_after(request, urls["absences"])
        context = _absences_context(request, campaign, access, form=form)
        response = page_or_fragment(request, "campaigns/absences/absences.html", "absence-form", context)
        return form_again(response, "#ausencia-form") if wants_fragment(request) else response
    context = _absences_context(request, campaign, access)
    return page_or_fragment(request, "campaigns/absences/absences.html", "absences", context)


@login_required
@require_POST
def absence_consent(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """What the member allows while away in this campaign."""
    campaign, access = _campaign_for(request, slug)
    membership = access.membership
    if membership is None:
        raise PermissionDenied(_("La dirección no tiene personaje que otros lleven en su ausencia."))
    membership = Membership.objects.select_related("user").get(pk=membership.pk)
    urls = _urls(campaign)
    form = ConsentForm(request.POST, membership=membership, action=urls["consent"])
    if form.is_valid():
        absences.consent_set(membership=membership, consent=form.cleaned_data["consent"])
        messages.success(request, _("Guardado lo que permites mientras faltes."))
        return redirect_after(request, urls["absences"])
    context = _absences_context(request, campaign, access, consent_form=form)
    response = page_or_fragment(request, "campaigns/absences/absences.html", "consent-form", context)
    return form_again(response, "#si-falto-form") if wants_fragment(request) else response


def _own_absence(request: HttpRequest, campaign: Campaign, absence_id: int) -> Absence:
    """The user's own absence that is not over: 404 when there is no such
    absence in the campaign, 403 when it is someone else's."""
    absence = absences.own_absence(campaign, request.user, absence_id)
    if absence is not None:
        absence.campaign = campaign
        absence.user = request.user
        return absence
    if Absence.objects.filter(pk=absence_id, campaign=campaign).exclude(user=request.user).exists():
        raise PermissionDenied(_("Solo quien anunció la ausencia puede cambiarla."))
    raise Http404


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def absence_edit(request: HtmxHttpRequest, slug: str, absence_id: int) -> HttpResponse:
    campaign, access = _campaign_for(request, slug)
    absence = _own_absence(request, campaign, absence_id)
    action = reverse("campaigns:absence-edit", args=[campaign.slug, absence.pk])
    form = AbsenceForm(
        request.POST if request.method == "POST" else None,
        campaign=campaign,
        user=request.user,
        absence=absence,
        action=action,
    )
    if request.method == "POST" and form.is_valid():
        try:
            absences.absence_update(absence=absence, **form.cleaned_data)
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, _("Ausencia guardada."))
            return redirect_after(request, _urls(campaign)["absences"])
    context = {"campaign": campaign, "access": access, "absence": absence, "form": form, "urls": _urls(campaign)}
    response = page_or_fragment(request, "campaigns/absences/absence_edit.html", "absence-form", context)
    if request.method == "POST" and wants_fragment(request):
        return form_again(response, "#ausencia-form")
    return response


def _list_fragment(request: HtmxHttpRequest, campaign: Campaign, access: Access):
    def fragment(error: str) -> HttpResponse:
        context = {**_absences_context(request, campaign, access), "error": error}
        return page_or_fragment(request, "campaigns/absences/absences.html", "own-absences", context)

    return fragment


@login_required
@require_POST
def absence_cancel(request: HtmxHttpRequest, slug: str, absence_id: int) -> HttpResponse:
    """Withdraw one's absence (one that had started counts as a return)."""
    campaign, access = _campaign_for(request, slug)
    absence = _own_absence(request, campaign, absence_id)
    absences.absence_cancel(absence=absence)
    return after_action(
        request,
        fragment=_list_fragment(request, campaign, access),
        url=_urls(campaign)["absences"],
        success=_("Ausencia anulada."),
    )


@login_required
@require_POST
def absence_return(request: HtmxHttpRequest, slug: str, absence_id: int) -> HttpResponse:
    """«Ya he vuelto»: a current absence ends today and the return is noticed now."""
    campaign, access = _campaign_for(request, slug)
    absence = _own_absence(request, campaign, absence_id)
    if not absences.is_current(absence, absences.campaign_today(campaign)):
        return after_action(
            request,
            fragment=_list_fragment(request, campaign, access),
            url=_urls(campaign)["absences"],
            error=_("Esa ausencia aún no ha empezado: anúlala si ya no te vas."),
        )
    absences.absence_return(absence=absence)
    return after_action(
        request,
        fragment=_list_fragment(request, campaign, access),
        url=_urls(campaign)["absences"],
        success=_("¡Bienvenido de vuelta! Tienes en tus avisos lo que pasó mientras estabas fuera."),
    )


@login_required
@require_safe
def absentees(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Who of the campaign is away today, until when, and why."""
    campaign, access = _campaign_for(request, slug)
    context = {
        "campaign": campaign,
        "access": access,
        "away": list(absences.away_now(campaign).values()),
        "urls": _urls(campaign),
    }
    return page_or_fragment(request, "campaigns/absences/absentees.html", "absentees", context)


# --- parts around the cached pages (campaigns.status) -------------------------------


def campaign_part(request, campaign, access) -> str:
    """The campaign page's "Ausentes ahora", for members."""
    if not access.is_member:
        return ""

    def render() -> str:
        away = absences.away_for_request(request, campaign)
        context = {"campaign": campaign, "away": list(away.values()), "urls": _urls(campaign)}
        return render_to_string("campaigns/absences/_campaign_part.html", context, request=request)

    # The same for every member until an absence or a membership changes
    # (both move the campaign's version), a name changes, or the day ends.
    versions = fragments.versions(fragments.campaign_scope(campaign.pk), fragments.PEOPLE)
    key = fragments.key("absences-part", campaign.pk, *versions, absences.campaign_today(campaign))
    return fragments.fragment(request, key, render)


def scene_part(request, scene, access) -> str:
    """The scene's people who are away: its chosen members (and the
    direction) for a separate group, everyone's otherwise."""
    if not access.is_member:
        return ""
    campaign = scene.campaign
    away = absences.away_for_request(request, campaign)
    if not away:
        return ""
    if not scene.everyone:
        people = set(scene.participants.values_list("pk", flat=True)) | {campaign.gm_id}
        away = {user_id: absence for user_id, absence in away.items() if user_id in people}
    if not away:
        return ""
    context = {"campaign": campaign, "scene": scene, "away": list(away.values()), "urls": _urls(campaign)}
    return render_to_string("campaigns/absences/_scene_part.html", context, request=request)


def dashboard_part(request, campaign, access) -> str:
    """The GM's dashboard: away now, back soon, back lately, away soon."""
    if not access.is_gm:
        return ""
    context = {"campaign": campaign, **absences.direction_view(campaign), "urls": _urls(campaign)}
    return render_to_string("campaigns/absences/_dashboard_part.html", context, request=request)


def home_part(request) -> str:
    """The home page: the campaigns the user said they are away from today."""
    if not request.user.is_authenticated:
        return ""
    away = absences.user_away_everywhere(request.user)
    if not away:
        return ""
    return render_to_string("campaigns/absences/_home_part.html", {"away": away}, request=request)
