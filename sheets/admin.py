from django.contrib import admin

from sheets.models import Aspect, CampaignSheetOptions, Character, SheetEvent, Skill, Weapon


class SkillInline(admin.TabularInline):
    model = Skill
    extra = 0


class WeaponInline(admin.TabularInline):
    model = Weapon
    extra = 0


class AspectInline(admin.TabularInline):
    model = Aspect
    extra = 0


@admin.register(Character)
class CharacterAdmin(admin.ModelAdmin):
    list_display = ("name", "campaign", "owner", "kind", "status")
    list_filter = ("kind", "status")
    search_fields = ("name",)
    raw_id_fields = ("campaign", "owner", "reviewed_by")
    inlines = [SkillInline, WeaponInline, AspectInline]


@admin.register(SheetEvent)
class SheetEventAdmin(admin.ModelAdmin):
    list_display = ("created_at", "campaign", "character", "actor", "kind", "summary")
    list_filter = ("kind",)
    raw_id_fields = ("campaign", "character", "actor", "post")

    def has_change_permission(self, request, obj=None) -> bool:
        return False


admin.site.register(CampaignSheetOptions)
