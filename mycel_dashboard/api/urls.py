"""The read-only JSON API's routes (issue 16): every name is in the hostile test's OTHER_NAMES (JSON,
covered by tests/dashboard/test_api.py)."""

from django.urls import URLPattern, path, re_path

from mycel_dashboard.api import views

urlpatterns: list[URLPattern] = [
    path("threads/", views.threads, name="api_threads"),
    path("threads/<id:thread_id>/", views.thread, name="api_thread"),
    path("threads/<id:thread_id>/calls/", views.calls, name="api_calls"),
    path("threads/<id:thread_id>/checkpoints/<id:checkpoint_id>/", views.checkpoint, name="api_checkpoint"),
    path("threads/<id:thread_id>/whatif/", views.whatif, name="api_whatif"),
    path("search/", views.search, name="api_search"),
    path("storage/", views.storage, name="api_storage"),
    # Anything else under /api/ (an odd id the converter refuses included) is a JSON 404, not HTML.
    re_path(r"^(?P<rest>.*)$", views.not_found),
]
