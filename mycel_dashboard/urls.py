from django.contrib.auth import views as auth_views
from django.urls import path

from mycel_dashboard.views import checkpoint, home, panels, texts, thread, threads

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
]
