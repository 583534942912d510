from django.urls import path

from campaigns import views

app_name = "campaigns"

urlpatterns = [
    path("<slug:slug>/", views.campaign_detail, name="campaign-detail"),
]
