# The Vaesen rolls' own actions (pushing, …).
from django.urls import path

from systems.vaesen.rolls import views

urlpatterns = [
    path("tiradas/<int:table_roll_id>/forzar/", views.push, name="push"),
    path("tiradas/<int:table_roll_id>/herida-critica/", views.injury, name="injury"),
]
