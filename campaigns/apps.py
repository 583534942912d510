from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CampaignsConfig(AppConfig):
    name = "campaigns"
    verbose_name = _("Partidas")

    def ready(self) -> None:
        from datetime import time

        import campaigns.checks  # noqa: F401 (the deployment checks register on import)
        from campaigns import daily, notify, versions
        from campaigns.models import Post

        # The digest goes out every morning.
        daily.register(notify.send_digests, at=time(7, 0))

        from campaigns import clock, deadlines  # noqa: F401 (deadlines registers the scene's kind of deadline)

        # Deadlines' reminders and members back from an absence, all day long.
        daily.register_every(clock.tick, every=clock.EVERY)

        # A new, edited, hidden or deleted post changes its scene's page.
        versions.track(Post, lambda post: post.scene_id)

        from campaigns import fragments

        # The cached pages' rows: campaigns, scenes, members, posts, names.
        fragments.track_forum()

        from accounts import hooks
        from campaigns import invitations

        # Signing up or logging in from an invitation's page joins its campaign.
        hooks.on_sign_in(invitations.accept_on_sign_in)
