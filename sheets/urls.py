from django.urls import path

from sheets import views

app_name = "sheets"

_sheet = "partidas/<slug:slug>/fichas/<int:character_id>/"

urlpatterns = [
    path("partidas/<slug:slug>/fichas/", views.sheet_list, name="sheet-list"),
    path("partidas/<slug:slug>/fichas/nueva/", views.sheet_create, name="sheet-create"),
    path("partidas/<slug:slug>/fichas/pnj/nuevo/", views.npc_create, name="npc-create"),
    path("partidas/<slug:slug>/fichas/importar/", views.sheet_import, name="sheet-import"),
    path("partidas/<slug:slug>/fichas/opciones/", views.sheet_options, name="sheet-options"),
    path("partidas/<slug:slug>/fichas/nueva-sesion/", views.session_new, name="session-new"),
    path("partidas/<slug:slug>/fichas/nueva-escena/", views.scene_new, name="scene-new"),
    path(_sheet, views.sheet_detail, name="sheet-detail"),
    path(_sheet + "editar/", views.sheet_edit, name="sheet-edit"),
    path(_sheet + "notas/", views.sheet_notes, name="sheet-notes"),
    path(_sheet + "enviar/", views.sheet_submit, name="sheet-submit"),
    path(_sheet + "revisar/", views.sheet_review, name="sheet-review"),
    path(_sheet + "medidores/<str:meter>/", views.meter_update, name="meter-update"),
    path(_sheet + "drama/", views.drama_update, name="drama-update"),
    path(_sheet + "aspectos/", views.aspect_create, name="aspect-create"),
    path(_sheet + "aspectos/<int:aspect_id>/", views.aspect_update, name="aspect-update"),
    path(_sheet + "historial/", views.sheet_history, name="sheet-history"),
    path(_sheet + "imprimir/", views.sheet_print, name="sheet-print"),
    path(_sheet + "exportar.json", views.sheet_export, name="sheet-export"),
]
