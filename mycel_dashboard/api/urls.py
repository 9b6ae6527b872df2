"""The read-only JSON API's routes (placeholder until it lands: issue 16)."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
