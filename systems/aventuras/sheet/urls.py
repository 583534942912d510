from django.urls import path

from systems.aventuras.sheet import views

# Hora de Aventuras' own sheet actions in play, beside the shared sheet addresses (``sheets.urls``).
_sheet = "partidas/<slug:slug>/fichas/<int:character_id>/"

urlpatterns = [
    path(_sheet + "salud/", views.health_update, name="sheet-health"),
    path(_sheet + "estado/nuevo/", views.state_create, name="sheet-state-add"),
    path(_sheet + "estado/<int:state_id>/quitar/", views.state_delete, name="sheet-state-remove"),
    path(_sheet + "experiencia/", views.experience_update, name="sheet-experience"),
]
