from django.contrib.auth import views as auth_views
from django.urls import path

from mycel_dashboard.views import (
    audit,
    checkpoint,
    config,
    dry_run,
    home,
    panels,
    rollback,
    texts,
    thread,
    threads,
)

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", home.home, name="home"),
    path("threads/", threads.thread_list, name="threads"),
    path("threads/<str:thread_id>/", thread.thread_detail, name="thread"),
    path("threads/<str:thread_id>/messages/<int:index>/", texts.message_text, name="message_text"),
    path("threads/<str:thread_id>/spill/<str:tool_call_id>/", texts.spill, name="spill"),
    path("threads/<str:thread_id>/panels/<slug:name>/", panels.panel, name="panel"),
    path(
        "threads/<str:thread_id>/checkpoints/<str:checkpoint_id>/",
        checkpoint.checkpoint_detail,
        name="checkpoint",
    ),
    # The write side: each GET is a preview, each POST an audited action.
    path(
        "threads/<str:thread_id>/checkpoints/<str:checkpoint_id>/rollback/",
        rollback.rollback_preview,
        name="rollback_preview",
    ),
    path(
        "threads/<str:thread_id>/checkpoints/<str:checkpoint_id>/rollback/apply/",
        rollback.rollback_apply,
        name="rollback_apply",
    ),
    path("threads/<str:thread_id>/undo/", rollback.undo_preview, name="undo_preview"),
    path("threads/<str:thread_id>/undo/apply/", rollback.undo_apply, name="undo_apply"),
    path("threads/<str:thread_id>/dry-run/", dry_run.dry_run, name="dry_run"),
    path("threads/<str:thread_id>/dry-run/generate/", dry_run.dry_run_generate, name="dry_run_generate"),
    path("config/", config.config_page, name="config"),
    path("config/preview/", config.config_preview, name="config_preview"),
    path("config/save/", config.config_save, name="config_save"),
    path("config/restore/", config.config_restore, name="config_restore"),
    path("audit/", audit.audit_log, name="audit"),
    path("audit.csv", audit.audit_csv, name="audit_csv"),
]
