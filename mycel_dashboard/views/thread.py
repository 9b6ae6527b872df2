"""Screen 2: one thread — context-fill chart, timeline (stored / sent), summaries, checkpoint rail, panels."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse

from memory_core.messages import Message
from memory_core.model_view import ActiveSummary, model_view
from memory_core.pruning import prune_decisions
from memory_core.records import CheckpointRow, CheckpointState, ThreadRow
from memory_core.replay import DEFAULT_SUMMARY_CHARS, replay_calls
from memory_core.stores.reader import MycelReader
from memory_core.stores.rollback_actions import rollback_record
from memory_core.tokens import default_counter, estimate_tokens
from mycel_dashboard.charts import CallPoint, context_fill_figure
from mycel_dashboard.data import MemoryContext, guarded, open_source, problem_text, thread_memory
from mycel_dashboard.forms import TimelineForm
from mycel_dashboard.panels import PANELS
from mycel_dashboard.thread_view import (
    SummaryCard,
    View,
    build_timeline,
    checkpoint_rail,
    page_of,
    summary_card,
)
from mycel_dashboard.views.common import render_screen, wants_partial

# Context-fill figures per (file, thread, head, settings, summary size); a figure is plain data, shared
# read-only by every request of the process.
_CHARTS: OrderedDict[tuple[Any, ...], dict[str, Any]] = OrderedDict()
_CHARTS_LOCK = threading.Lock()
_CHARTS_SIZE = 16


def thread_or_404(reader: MycelReader, thread_id: str, problems: list[str]) -> ThreadRow | None:
    """The thread's row; 404 when no store knows it, None (with problems) when the stores cannot be read."""
    result = reader.get_thread(thread_id)
    problems.extend(problem_text(p) for p in result.problems)
    if result.value is None and not result.problems:
        raise Http404(f"No thread {thread_id!r} in any configured store.")
    return result.value


def head_state(reader: MycelReader, thread_id: str, problems: list[str]) -> CheckpointState | None:
    result = reader.get_state(thread_id)
    problems.extend(problem_text(p) for p in result.problems)
    return result.value


def thread_detail(request: HttpRequest, thread_id: str) -> HttpResponse:
    values, notes = TimelineForm(request.GET).values()
    view = View(values["view"])
    limit_override = values["limit"]
    source, reader = open_source()
    problems: list[str] = []
    thread = thread_or_404(reader, thread_id, problems)
    context: dict[str, Any] = {
        "source": source,
        "thread_id": thread_id,
        "thread": thread,
        "notes": notes,
        "problems": problems,
        "limit_override": limit_override,
        "view_choices": [(View.STORED.value, "Stored"), (View.SENT.value, "Sent to the model")],
        "panels": PANELS.values(),
    }
    if thread is None:
        return render_screen(request, "thread.html", None, context)

    memory = thread_memory(thread, override=limit_override, locations=source.locations)
    problems.extend(memory.notes)
    timeline_problems: list[str] = []
    state = head_state(reader, thread_id, timeline_problems)
    messages = state.messages if state is not None else ()
    summaries = reader.list_summaries(thread_id)
    timeline_problems.extend(problem_text(p) for p in summaries.problems)
    card = summary_card(summaries.value, len(messages))
    if card is not None:
        # memory_core decides whether Mycel would apply the summary (and says why not).
        sent = guarded(
            "the model's view",
            lambda: model_view(
                messages, settings=memory.settings, summary=ActiveSummary.from_row(card.active)
            ),
            timeline_problems,
        )
        if sent is not None:
            card = replace(card, applied=sent.summary_applied)
            if sent.summary_note:
                timeline_problems.append(f"The active summary is not applied: {sent.summary_note}.")
    pruning = guarded(
        "Mycel's pruning", lambda: prune_decisions(messages, settings=memory.settings), timeline_problems
    )

    def spill_url(tool_call_id: str) -> str:
        return reverse("spill", args=[thread_id, tool_call_id])

    timeline = guarded(
        "the timeline",
        lambda: build_timeline(
            messages, pruning=pruning, card=card, view=view, page=values["page"], spill_url=spill_url
        ),
        timeline_problems,
    )
    context.update(
        memory=memory,
        message_count=len(messages),
        estimate_now=estimate_tokens(messages),
        timeline=timeline,
        timeline_problems=timeline_problems,
        half_trim=memory.settings.soft_trim_chars // 2,
    )
    if wants_partial(request):
        return render_screen(request, "thread.html", "timeline", context)

    checkpoints = reader.list_checkpoints(thread_id)
    problems.extend(problem_text(p) for p in checkpoints.problems)
    head = state.checkpoint.checkpoint_id if state is not None else thread.head_checkpoint_id
    context["rail"] = guarded(
        "the checkpoint rail", lambda: checkpoint_rail(checkpoints.value, head), problems
    )
    context["rail_key"] = rail_cache_key(source.locations.main, thread_id, head, checkpoints.value)
    head_key = (str(source.locations.main), thread_id, head)
    context.update(chart_context(thread_id, messages, memory, card, problems, head_key=head_key))
    context["undoable"] = state is not None and rollback_record(state.checkpoint.metadata) is not None
    return render_screen(request, "thread.html", "timeline", context)


