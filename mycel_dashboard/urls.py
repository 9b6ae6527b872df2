from django.contrib.auth import views as auth_views
from django.urls import path

from mycel_dashboard.views import home

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", home.home, name="home"),
]
