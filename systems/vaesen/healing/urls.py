# The Vaesen «Curación» panel (included from systems.vaesen.fear.urls).
from django.urls import path

from systems.vaesen.healing import views

scene = "partidas/<slug:slug>/escenas/<int:scene_id>/"

urlpatterns = [
    path(f"{scene}curacion/", views.healing_page, name="healing"),
    path(f"{scene}curacion/tratar/", views.treatment, name="healing-treatment"),
    path(f"{scene}curacion/curar/", views.healing, name="healing-heal"),
    path(f"{scene}curacion/recuperar/", views.recovery, name="healing-recovery"),
    path(f"{scene}curacion/<int:table_roll_id>/aplicar/", views.apply, name="healing-apply"),
]
