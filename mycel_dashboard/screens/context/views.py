"""Placeholder until the screens land (issue 15)."""

from django.http import Http404, HttpRequest, HttpResponse


def calibration_page(request: HttpRequest) -> HttpResponse:
    raise Http404("not built yet")


def tools_page(request: HttpRequest) -> HttpResponse:
    raise Http404("not built yet")


def cache_page(request: HttpRequest) -> HttpResponse:
    raise Http404("not built yet")
