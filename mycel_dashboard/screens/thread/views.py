"""Screen 2: one thread — context-fill chart, timeline (stored / sent), summaries, checkpoint rail, panels."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils.cache import patch_vary_headers
from django.utils.html import json_script
from django.utils.safestring import mark_safe

from memory_core.messages import Message
from memory_core.model_view import ActiveSummary, model_view
from memory_core.pruning import PruningResult, prune_decisions
from memory_core.records import ProblemKind, ThreadRow
from memory_core.replay import DEFAULT_SUMMARY_CHARS, replay_calls
from memory_core.rollback import OvertakenRollback, overtaken_rollback
from memory_core.stores.reader import MycelReader
from memory_core.stores.rollback_actions import rollback_record
from memory_core.tokens import default_counter, estimate_tokens
from mycel_dashboard.screens.shared.caches import BoundedCache
from mycel_dashboard.screens.shared.charts import call_points, context_fill_figure
from mycel_dashboard.screens.shared.memory import MemoryContext, guarded, problem_text, thread_memory
from mycel_dashboard.screens.thread.forms import TimelineForm
from mycel_dashboard.screens.thread.panels import PANELS
from mycel_dashboard.screens.thread.presenter import (
    SummaryCard,
    View,
    build_timeline,
    checkpoint_rail,
    summary_card,
)
from mycel_dashboard.web.links import spill_url, timeline_url
from mycel_dashboard.web.lookups import head_state, thread_or_404
from mycel_dashboard.web.render import render_screen, wants_partial
from mycel_dashboard.web.source import open_source

# What the page derives from a head checkpoint never changes for that head (checkpoints are immutable),
# so each worker keeps the last few: keyed by (file, thread, head checkpoint id, ...), shared read-only.
# Pruning and the chart also depend on the effective settings, which are part of their keys.
_PRUNING: BoundedCache[PruningResult] = BoundedCache(16)
_CHARTS: BoundedCache[dict[str, Any]] = BoundedCache(16)
_RAILS: BoundedCache[RenderedRail] = BoundedCache(16)
_TIMELINES: BoundedCache[str] = BoundedCache(32)
# A read that met a lock or a time limit is not kept: the next request tries again.
_TRANSIENT = frozenset({ProblemKind.LOCKED, ProblemKind.TIMEOUT})


@dataclass(frozen=True, slots=True)
class RenderedRail:
    """The checkpoint rail as HTML (a 900-checkpoint rail costs the template engine ~250 ms) and the
    problems met reading it."""

    html: str
    problems: tuple[str, ...]
    overtaken: OvertakenRollback | None = None  # the newest rollback, when the agent went on elsewhere


def clear_caches() -> None:
    """Forget every per-head result (benchmarks measure cold pages with it)."""
    for cache in (_PRUNING, _CHARTS, _RAILS, _TIMELINES):
        with cache.lock:
            cache.clear()


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
    head = state.checkpoint.checkpoint_id if state is not None else thread.head_checkpoint_id
    head_key = (str(source.locations.main), thread_id, head)

    def prune() -> PruningResult:
        if head is None:
            return prune_decisions(messages, settings=memory.settings)
        return _PRUNING.get_or_compute(
            (*head_key, memory.settings), lambda: prune_decisions(messages, settings=memory.settings)
        )

    context.update(
        memory=memory,
        message_count=len(messages),
        estimate_now=estimate_tokens(messages),
        timeline_problems=timeline_problems,
        half_trim=memory.settings.soft_trim_chars // 2,
    )
    # The rendered timeline is a function of the head, the settings, the summaries (card), the messages
    # met reading them and the URL's parameters (its links keep them); not kept after a lock or timeout.
    transient = any(p.kind in _TRANSIENT for p in summaries.problems)
    timeline_key = (
        (*head_key, memory.settings, card, tuple(timeline_problems), request.GET.urlencode())
        if head is not None and state is not None and not transient
        else None
    )
    html = _TIMELINES.cached(timeline_key) if timeline_key else None
    if html is None:
        pruning = guarded("Mycel's pruning", prune, timeline_problems)

        context["timeline"] = guarded(
            "the timeline",
            lambda: build_timeline(
                messages,
                pruning=pruning,
                card=card,
                view=view,
                page=values["page"],
                spill_url=lambda tool_call_id: spill_url(thread_id, tool_call_id),
            ),
            timeline_problems,
        )
        html = render_to_string("thread.html#timeline", context, request)
        if timeline_key is not None and tuple(timeline_problems) == timeline_key[-2]:
            _TIMELINES.put(timeline_key, html)
    context["timeline_html"] = mark_safe(html)  # noqa: S308 - rendered (and escaped) by the timeline partial
    if wants_partial(request):
        response = HttpResponse(html)
        patch_vary_headers(response, ("HX-Request",))
        return response

    rail = rendered_rail(reader, thread, head, head_key)
    problems.extend(rail.problems)
    context["rail_html"] = mark_safe(rail.html)  # noqa: S308 - rendered (and escaped) by the rail partial
    context["overtaken"] = rail.overtaken
    context.update(chart_context(thread_id, messages, memory, card, problems, head_key=head_key))
    context["undoable"] = state is not None and rollback_record(state.checkpoint.metadata) is not None
    return render_screen(request, "thread.html", "timeline", context)


def rendered_rail(
    reader: MycelReader, thread: ThreadRow, head: str | None, head_key: tuple[str, str, str | None]
) -> RenderedRail:
    """The rail for this head, read and rendered once per worker (the count pins a partial read)."""
    key = (*head_key, thread.checkpoints)
    found = _RAILS.cached(key)
    if found is not None:
        return found
    checkpoints = reader.list_checkpoints(thread.thread_id)
    problems = [problem_text(p) for p in checkpoints.problems]
    items = guarded("the checkpoint rail", lambda: checkpoint_rail(checkpoints.value, head), problems)
    html = render_to_string("thread.html#rail", {"rail": items, "thread_id": thread.thread_id})
    overtaken = guarded("the rollback check", lambda: overtaken_rollback(checkpoints.value), problems)
    found = RenderedRail(html=html, problems=tuple(problems), overtaken=overtaken)
    if head is not None and not any(p.kind in _TRANSIENT for p in checkpoints.problems):
        _RAILS.put(key, found)
    return found


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
    found = _CHARTS.cached(key) if key is not None else None
    if found is not None:
        return found
    found = _chart_context(thread_id, messages, memory, summary_chars, problems)
    if found.get("figure") is not None:
        # The JSON for charts.js, escaped once (json_script) rather than on every request.
        found["figure_script"] = json_script(found["figure"], "fill-figure")
        if key is not None:
            _CHARTS.put(key, found)
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
    points = call_points(calls, lambda index: timeline_url(thread_id, View.STORED, index))
    figure = context_fill_figure(
        points, trigger_tokens=memory.settings.trigger_tokens, context_limit=memory.settings.context_limit
    )
    return {"figure": figure, "calls": calls, "compactions": sum(1 for c in calls if c.compacted)}
