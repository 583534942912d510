from django.urls import path

from systems.hitos.options import views

urlpatterns = [
    path("partidas/<slug:slug>/opciones/", views.campaign_options, name="campaign-options"),
]
