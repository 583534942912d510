"""The site's URLs plus the two feed routes, until campaigns/urls.py has them."""

from django.urls import path

from campaigns import feeds
from hitos_site.urls import urlpatterns as site_urlpatterns

urlpatterns = [
    path("test-feeds/<slug:slug>/escenas/<int:scene_id>/atom/", feeds.SceneFeed()),
    path("test-feeds/canal/<str:token>/", feeds.MemberFeed()),
    *site_urlpatterns,
]
