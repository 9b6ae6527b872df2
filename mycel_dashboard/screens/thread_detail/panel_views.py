"""The Thread screen's panels, each its own URL: the page loads them lazily with hx-trigger="load"."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse

from mycel_dashboard.screens.shared.memory import guarded
from mycel_dashboard.screens.thread_detail.panels import PANELS, PanelContent
from mycel_dashboard.web.lookups import thread_or_404
from mycel_dashboard.web.render import render_screen
from mycel_dashboard.web.source import open_source


def panel(request: HttpRequest, thread_id: str, name: str) -> HttpResponse:
    found = PANELS.get(name)
    if found is None:
        raise Http404(f"No panel named {name!r}.")
    _, reader = open_source()
    problems: list[str] = []
    thread = thread_or_404(reader, thread_id, problems)
    layout = thread.layout if thread is not None else "main"
    content = guarded(found.title.lower(), lambda: found.load(reader, thread_id, layout), problems)
    if content is None:
        content = PanelContent(errors=tuple(problems))
    context = {"thread_id": thread_id, "panel": found, "content": content}
    return render_screen(request, "panel.html", "panel", context)
