"""The Thread screen's parts — timeline, chart, checkpoint rail — each derived from the head checkpoint.

What a part derives from a head never changes for that head (checkpoints are immutable), so pruning and
the rail are kept in memo (memory_core/memo.py) under (file, thread, head, settings); the chart draws the
record of the calls (screens/shared/replays.py) that the call pages, the Config screen's what-if and
`mycel-memory calls` show too. Data is kept, never rendered HTML.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from memory_core.app.calls import ThreadCalls
from memory_core.call_record.calls import RecordedCall, recompaction_runs
from memory_core.memo import Key, Memo, digest
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message, MessageType
from memory_core.model_view import ActiveSummary, model_view
from memory_core.pruning import PruningResult, prune_decisions
from memory_core.records import ProblemKind, SummaryRow, ThreadRow
from memory_core.rollback import OvertakenRollback, overtaken_rollback
from memory_core.stores.reader import MycelReader
from mycel_dashboard.screens.shared.charts import (
    call_points,
    context_fill_figure,
    fill_words,
    rules_words,
    script_json,
)
from mycel_dashboard.screens.shared.memory import MemoryContext, guarded, problem_text
from mycel_dashboard.screens.shared.replays import thread_record
from mycel_dashboard.screens.thread_detail.presenter import (
    RailItem,
    SummaryCard,
    Timeline,
    TimelineFilter,
    View,
    build_timeline,
    checkpoint_rail,
    run_failure,
    summary_card,
)

_PRUNING: Memo[PruningResult] = Memo("thread.pruning", max_entries=16)
_RAILS: Memo[RailPart] = Memo("thread.rail", max_entries=16)
_CHARTS: Memo[ChartPart] = Memo("thread.chart", max_entries=16)
# A read that met a lock or a time limit is not kept: the next request tries again.
_TRANSIENT = frozenset({ProblemKind.LOCKED, ProblemKind.TIMEOUT})
# Checkpoints the rail shows at once, newest first; "Earlier" pages through the rest.
RAIL_PAGE = 50


def pruning_of(
    store: Hashable,
    thread_id: str,
    head: str | None,
    messages: Sequence[Message],
    settings: MemorySettings,
) -> PruningResult:
    """Mycel's pruning of the head's messages under `settings` (the timeline's badges, the sent view)."""
    if head is None:
        return prune_decisions(messages, settings=settings)
    key = Key(store=store, thread=thread_id, head=head, settings=digest(settings))
    return _PRUNING.get_or_compute(key, lambda: prune_decisions(messages, settings=settings))


def active_card(
    summaries: Sequence[SummaryRow], messages: Sequence[Message], memory: MemoryContext, problems: list[str]
) -> SummaryCard | None:
    """The summary card, with memory_core's word on whether Mycel would apply it (and why not)."""
    card = summary_card(summaries, len(messages))
    if card is None:
        return None
    sent = guarded(
        "the model's view",
        lambda: model_view(messages, settings=memory.settings, summary=ActiveSummary.from_row(card.active)),
        problems,
    )
    if sent is None:
        return card
    if sent.summary_note:
        problems.append(f"The active summary is not applied: {sent.summary_note}.")
    return replace(card, applied=sent.summary_applied)


def timeline_of(
    store: Hashable,
    thread_id: str,
    head: str | None,
    messages: Sequence[Message],
    *,
    memory: MemoryContext,
    card: SummaryCard | None,
    view: View,
    page: int | None,
    spill_url: Callable[[str], str],
    problems: list[str],
    filters: TimelineFilter | None = None,
    run_error: str | None = None,
) -> Timeline | None:
    pruning = guarded(
        "Mycel's pruning", lambda: pruning_of(store, thread_id, head, messages, memory.settings), problems
    )
    return guarded(
        "the timeline",
        lambda: build_timeline(
            messages,
            pruning=pruning,
            card=card,
            view=view,
            page=page,
            spill_url=spill_url,
            filters=filters,
            run_error=run_error,
        ),
        problems,
    )


def run_error_of(
    reader: MycelReader, thread_id: str, messages: Sequence[Message], run_id: object
) -> str | None:
    """The error that ended the head's run (`run_id`, from its metadata) before the model answered.

    A failed model call leaves no message in the checkpoint, only an `error` run event, so events.db is
    read only when the history does not end with the model's answer. Its own problems are the run events
    panel's to report.
    """
    if not messages or not isinstance(run_id, str):
        return None
    last = messages[-1]
    if last.type is MessageType.AI and not last.tool_calls:
        return None
    return run_failure(reader.list_run_events(thread_id).value, run_id)


@dataclass(frozen=True, slots=True)
class ChartPart:
    figure: dict[str, Any] | None
    figure_json: str = ""  # the figure as script-safe JSON (charts.script_json), built once with it
    record: ThreadCalls | None = None
    missing: str | None = None  # why there is no chart

    @property
    def calls(self) -> tuple[RecordedCall, ...]:
        return self.record.calls if self.record is not None else ()

    @property
    def compactions(self) -> int:
        return sum(1 for c in self.calls if c.compacted)

    @property
    def not_stored(self) -> int:
        return sum(1 for c in self.calls if c.compacted and not c.compaction_stored)

    @property
    def recompaction_runs(self) -> list[tuple[int, int]]:
        return recompaction_runs(self.calls)

    @property
    def rules_words(self) -> str:
        """Whose memory rules the calls follow, as the caption names them."""
        return rules_words(self.record.rules, self.record.rules_reason) if self.record is not None else ""

    @property
    def peak_fill(self) -> str:
        """The largest share of the window any call sent, worded as the chart's own note words it."""
        return fill_words(max((c.fill for c in self.calls), default=0.0))


def chart_of(
    reader: MycelReader,
    thread: ThreadRow,
    *,
    memory: MemoryContext,
    call_url: Callable[[int], str],
    call_page_url: Callable[[int], str],
    problems: list[str],
) -> ChartPart:
    """The context-fill figure of every model call as Mycel made it (the record, the same calls
    `mycel-memory calls` prints), kept per head with the figure built from it (900 points are worth
    building once)."""

    def build() -> ChartPart:
        record = guarded(
            "the model calls",
            lambda: thread_record(reader, thread, limit=memory.override),
            problems,
        )
        if record is None:
            return ChartPart(figure=None, missing="the model calls could not be rebuilt (see above).")
        if (
            not record.calls
        ):  # as the what-if figure: no call, no chart (a rollback can leave a lone question)
            return ChartPart(
                figure=None,
                record=record,
                missing="no model call yet: the active checkpoint holds no AI message.",
            )
        figure = context_fill_figure(call_points(record.calls, call_url, call_page_url))
        return ChartPart(figure=figure, figure_json=script_json(figure), record=record)

    head = thread.head_checkpoint_id
    if head is None:
        return build()
    # The links' bases (call_url(0), call_page_url(0)) are part of the key: the figure's points carry them.
    key = Key(
        store=reader.store_key,
        thread=thread.thread_id,
        head=head,
        settings=digest(memory.settings, memory.limit_source),
        what=(thread.checkpoints, thread.summaries, call_url(0), call_page_url(0)),
    )
    return _CHARTS.get_or_compute(key, build, keep=lambda part: part.figure is not None)


@dataclass(frozen=True, slots=True)
class RailPart:
    """Every checkpoint of the thread as rail items (newest first) and what reading them met."""

    items: tuple[RailItem, ...]
    problems: tuple[str, ...]
    overtaken: OvertakenRollback | None = None  # the newest rollback, when the agent went on elsewhere
    transient: bool = False

    def page(self, number: int) -> tuple[RailItem, ...]:
        start = (max(number, 1) - 1) * RAIL_PAGE
        return self.items[start : start + RAIL_PAGE]

    def has_page(self, number: int) -> bool:
        return 0 < (number - 1) * RAIL_PAGE < len(self.items)


def rail_of(reader: MycelReader, thread: ThreadRow, head: str | None) -> RailPart:
    """The rail for this head, read once per head (the checkpoint count pins a partial read)."""

    def read() -> RailPart:
        checkpoints = reader.list_checkpoints(thread.thread_id)
        problems = [problem_text(p) for p in checkpoints.problems]
        items = guarded(
            "the checkpoint rail",
            lambda: checkpoint_rail(checkpoints.value, head, lineage_from_order=thread.layout == "dev"),
            problems,
        )
        overtaken = guarded("the rollback check", lambda: overtaken_rollback(checkpoints.value), problems)
        return RailPart(
            items=items or (),
            problems=tuple(problems),
            overtaken=overtaken,
            transient=any(p.kind in _TRANSIENT for p in checkpoints.problems),
        )

    if head is None:
        return read()
    key = Key(store=reader.store_key, thread=thread.thread_id, head=head, what=thread.checkpoints)
    return _RAILS.get_or_compute(key, read, keep=lambda part: not part.transient)
