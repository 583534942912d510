import functools

from django.db import connection
from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from campaigns.models import Notification


@functools.cache
def _unread_count_sql() -> str:
    """The count the ORM would build, built once: every signed-in page asks
    for it, and building the query costs several times running it."""
    quote = connection.ops.quote_name
    user = Notification._meta.get_field("user").column
    read_at = Notification._meta.get_field("read_at").column
    return (
        f"SELECT COUNT(*) FROM {quote(Notification._meta.db_table)} "
        f"WHERE {quote(user)} = %s AND {quote(read_at)} IS NULL"
    )


def unread_count_sql() -> str:
    """The count's SQL (one parameter: the user's id), for a view that asks it
    along with its own query and hands the answer to ``unread_counted``."""
    return _unread_count_sql()


def unread_counted(request: HttpRequest, count: int) -> None:
    """The count for this request is known: templates show it without asking again."""
    request._unread_notifications = count


def unread_count(request: HttpRequest) -> int:
    """The signed-in user's unread notifications, counted once per request
    (a page kept whole holds the count it shows in its key)."""
    return _unread_count(request)


def _unread_count(request: HttpRequest) -> int:
    """Counted once per request, however many templates it renders."""
    if not hasattr(request, "_unread_notifications"):
        with connection.cursor() as cursor:
            cursor.execute(_unread_count_sql(), [request.user.pk])
            (request._unread_notifications,) = cursor.fetchone()
    return request._unread_notifications


def notifications(request: HttpRequest) -> dict:
    """The signed-in user's unread notification count, for the navbar badge:
    counted when a template first shows it (fragments rendered on their own
    never ask)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"unread_notifications": SimpleLazyObject(lambda: _unread_count(request))}
