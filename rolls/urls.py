from django.urls import path, re_path

from rolls import views

app_name = "rolls"

urlpatterns = [
    re_path(r"^r/(?P<permalink>[a-z2-7]{24})/$", views.roll_permalink, name="roll-permalink"),
    re_path(r"^r/(?P<permalink>[a-z2-7]{24})\.json$", views.roll_json, name="roll-json"),
    re_path(r"^r/(?P<permalink>[a-z2-7]{24})\.svg$", views.roll_badge, name="roll-badge"),
    path(".well-known/rollog-keys.json", views.rollog_keys, name="rollog-keys"),
    path("verificador/verify_roll.py", views.verifier_download, name="verifier-download"),
    path("partidas/<slug:slug>/tiradas/", views.roll_log, name="roll-log"),
    path("partidas/<slug:slug>/tiradas/registro.json", views.log_export, name="log-export"),
    path("partidas/<slug:slug>/tiradas/libre/", views.free_roll, name="free-roll"),
]
