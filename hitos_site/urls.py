from django.contrib import admin
from django.urls import include, path

from accounts import views as account_views
from campaigns import views as campaign_views

urlpatterns = [
    path("", campaign_views.home, name="home"),
    path("cuenta/", include("accounts.urls")),
    path("", include("campaigns.urls")),
    path("", include("sheets.urls")),
    path("", include("rolls.urls")),
    path("", include("table.urls")),
    path("", include("systems.hitos.urls")),
    path("", include("systems.vaesen.urls")),
    path("", include("systems.aventuras.urls")),
    path("idioma/", account_views.language_set, name="language-set"),
    path("admin/", admin.site.urls),
]

# Rendered without the database or context processors: see hitos_site/errors.py.
handler500 = "hitos_site.errors.server_error"
