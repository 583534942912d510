from django.urls import path, re_path
from django.views.generic import RedirectView

from rolls import checkpoint_views, views, witness_views

app_name = "rolls"

urlpatterns = [
    re_path(r"^r/(?P<permalink>[a-z2-7]{24})/$", views.roll_permalink, name="roll-permalink"),
    re_path(r"^r/(?P<permalink>[a-z2-7]{24})\.json$", views.roll_json, name="roll-json"),
    re_path(r"^r/(?P<permalink>[a-z2-7]{24})\.svg$", views.roll_badge, name="roll-badge"),
    path(".well-known/rollog-keys.json", views.rollog_keys, name="rollog-keys"),
    path("verificador/verify.py", views.verifier_download, name="verifier-download"),
    # The single-file verifier's address before issue 18: links saved then still download it.
    path("verificador/verify_roll.py", RedirectView.as_view(pattern_name="rolls:verifier-download", permanent=True)),
    path("partidas/<slug:slug>/tiradas/", views.roll_log, name="roll-log"),
    path("partidas/<slug:slug>/tiradas/registro.json", views.log_export, name="log-export"),
    path("partidas/<slug:slug>/tiradas/cabeza.json", witness_views.log_head, name="log-head"),
    path("partidas/<slug:slug>/tiradas/libre/", views.free_roll, name="free-roll"),
    path(
        "partidas/<slug:slug>/tiradas/punto-de-control.json",
        checkpoint_views.latest_checkpoint,
        name="checkpoint-latest",
    ),
    path("partidas/<slug:slug>/tiradas/puntos-de-control/", checkpoint_views.checkpoint_list, name="checkpoints"),
    # The one-click unsubscribe of the checkpoint e-mails: the signed token is the only credential.
    path(
        "cuenta/puntos-de-control/baja/<str:token>/",
        checkpoint_views.checkpoint_unsubscribe,
        name="checkpoint-unsubscribe",
    ),
    re_path(
        r"^partidas/(?P<slug>[-a-zA-Z0-9_]+)/tiradas/puntos-de-control/(?P<day>[0-9]{4}-[0-9]{2}-[0-9]{2})\.json$",
        checkpoint_views.checkpoint_day,
        name="checkpoint-day",
    ),
]
