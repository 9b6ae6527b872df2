"""Screen 2: one thread — context-fill chart, timeline (stored / sent), summaries, checkpoint rail, panels."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from datetime import UTC, datetime
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils.cache import patch_vary_headers
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from memory_core.memo import Key, Memo, digest
from memory_core.messages import Message
from memory_core.rollback import rollback_record
from memory_core.tokens import estimate_tokens
from mycel_dashboard.screens.live.pulse import POLL_INTERVAL_MS, thread_pulse
from mycel_dashboard.screens.shared.family import family_card
from mycel_dashboard.screens.shared.memory import MemoryContext, guarded, problem_text, thread_memory
from mycel_dashboard.screens.storage.presenter import thread_bytes_card
from mycel_dashboard.screens.thread_detail.breaker import breaker_card
from mycel_dashboard.screens.thread_detail.forms import SHOW_CHOICES, TimelineForm, timeline_filter
from mycel_dashboard.screens.thread_detail.panels import PANELS
from mycel_dashboard.screens.thread_detail.parts import (
    active_card,
    chart_of,
    rail_of,
    run_error_of,
    timeline_of,
)
from mycel_dashboard.screens.thread_detail.presenter import LINEAGE_FROM_ORDER, SummaryCard, View
from mycel_dashboard.web.links import call_urls, spill_url, timeline_urls
from mycel_dashboard.web.lookups import head_state, thread_or_404
from mycel_dashboard.web.render import render_screen, requested_partial
from mycel_dashboard.web.source import open_source

# The parts an htmx request may ask for alone, by the id of the element it replaces.
_PARTS = {"timeline", "rail"}
# The one piece of rendered HTML this process keeps (everything else is kept as data): a 200-message
# timeline page costs the template engine ~40 ms, ~4x the rest of the part. Without it the load run
# (tests/benchmarks/load.py, 16 clients) missed its thread-page p95 target: 1,538 ms against 500 ms.
_TIMELINE_HTML: Memo[str] = Memo("thread.timeline_html", max_entries=64)


def thread_detail(request: HttpRequest, thread_id: str) -> HttpResponse:
    values, notes = TimelineForm(request.GET).values()
    source, reader = open_source()
    problems: list[str] = []
    absent: list[str] = []
    # The live tag first: a write landing while the page is read then shows at the first poll.
    pulse = guarded(
        "the live state", lambda: thread_pulse(reader, thread_id, now=datetime.now(UTC)), problems
    )
    thread = thread_or_404(reader, thread_id, problems, absent=absent)
    context: dict[str, Any] = {
        "source": source,
        "thread_id": thread_id,
        "thread": thread,
        "notes": notes,
        "problems": problems,
        "absent": absent,
        "limit_override": values["limit"],
        "view_choices": [(View.STORED.value, "Stored"), (View.SENT.value, "Sent to the model")],
        "show_choices": SHOW_CHOICES,
        "panels": PANELS.values(),
    }
    if thread is None:
        return render_screen(request, "thread.html", None, context)

    memory = thread_memory(thread, override=values["limit"], locations=source.locations)
    problems.extend(memory.notes)
    if memory.today_note:
        notes.append(memory.today_note)
    store = reader.store_key
    timeline_problems: list[str] = []
    state = head_state(reader, thread_id, timeline_problems)
    messages = state.messages if state is not None else ()
    head = state.checkpoint.checkpoint_id if state is not None else thread.head_checkpoint_id
    summaries = reader.list_summaries(thread_id)
    for p in summaries.problems:
        (absent if p.expected_absence else timeline_problems).append(problem_text(p))
    card = active_card(summaries.value, messages, memory, timeline_problems)
    part = _part(request)
    rail = rail_of(reader, thread, head) if part in (None, "rail") else None
    context.update(
        memory=memory,
        message_count=len(messages),
        estimate_now=estimate_tokens(messages),
        timeline_problems=timeline_problems,
        half_trim=memory.settings.soft_trim_chars // 2,
        rail=rail.page(values["rail"]) if rail else (),
        rail_next=values["rail"] + 1 if rail and rail.has_page(values["rail"] + 1) else None,
        rail_previous=values["rail"] - 1 if values["rail"] > 1 else None,
        lineage_note=LINEAGE_FROM_ORDER if thread.layout == "dev" else None,
    )
    if part in (None, "timeline"):
        html = _timeline_html(
            request,
            context,
            store,
            thread_id,
            head,
            messages,
            memory,
            card,
            values,
            head_read=state is not None,
            run_error=run_error_of(
                reader, thread_id, messages, state.checkpoint.metadata.get("run_id") if state else None
            ),
        )
        if part == "timeline":
            response = HttpResponse(html)
            patch_vary_headers(response, ("HX-Request",))
            return response
        context["timeline_html"] = mark_safe(html)  # noqa: S308 - rendered (and escaped) by the timeline partial
    if part is None and rail is not None:
        problems.extend(rail.problems)
        chart = chart_of(
            reader,
            thread,
            memory=memory,
            call_url=timeline_urls(thread_id),
            call_page_url=call_urls(thread_id),
            problems=problems,
        )
        context.update(
            chart=chart,
            figure_script=format_html(
                '<script id="fill-figure" type="application/json">{}</script>',
                mark_safe(chart.figure_json),  # noqa: S308 - script_json escaped it as json_script does
            )
            if chart.figure
            else "",
            breaker=breaker_card(
                breaker_open=thread.breaker_open,
                failure_count=thread.breaker_failures,
                messages=messages,
                calls=chart.calls,
            ),
            overtaken=rail.overtaken,
            undoable=state is not None and rollback_record(state.checkpoint.metadata) is not None,
            bytes_card=guarded(
                "the thread's bytes on disk", lambda: thread_bytes_card(reader, thread_id, problems), problems
            ),
        )
    if part is None:
        context["family_card"] = family_card(reader, thread_id, problems, absent)
        # Read before the page's own reads ended, live.js's first poll sees any write that came after.
        context.update(pulse=pulse, interval_ms=POLL_INTERVAL_MS)
    context["absent"] = list(dict.fromkeys(absent))  # several reads meet the same missing file
    return render_screen(request, "thread.html", part, context)


def _timeline_html(
    request: HttpRequest,
    context: dict[str, Any],
    store: Hashable,
    thread_id: str,
    head: str | None,
    messages: Sequence[Message],
    memory: MemoryContext,
    card: SummaryCard | None,
    values: dict[str, Any],
    *,
    head_read: bool,
    run_error: str | None = None,
) -> str:
    """The timeline part, rendered once per head, settings, card, problems met and query string (its links
    keep the query); not kept when the head could not be read or building it met a new problem."""
    problems: list[str] = context["timeline_problems"]

    def render() -> str:
        context["timeline"] = timeline_of(
            store,
            thread_id,
            head,
            messages,
            memory=memory,
            card=card,
            view=View(values["view"]),
            page=values["page"],
            spill_url=lambda tool_call_id: spill_url(thread_id, tool_call_id),
            problems=problems,
            filters=timeline_filter(values),
            run_error=run_error,
        )
        return render_to_string("thread.html#timeline", context, request)

    met = tuple(problems)
    key = Key(
        store=store,
        thread=thread_id,
        head=head,
        settings=digest(memory.settings),
        # The run's error can land in events.db after the head was written: it is part of the key.
        what=(card, met, request.GET.urlencode(), run_error),
    )
    return _TIMELINE_HTML.get_or_compute(key, render, keep=lambda _: head_read and tuple(problems) == met)


def _part(request: HttpRequest) -> str | None:
    return requested_partial(request, _PARTS, default="timeline")
