"""Test-only URLs: a bare page that honours the in-page verifier's contract.

The page carries what the permalink page gives ``static/js/verify-roll.js`` (after ``rollog.js``):
the §3.10 bundle through ``json_script`` (id ``roll-bundle``) and the
``#inpage-check`` box with the pinned key and the four labels. It is served by
the real middleware (Content Security Policy included), from localhost, which
is a secure context, so WebCrypto is there. A test puts a bundle in ``PAGES``
under a token and opens ``/prueba-verificador/<token>/``.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.templatetags.static import static
from django.urls import path
from django.utils.html import format_html, json_script

LABELS = {
    "ok": "Comprobada también en tu navegador",
    "fail": "Tu navegador NO ha podido comprobarla",
    "unsupported": "Tu navegador no sabe comprobar firmas Ed25519",
    "sealed": "sellada: posición en la cadena verificada, contenido no revelado",
}

# token -> (bundle, pinned public key hex)
PAGES: dict[str, tuple[object, str]] = {}


def verifier_page(request: HttpRequest, token: str) -> HttpResponse:
    bundle, public_key = PAGES[token]
    html = format_html(
        '<!doctype html><html lang="es"><head><meta charset="utf-8"><title>Verificador</title>'
        '<link rel="icon" href="data:,"></head><body>{bundle}'
        '<div id="inpage-check" data-pubkey="{key}" data-label-ok="{ok}" data-label-fail="{fail}"'
        ' data-label-unsupported="{unsupported}" data-label-sealed="{sealed}">'
        '<span class="inpage-status">Comprobando en tu navegador…</span></div>'
        '<script src="{rollog}" defer></script><script src="{script}" defer></script></body></html>',
        bundle=json_script(bundle, "roll-bundle"),
        key=public_key,
        rollog=static("js/rollog.js"),
        script=static("js/verify-roll.js"),
        **LABELS,
    )
    return HttpResponse(html)


urlpatterns = [path("prueba-verificador/<str:token>/", verifier_page)]
