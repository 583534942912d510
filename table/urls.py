from django.urls import include, path

app_name = "table"

urlpatterns = [
    path("", include("table.roll_requests.urls")),
]
