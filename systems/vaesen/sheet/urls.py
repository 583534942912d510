from django.urls import path

from systems.vaesen.sheet import views

# Vaesen's own sheet actions in play, beside the shared sheet addresses (``sheets.urls``).
_sheet = "partidas/<slug:slug>/fichas/<int:character_id>/"

urlpatterns = [
    path(_sheet + "estados/", views.condition_update, name="condition-update"),
    path(_sheet + "resistencia/", views.resistance_update, name="resistance-update"),
    path(_sheet + "terror/", views.terror_update, name="terror-update"),
    path(_sheet + "heridas/", views.injury_create, name="injury-create"),
    path(_sheet + "heridas/tirar/", views.injury_roll, name="injury-roll"),
    path(_sheet + "heridas/<int:injury_id>/", views.injury_update, name="injury-update"),
]
