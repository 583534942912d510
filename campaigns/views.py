from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET
from django_htmx.middleware import HtmxDetails

from campaigns.models import Campaign


HOME_PAGE_SIZE = 20


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


def _campaign_for(request: HttpRequest, slug: str) -> Campaign:
    """The campaign if the user may see it; 404 otherwise, so that private
    campaigns do not reveal that they exist."""
    campaigns = Campaign.objects.visible_to(request.user).select_related("gm")
    return get_object_or_404(campaigns, slug=slug)


@require_GET
def home(request: HtmxHttpRequest) -> HttpResponse:
    public = Paginator(Campaign.objects.public().select_related("gm"), HOME_PAGE_SIZE)
    page_obj = public.get_page(request.GET.get("pagina"))
    mine = Campaign.objects.of_user(request.user).select_related("gm")
    return render(
        request,
        "campaigns/home.html",
        {"public_campaigns": page_obj.object_list, "page_obj": page_obj, "my_campaigns": list(mine)},
    )


@require_GET
def campaign_detail(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    campaign = _campaign_for(request, slug)
    return render(request, "campaigns/campaign_detail.html", {"campaign": campaign})
