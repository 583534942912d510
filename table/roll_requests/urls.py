from django.urls import path

from table.roll_requests import views as views_requests

urlpatterns = [
    path(
        "partidas/<slug:slug>/escenas/<int:scene_id>/peticiones/nueva/",
        views_requests.request_create,
        name="request-create",
    ),
    path("peticiones/<int:request_id>/anular/", views_requests.request_cancel, name="request-cancel"),
]
