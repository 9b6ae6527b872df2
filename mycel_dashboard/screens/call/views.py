"""Screen: one model call's exact request, rebuilt from Mycel's record."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse

from memory_core.app.status import unreadable
from mycel_dashboard.screens.call.presenter import call_page, tiktoken_encoding
from mycel_dashboard.screens.shared.charts import rules_words
from mycel_dashboard.screens.shared.memory import guarded, problem_text
from mycel_dashboard.screens.shared.replays import thread_record
from mycel_dashboard.web.lookups import thread_or_404
from mycel_dashboard.web.render import render_screen
from mycel_dashboard.web.source import open_source


def call_detail(request: HttpRequest, thread_id: str, number: int) -> HttpResponse:
    source, reader = open_source()
    problems: list[str] = []
    thread = thread_or_404(reader, thread_id, problems)
    context: dict[str, object] = {
        "source": source,
        "thread_id": thread_id,
        "problems": problems,
        "number": number,
    }
    if thread is None:  # the stores could not say (locked, damaged): the page says why
        return render_screen(request, "call.html", None, context, status=503)
    record = guarded(
        "the model calls",
        lambda: thread_record(reader, thread),
        problems,
    )
    if record is not None:
        problems.extend(problem_text(p) for p in record.problems if not p.expected_absence)
        if not 1 <= number <= len(record.calls):
            if unreadable(record.problems):
                # The calls could not be read (leon.db locked or damaged): say that, not "no such call".
                return render_screen(request, "call.html", None, context, status=503)
            raise Http404(f"Thread {thread_id!r} has {len(record.calls)} model calls, not a call {number}.")
        context.update(
            page=guarded("the request", lambda: call_page(record, number), problems),
            record=record,
            rules_words=rules_words(record.rules, record.rules_reason),
            encoding=tiktoken_encoding(),
        )
    return render_screen(request, "call.html", None, context)
