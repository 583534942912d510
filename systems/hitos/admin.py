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


admin.site.unregister(Character)
admin.site.register(Character, HitosCharacterAdmin)
