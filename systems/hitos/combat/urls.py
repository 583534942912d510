from django.urls import path

from systems.hitos.combat import views

_scene = "partidas/<slug:slug>/escenas/<int:scene_id>/combate/"

urlpatterns = [
    path(_scene, views.combat_detail, name="combat"),
    path(f"{_scene}empezar/", views.combat_start, name="combat-start"),
    path(f"{_scene}<int:combat_id>/iniciativa/", views.combat_initiative, name="combat-initiative"),
    path(f"{_scene}<int:combat_id>/asalto/", views.combat_round, name="combat-round"),
    path(f"{_scene}<int:combat_id>/terminar/", views.combat_end, name="combat-end"),
    path(f"{_scene}<int:combat_id>/plazo/", views.combat_deadline, name="combat-deadline"),
    path(f"{_scene}<int:combat_id>/participantes/", views.combatant_add, name="combat-combatant-add"),
    path(f"{_scene}<int:combat_id>/ataques/", views.attack_create, name="combat-attack"),
    path(f"{_scene}participantes/<int:combatant_id>/quitar/", views.combatant_remove, name="combat-combatant-remove"),
    path(f"{_scene}participantes/<int:combatant_id>/actua/", views.combatant_act, name="combat-combatant-act"),
    path(f"{_scene}participantes/<int:combatant_id>/retrasa/", views.combatant_delay, name="combat-combatant-delay"),
    path(f"{_scene}participantes/<int:combatant_id>/estado/", views.combatant_state, name="combat-combatant-state"),
    path(f"{_scene}ataques/<int:attack_id>/desplazar/", views.attack_shift, name="combat-attack-shift"),
    path(f"{_scene}ataques/<int:attack_id>/aplicar/", views.damage_apply, name="combat-damage-apply"),
    path(f"{_scene}ataques/<int:attack_id>/efecto/", views.effect_decide, name="combat-effect"),
]
