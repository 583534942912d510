"""The HITOS sheet in the admin: the shared character's page gains the
sheet's rows (``sheets.admin`` registers the core)."""

from django.contrib import admin

from sheets.admin import CharacterAdmin
from sheets.models import Character
from systems.hitos.models import Aspect, HitosSheet, Skill, Weapon


class HitosSheetInline(admin.StackedInline):
    model = HitosSheet
    can_delete = False


class SkillInline(admin.TabularInline):
    model = Skill
    extra = 0


class WeaponInline(admin.TabularInline):
    model = Weapon
    extra = 0


class AspectInline(admin.TabularInline):
    model = Aspect
    extra = 0


class HitosCharacterAdmin(CharacterAdmin):
    inlines = [HitosSheetInline, SkillInline, WeaponInline, AspectInline]

    def save_related(self, request, form, formsets, change) -> None:
        super().save_related(request, form, formsets, change)
        # An inline left untouched is not saved: a HITOS character always has its sheet.
        if form.instance.campaign.system == "hitos":
            HitosSheet.objects.get_or_create(character=form.instance)


admin.site.unregister(Character)
admin.site.register(Character, HitosCharacterAdmin)
