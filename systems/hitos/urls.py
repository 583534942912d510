from django.urls import include, path

app_name = "hitos"

# HITOS at the table, one package per feature.
urlpatterns = [
    path("", include("systems.hitos.activations.urls")),
    path("", include("systems.hitos.combat.urls")),
    path("", include("systems.hitos.horror.urls")),
    path("", include("systems.hitos.secret.urls")),
    path("", include("systems.hitos.options.urls")),
    path("", include("systems.hitos.sheet.urls")),
]
