from django.urls import path

from systems.vaesen.combat import views

# The Vaesen combat pages.
_scene = "partidas/<slug:slug>/escenas/<int:scene_id>/combate-vaesen/"

urlpatterns = [
    path(_scene, views.combat_detail, name="combat"),
    path(f"{_scene}empezar/", views.combat_start, name="combat-start"),
    path(f"{_scene}<int:combat_id>/emboscada/", views.combat_ambush, name="combat-ambush"),
    path(f"{_scene}<int:combat_id>/iniciativa/", views.combat_initiative, name="combat-initiative"),
    path(f"{_scene}<int:combat_id>/intercambio/", views.combat_swap, name="combat-swap"),
    path(f"{_scene}<int:combat_id>/turno/", views.combat_turn, name="combat-turn"),
    path(f"{_scene}<int:combat_id>/terminar/", views.combat_end, name="combat-end"),
    path(f"{_scene}<int:combat_id>/plazo/", views.combat_deadline, name="combat-deadline"),
    path(f"{_scene}<int:combat_id>/participantes/", views.combatant_add, name="combat-combatant-add"),
    path(f"{_scene}<int:combat_id>/acciones/", views.action_declare, name="combat-declare"),
    path(f"{_scene}participantes/<int:combatant_id>/quitar/", views.combatant_remove, name="combat-combatant-remove"),
    path(f"{_scene}participantes/<int:combatant_id>/soltar/", views.combatant_release, name="combat-release"),
    path(f"{_scene}acciones/<int:action_id>/reaccion/", views.action_react, name="combat-react"),
    path(f"{_scene}acciones/<int:action_id>/intercambio/", views.action_swap, name="combat-action-swap"),
    path(f"{_scene}acciones/<int:action_id>/anular/", views.action_cancel, name="combat-cancel"),
    path(f"{_scene}acciones/<int:action_id>/plazo/", views.action_deadline, name="combat-action-deadline"),
]
