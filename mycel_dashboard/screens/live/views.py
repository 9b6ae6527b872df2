"""Placeholder until the screen lands (issue 16)."""

from django.http import Http404, HttpRequest, HttpResponse


def threads_live(request: HttpRequest) -> HttpResponse:
    raise Http404("not built yet")


def thread_live(request: HttpRequest, thread_id: str) -> HttpResponse:
    raise Http404("not built yet")
