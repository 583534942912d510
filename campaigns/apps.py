from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CampaignsConfig(AppConfig):
    name = "campaigns"
    verbose_name = _("Partidas")

    def ready(self) -> None:
        from campaigns import versions
        from campaigns.models import Post

        # A new, edited, hidden or deleted post changes its scene's page.
        versions.track(Post, lambda post: post.scene_id)
