from django.urls import path

from sheets import views

app_name = "sheets"

_campaign = "partidas/<slug:slug>/fichas/"
_sheet = _campaign + "<int:character_id>/"


def _page(route: str, page: str):
    """A shared sheet address served by the campaign's game system."""
    return path(route, views.system_page, {"page": page}, name=f"sheet-{page}" if page != "npc-create" else page)


urlpatterns = [
    _page(_campaign, "list"),
    _page(_campaign + "nueva/", "create"),
    _page(_campaign + "pnj/nuevo/", "npc-create"),
    _page(_campaign + "importar/", "import"),
    path(_campaign + "opciones/", views.sheet_options, name="sheet-options"),
    _page(_sheet, "detail"),
    _page(_sheet + "editar/", "edit"),
    _page(_sheet + "notas/", "notes"),
    _page(_sheet + "enviar/", "submit"),
    _page(_sheet + "revisar/", "review"),
    path(_sheet + "historial/", views.sheet_history, name="sheet-history"),
    _page(_sheet + "imprimir/", "print"),
    _page(_sheet + "exportar.json", "export"),
]
