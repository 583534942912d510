from django.urls import include, path

app_name = "vaesen"

# Vaesen at the table, one package per feature.
urlpatterns = [
    path("", include("systems.vaesen.sheet.urls")),
    path("", include("systems.vaesen.rolls.urls")),
    path("", include("systems.vaesen.fear.urls")),
    path("", include("systems.vaesen.combat.urls")),
    path("", include("systems.vaesen.options.urls")),
]
