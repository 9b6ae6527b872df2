"""Placeholder until the screen lands (issue 14)."""

from django.http import Http404, HttpRequest, HttpResponse


def cost_page(request: HttpRequest) -> HttpResponse:
    raise Http404("not built yet")
