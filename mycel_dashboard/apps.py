from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "mycel_dashboard"
    verbose_name = "Mycel Memory Dashboard"
    default_auto_field = "django.db.models.BigAutoField"
