"""Placeholder until the screen lands (issue 14)."""

from django.http import Http404, HttpRequest, HttpResponse


def retention_preview(request: HttpRequest) -> HttpResponse:
    raise Http404("not built yet")


def retention_export(request: HttpRequest) -> HttpResponse:
    raise Http404("not built yet")
