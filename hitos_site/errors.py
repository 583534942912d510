"""The site's 500 page.

Django calls ``handler500`` after something has already gone wrong, quite
possibly the database itself. So this view touches nothing that could fail
the same way: no ``request.user``, no session, no messages, no context
processors (they count unread notifications), only a standalone template with
a small explicit context. If even that template cannot be rendered (a broken
static manifest, a template error), a fixed page is sent instead: the view
never raises.
"""

import logging

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseServerError
from django.template import loader
from django.urls import reverse
from django.utils import translation

logger = logging.getLogger(__name__)

# The last resort: plain Spanish HTML, no template, no static files, nothing
# that the Content Security Policy would block.
FALLBACK_PAGE = """<!doctype html>
<html lang="es">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Algo ha fallado · Hitos</title>
</head>
<body>
<main>
<h1>Algo ha fallado por nuestra parte</h1>
<p>El servidor ha tenido un problema y no ha podido completar lo que pedías. No es culpa tuya: nada de lo que
has hecho lo ha causado.</p>
<p>Vuelve a intentarlo dentro de un momento, o empieza de nuevo desde <a href="/">el inicio</a>.</p>
</main>
</body>
</html>
"""


def server_error(request: HttpRequest) -> HttpResponse:
    try:
        return HttpResponseServerError(loader.get_template("500.html").render(_context(request)))
    except Exception:
        logger.exception("The 500 page could not be rendered; sending the plain fallback page")
        return HttpResponseServerError(FALLBACK_PAGE)


def _context(request: HttpRequest) -> dict[str, object]:
    # The language LocaleMiddleware chose from the cookie or Accept-Language
    # (and the user's own, if it was read before the failure): never looked up
    # here, since finding a user's preference needs the database.
    language = translation.get_language() or settings.LANGUAGE_CODE
    try:
        home_url = reverse("home")
    except Exception:
        home_url = "/"
    # Trying again means loading the same address, which is only safe to
    # offer when the failed request did not send a form.
    retry_url = request.get_full_path() if request.method in ("GET", "HEAD") else None
    return {"language": language, "home_url": home_url, "retry_url": retry_url}
