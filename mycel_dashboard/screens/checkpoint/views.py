"""Screen 3: the state at one checkpoint and its diff against its parent or any chosen checkpoint."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse

from mycel_dashboard.screens.checkpoint.forms import CheckpointDiffForm
from mycel_dashboard.screens.checkpoint.presenter import NoSuchCheckpoint, checkpoint_page
from mycel_dashboard.web.lookups import thread_or_404
from mycel_dashboard.web.render import render_screen, wants_partial
from mycel_dashboard.web.source import open_source


def checkpoint_detail(request: HttpRequest, thread_id: str, checkpoint_id: str) -> HttpResponse:
    values, notes = CheckpointDiffForm(request.GET).values()
    source, reader = open_source()
    problems: list[str] = []
    thread = thread_or_404(reader, thread_id, problems)
    try:
        page = checkpoint_page(
            reader,
            thread_id,
            checkpoint_id,
            against=values["against"] or None,
            diff_alone=wants_partial(request),
            lineage_from_order=thread is not None and thread.layout == "dev",
        )
    except NoSuchCheckpoint as exc:
        raise Http404(str(exc)) from exc
    context = {
        "source": source,
        "thread_id": thread_id,
        "page": page,
        "problems": problems + page.problems + notes,
    }
    return render_screen(request, "checkpoint.html", "checkpoint-diff", context)
