from django.urls import include, path

app_name = "aventuras"

# Hora de Aventuras at the table, one package per feature.
urlpatterns = [
    path("", include("systems.aventuras.sheet.urls")),
    path("", include("systems.aventuras.rolls.urls")),
    path("", include("systems.aventuras.heroes.urls")),
    path("", include("systems.aventuras.contests.urls")),
]