def rail_cache_key(
    main: object, thread_id: str, head: str | None, checkpoints: Sequence[CheckpointRow]
) -> str:
    """Names one rendering of the rail: checkpoints never change, so the file, the thread, the head and
    the newest/oldest ids with the count pin it (a partial read gets another key). Rendering a 900-row
    rail with the template engine costs more than everything else on the page."""
    if not checkpoints:
        return ""
    ends = f"{checkpoints[0].checkpoint_id}:{checkpoints[-1].checkpoint_id}:{len(checkpoints)}"
    return f"{main}|{thread_id}|{head}|{ends}"


def chart_context(
    thread_id: str,
    messages: Sequence[Message],
    memory: MemoryContext,
    card: SummaryCard | None,
    problems: list[str],
    *,
    head_key: tuple[str, str, str | None] | None = None,
) -> dict[str, Any]:
    """The context-fill figure: memory_core's replay of every model call under the effective settings.

    With `head_key` (file, thread, head checkpoint id) the figure is kept per head and settings: the
    head's messages never change, so every later request for the page reuses the replay.
    """
    if not messages:
        return {"figure": None}
    # Mycel's real summaries are the best guess for the size of the ones the replay simulates.
    summary_chars = len(card.active.summary_text) if card is not None else DEFAULT_SUMMARY_CHARS
    key = (*head_key, memory.settings, summary_chars) if head_key and head_key[2] else None
    if key is not None:
        with _CHARTS_LOCK:
            cached = _CHARTS.get(key)
            if cached is not None:
                _CHARTS.move_to_end(key)
                return cached
    found = _chart_context(thread_id, messages, memory, summary_chars, problems)
    if key is not None and found.get("figure") is not None:
        with _CHARTS_LOCK:
            _CHARTS[key] = found
            while len(_CHARTS) > _CHARTS_SIZE:
                _CHARTS.popitem(last=False)
    return found


def _chart_context(
    thread_id: str,
    messages: Sequence[Message],
    memory: MemoryContext,
    summary_chars: int,
    problems: list[str],
) -> dict[str, Any]:
    calls = guarded(
        "the model-call replay",
        lambda: replay_calls(
            messages, settings=memory.settings, counter=default_counter(), summary_chars=summary_chars
        ),
        problems,
    )
    if calls is None:
        return {"figure": None, "chart_missing": "the model calls could not be replayed (see above)."}
    points = [
        CallPoint(
            call=number,
            message_index=call.index,
            stored=call.stored_tokens,
            after_pruning=call.pruned_tokens,
            sent=call.sent_tokens,
            tiktoken=call.tiktoken_sent,
            input_tokens=call.provider_input_tokens,
            compacted=call.compacted,
            pruned=bool(call.soft_trimmed or call.hard_cleared),
            url=timeline_url(thread_id, View.STORED, call.index),
        )
        for number, call in enumerate(calls, start=1)
    ]
    figure = context_fill_figure(
        points, trigger_tokens=memory.settings.trigger_tokens, context_limit=memory.settings.context_limit
    )
    return {"figure": figure, "calls": calls, "compactions": sum(1 for c in calls if c.compacted)}


def timeline_url(thread_id: str, view: View, index: int) -> str:
    return f"{reverse('thread', args=[thread_id])}?view={view.value}&page={page_of(index)}#msg-{index}"
