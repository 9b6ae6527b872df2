"""Placeholder until the screen lands (issue 16)."""

from django.http import Http404, HttpRequest, HttpResponse


def search_page(request: HttpRequest) -> HttpResponse:
    raise Http404("not built yet")
