from django.contrib import admin

from campaigns.models import Campaign


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ("title", "system", "visibility", "gm", "created_at")
    list_filter = ("system", "visibility")
    search_fields = ("title", "slug")
    prepopulated_fields = {"slug": ("title",)}
    raw_id_fields = ("gm",)
