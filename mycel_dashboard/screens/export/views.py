"""Placeholder until the screen lands (issue 16)."""

from django.http import Http404, HttpRequest, HttpResponse


def thread_export(request: HttpRequest, thread_id: str) -> HttpResponse:
    raise Http404("not built yet")
