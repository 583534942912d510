from django.urls import include, path

from campaigns import archive_views, feed_views, feeds, status, unsubscribe, views

app_name = "campaigns"

urlpatterns = [
    # The user's notifications, under their account's address.
    path("cuenta/avisos/", views.notifications, name="notifications"),
    path("cuenta/avisos/leidos/", views.notifications_read_all, name="notifications-read-all"),
    path("cuenta/avisos/<int:notification_id>/", views.notification_open, name="notification-open"),
    # The one-click unsubscribe of the notification e-mails: the signed token is the only credential.
    path("cuenta/avisos/baja/<str:token>/", unsubscribe.email_unsubscribe, name="email-unsubscribe"),
    path("partidas/nueva/", views.campaign_create, name="campaign-create"),
    path("partidas/importar/", archive_views.campaign_import, name="campaign-import"),
    path("partidas/importar/<int:upload_id>/", archive_views.campaign_import_review, name="campaign-import-review"),
    path("partidas/<slug:slug>/", views.campaign_detail, name="campaign-detail"),
    path("partidas/<slug:slug>/editar/", views.campaign_edit, name="campaign-edit"),
    path("partidas/<slug:slug>/solicitar/", views.application_create, name="application-create"),
    path("partidas/<slug:slug>/solicitudes/<int:application_id>/", views.application_decide, name="application-decide"),
    path("partidas/<slug:slug>/invitaciones/", views.invitation_create, name="invitation-create"),
    path(
        "partidas/<slug:slug>/invitaciones/<int:invitation_id>/anular/",
        views.invitation_revoke,
        name="invitation-revoke",
    ),
    path("partidas/<slug:slug>/salir/", views.membership_leave, name="membership-leave"),
    path("partidas/<slug:slug>/miembros/<int:membership_id>/expulsar/", views.member_remove, name="member-remove"),
    path("partidas/<slug:slug>/miembros/<int:membership_id>/papel/", views.member_role, name="member-role"),
    path("partidas/<slug:slug>/ceder/", views.campaign_hand_over, name="campaign-hand-over"),
    path("partidas/<slug:slug>/direccion/", views.dashboard, name="dashboard"),
    path("partidas/<slug:slug>/direccion/canal/renovar/", feed_views.gm_feed_rotate, name="gm-feed-rotate"),
    path("partidas/<slug:slug>/moderacion/", views.moderation_log, name="moderation-log"),
    path("partidas/<slug:slug>/denuncias/<int:report_id>/resolver/", views.report_resolve, name="report-resolve"),
    path("partidas/<slug:slug>/buscar/", views.campaign_search, name="campaign-search"),
    path("partidas/<slug:slug>/exportar/", views.campaign_export, name="campaign-export"),
    path("partidas/<slug:slug>/escenas/nueva/", views.scene_create, name="scene-create"),
    path("partidas/<slug:slug>/escenas/<int:scene_id>/editar/", views.scene_edit, name="scene-edit"),
    path("partidas/<slug:slug>/escenas/<int:scene_id>/atom/", feeds.SceneFeed(), name="scene-feed"),
    path("partidas/<slug:slug>/escenas/<int:scene_id>/estado/", status.scene_status, name="scene-status"),
    path("partidas/<slug:slug>/atom/", feeds.CampaignFeed(), name="campaign-feed"),
    path("canales/<str:token>/", feeds.MemberFeed(), name="member-feed"),
    path("canales/direccion/<int:campaign_id>/<str:token>/", feeds.GMFeed(), name="gm-feed"),
    path("invitacion/<str:token>/", views.invitation_open, name="invitation-open"),
    path("mensajes/<int:post_id>/", views.post_permalink, name="post-permalink"),
    path("mensajes/<int:post_id>/editar/", views.post_edit, name="post-edit"),
    path("mensajes/<int:post_id>/historial/", views.post_history, name="post-history"),
    path("mensajes/<int:post_id>/ocultar/", views.post_hide, name="post-hide"),
    path("mensajes/<int:post_id>/denunciar/", views.post_report, name="post-report"),
    # The table's pace (issue 17): absences, deadlines, whose turn.
    path("", include("campaigns.urls_absences")),
    path("", include("campaigns.urls_deadlines")),
    path("", include("campaigns.urls_waiting")),
]
