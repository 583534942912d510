from django.urls import path

from systems.hitos.sheet import views

# HITOS's own sheet actions, beside the shared sheet addresses (``sheets.urls``).
_campaign = "partidas/<slug:slug>/fichas/"
_sheet = _campaign + "<int:character_id>/"

urlpatterns = [
    path(_campaign + "nueva-sesion/", views.session_new, name="session-new"),
    path(_campaign + "nueva-escena/", views.scene_new, name="scene-new"),
    path(_campaign + "filas/<str:rows>/", views.sheet_row, name="sheet-row"),
    path(_sheet + "medidores/<str:meter>/", views.meter_update, name="meter-update"),
    path(_sheet + "drama/", views.drama_update, name="drama-update"),
    path(_sheet + "aspectos/", views.aspect_create, name="aspect-create"),
    path(_sheet + "aspectos/<int:aspect_id>/", views.aspect_update, name="aspect-update"),
]
