from django.contrib import admin

from sheets.models import CampaignSheetOptions, Character, SheetEvent


@admin.register(Character)
class CharacterAdmin(admin.ModelAdmin):
    list_display = ("name", "campaign", "owner", "kind", "status")
    list_filter = ("kind", "status")
    search_fields = ("name",)
    raw_id_fields = ("campaign", "owner", "reviewed_by")


@admin.register(SheetEvent)
class SheetEventAdmin(admin.ModelAdmin):
    list_display = ("created_at", "campaign", "character", "actor", "kind", "summary")
    list_filter = ("kind",)
    raw_id_fields = ("campaign", "character", "actor", "post")

    def has_change_permission(self, request, obj=None) -> bool:
        return False


admin.site.register(CampaignSheetOptions)
