from django.urls import path

from systems.hitos.activations import views

urlpatterns = [
    path("tiradas/<int:table_roll_id>/activar/", views.activation_positive, name="activation-positive"),
    path("tiradas/<int:table_roll_id>/activar-en-contra/", views.activation_negative, name="activation-negative"),
    path("activaciones/<int:activation_id>/responder/", views.activation_answer, name="activation-answer"),
    path("activaciones/<int:activation_id>/resolver/", views.activation_settle, name="activation-settle"),
    path("activaciones/<int:activation_id>/forzar-degeneracion/", views.activation_force, name="activation-force"),
    path("partidas/<slug:slug>/drama/", views.drama, name="drama"),
    path("partidas/<slug:slug>/drama/reserva/", views.drama_pool_set, name="drama-pool-set"),
    path("partidas/<slug:slug>/drama/narrativa/", views.drama_narrative, name="drama-narrative"),
]
