# The Vaesen options pages.
from django.urls import path

from systems.vaesen.options import views

urlpatterns = [
    path("partidas/<slug:slug>/opciones-vaesen/", views.campaign_options, name="campaign-options"),
]
