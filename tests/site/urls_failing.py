"""The site's URLs plus a view that fails, for the error page tests.

Django looks ``handler500`` up on the root URLconf, so the site's own is
re-exported here: the tests exercise exactly what hitos_site/urls.py registers.
"""

from django.http import HttpRequest, HttpResponse
from django.urls import path

from hitos_site.urls import handler500 as handler500
from hitos_site.urls import urlpatterns as site_urlpatterns

# Written into the exception so a test can prove it never reaches the page.
INTERNAL_DETAIL = "detalle-interno-del-fallo-7f3a"


def failing_view(request: HttpRequest) -> HttpResponse:
    raise RuntimeError(INTERNAL_DETAIL)


urlpatterns = [
    path("pruebas/falla/", failing_view, name="test-failing"),
    *site_urlpatterns,
]
