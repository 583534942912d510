from django.http import HttpRequest

from campaigns.models import Notification


def notifications(request: HttpRequest) -> dict[str, int]:
    """The signed-in user's unread notification count, for the navbar badge."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"unread_notifications": Notification.objects.filter(user=user, read_at__isnull=True).count()}
