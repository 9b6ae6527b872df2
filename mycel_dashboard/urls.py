from django.contrib.auth import views as auth_views
from django.urls import include, path, register_converter
from django.views.generic import RedirectView

from mycel_dashboard.monitoring import views as monitoring
from mycel_dashboard.screens.audit import views as audit
from mycel_dashboard.screens.call import views as call
from mycel_dashboard.screens.checkpoint import views as checkpoint
from mycel_dashboard.screens.config import views as config
from mycel_dashboard.screens.context import views as context
from mycel_dashboard.screens.cost import views as cost
from mycel_dashboard.screens.dry_run import views as dry_run
from mycel_dashboard.screens.export import views as export
from mycel_dashboard.screens.home import views as home
from mycel_dashboard.screens.live import views as live
from mycel_dashboard.screens.retention import views as retention
from mycel_dashboard.screens.rollback import views as rollback
from mycel_dashboard.screens.search import views as search
from mycel_dashboard.screens.storage import views as storage
from mycel_dashboard.screens.thread_detail import panel_views, text_views
from mycel_dashboard.screens.thread_detail import views as thread
from mycel_dashboard.screens.thread_list import views as threads
from mycel_dashboard.web.ids import IdConverter

# Mycel's ids are arbitrary strings (slashes included): <id:…> carries any of them (web/ids.py).
register_converter(IdConverter, "id")

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", home.home, name="home"),
    path("threads/", threads.thread_list, name="threads"),
    path("threads/live/", live.threads_live, name="threads_live"),
    path("search/", search.search_page, name="search"),
    path("threads/<id:thread_id>/", thread.thread_detail, name="thread"),
    path("threads/<id:thread_id>/messages/<int:index>/", text_views.message_text, name="message_text"),
    path("threads/<id:thread_id>/calls/<int:number>/", call.call_detail, name="call"),
    path("threads/<id:thread_id>/spill/<id:tool_call_id>/", text_views.spill, name="spill"),
    path("threads/<id:thread_id>/panels/<slug:name>/", panel_views.panel, name="panel"),
    path(
        "threads/<id:thread_id>/checkpoints/<id:checkpoint_id>/",
        checkpoint.checkpoint_detail,
        name="checkpoint",
    ),
    # The write side: each GET is a preview, each POST an audited action.
    path(
        "threads/<id:thread_id>/checkpoints/<id:checkpoint_id>/rollback/",
        rollback.rollback_preview,
        name="rollback_preview",
    ),
    path(
        "threads/<id:thread_id>/checkpoints/<id:checkpoint_id>/rollback/apply/",
        rollback.rollback_apply,
        name="rollback_apply",
    ),
    path("threads/<id:thread_id>/undo/", rollback.undo_preview, name="undo_preview"),
    path("threads/<id:thread_id>/undo/apply/", rollback.undo_apply, name="undo_apply"),
    path("threads/<id:thread_id>/live/", live.thread_live, name="thread_live"),
    path("threads/<id:thread_id>/export/", export.thread_export, name="thread_export"),
    path("threads/<id:thread_id>/dry-run/", dry_run.dry_run, name="dry_run"),
    path("threads/<id:thread_id>/dry-run/generate/", dry_run.dry_run_generate, name="dry_run_generate"),
    path("config/", config.config_page, name="config"),
    path("config/preview/", config.config_preview, name="config_preview"),
    path("config/save/", config.config_save, name="config_save"),
    path("config/restore/", config.config_restore, name="config_restore"),
    path("config/restore/preview/", config.config_restore_preview, name="config_restore_preview"),
    path("storage/", storage.storage_page, name="storage"),
    path("storage/retention/", retention.retention_preview, name="retention"),
    path("storage/retention/export/", retention.retention_export, name="retention_export"),
    path("cost/", cost.cost_page, name="cost"),
    # The Context screen is its tabs: its own address opens the first one.
    path(
        "context/",
        RedirectView.as_view(pattern_name="context_calibration", query_string=True),
        name="context",
    ),
    path("context/calibration/", context.calibration_page, name="context_calibration"),
    path("context/tools/", context.tools_page, name="context_tools"),
    path("context/cache/", context.cache_page, name="context_cache"),
    path("api/", include("mycel_dashboard.api.urls")),
    path("metrics", monitoring.metrics, name="metrics"),
    path("healthz", monitoring.healthz, name="healthz"),
    path("readyz", monitoring.readyz, name="readyz"),
    path("audit/", audit.audit_log, name="audit"),
    path("audit/unlock/", audit.unlock, name="audit_unlock"),
    path("audit.csv", audit.audit_csv, name="audit_csv"),
]

# A failure of the dashboard's own database (read-only, unreachable, full) is a plain 503 page, not a bare 500.
handler500 = "mycel_dashboard.web.errors.server_error"
