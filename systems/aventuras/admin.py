"""The Hora de Aventuras sheet in the admin: its own page, with its feats,
tools and states (the shared character is ``sheets.admin``'s), and the hero
point ledger, read-only (points move only through ``heroes.ledger``)."""

from django.contrib import admin

from systems.aventuras.models import (
    AventurasContest,
    AventurasContestant,
    AventurasFeat,
    AventurasSheet,
    AventurasState,
    AventurasTool,
    HeroMove,
    HeroRequest,
)


class AventurasFeatInline(admin.TabularInline):
    model = AventurasFeat
    extra = 0


class AventurasToolInline(admin.TabularInline):
    model = AventurasTool
    extra = 0


class AventurasStateInline(admin.TabularInline):
    model = AventurasState
    extra = 0
    raw_id_fields = ("scene",)


@admin.register(AventurasSheet)
class AventurasSheetAdmin(admin.ModelAdmin):
    list_display = ("character", "concept", "health", "health_lost", "hero_points", "experience")
    search_fields = ("character__name",)
    raw_id_fields = ("character",)
    # A21 — hero points move only through the ledger, which records who and why.
    readonly_fields = ("hero_points",)
    inlines = [AventurasFeatInline, AventurasToolInline, AventurasStateInline]


@admin.register(HeroMove)
class HeroMoveAdmin(admin.ModelAdmin):
    list_display = ("character", "kind", "use", "reason", "delta", "points_after", "by", "created_at")
    list_filter = ("kind",)
    raw_id_fields = ("campaign", "character", "scene", "table_roll", "by", "approved_by")

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(HeroRequest)
class HeroRequestAdmin(admin.ModelAdmin):
    list_display = ("character", "kind", "status", "requested_by", "created_at")
    list_filter = ("kind", "status")
    raw_id_fields = ("campaign", "scene", "character", "giver", "requested_by", "decided_by")


class AventurasContestantInline(admin.TabularInline):
    model = AventurasContestant
    extra = 0
    raw_id_fields = ("character", "roll")


@admin.register(AventurasContest)
class AventurasContestAdmin(admin.ModelAdmin):
    list_display = ("title", "kind", "scene", "created_at", "resolved_at")
    list_filter = ("kind",)
    raw_id_fields = ("campaign", "scene", "created_by")
    inlines = [AventurasContestantInline]
