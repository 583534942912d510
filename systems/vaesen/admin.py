"""The Vaesen sheet in the admin: its own page, with its equipment, weapons
and critical injuries (the shared character is ``sheets.admin``'s)."""

from django.contrib import admin

from systems.vaesen.models import (
    VaesenAction,
    VaesenCombat,
    VaesenCombatant,
    VaesenInjury,
    VaesenItem,
    VaesenSheet,
    VaesenWeapon,
)


class VaesenItemInline(admin.TabularInline):
    model = VaesenItem
    extra = 0


class VaesenWeaponInline(admin.TabularInline):
    model = VaesenWeapon
    extra = 0


class VaesenInjuryInline(admin.TabularInline):
    model = VaesenInjury
    extra = 0


@admin.register(VaesenSheet)
class VaesenSheetAdmin(admin.ModelAdmin):
    list_display = ("character", "npc_kind", "broken_physical", "broken_mental")
    list_filter = ("npc_kind",)
    search_fields = ("character__name",)
    raw_id_fields = ("character",)
    inlines = [VaesenItemInline, VaesenWeaponInline, VaesenInjuryInline]


class VaesenCombatantInline(admin.TabularInline):
    model = VaesenCombatant
    extra = 0
    fk_name = "combat"
    raw_id_fields = ("character", "initiative", "held_by")


@admin.register(VaesenCombat)
class VaesenCombatAdmin(admin.ModelAdmin):
    list_display = ("scene", "campaign", "round", "created_at", "ended_at")
    raw_id_fields = ("campaign", "scene", "started_by", "acting", "ambush_roll", "ambush_watch_roll")
    inlines = [VaesenCombatantInline]


@admin.register(VaesenAction)
class VaesenActionAdmin(admin.ModelAdmin):
    list_display = ("combat", "kind", "round", "actor", "target", "reaction", "succeeded", "resolved_at")
    list_filter = ("kind",)
    raw_id_fields = (
        "combat",
        "actor",
        "target",
        "declared_by",
        "reaction_by",
        "roll",
        "reaction_roll",
        "armour_roll",
        "injury_roll",
    )
