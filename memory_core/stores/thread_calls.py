"""A thread's model calls as Mycel made them, read from its stores: the one function behind the Thread
screen's chart and call pages, `mycel-memory calls` and the current side of `mycel-memory whatif`.

Reads the head's messages, the summary rows and the checkpoint list; the rest is memory_core.record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from memory_core.call_inputs import call_inputs
from memory_core.context_limits import ContextLimit, ContextLimitSource
from memory_core.messages import Message
from memory_core.model_view import newest_active
from memory_core.record.calls import RecordedCall, checkpoints_holding, recorded_calls
from memory_core.record.evidence import Configured, SettingsInForce, settings_in_force
from memory_core.records import ProblemKind, StoreProblem, SummaryRow, ThreadRow
from memory_core.replay import simulated_summary_chars
from memory_core.settings import MemorySettings
from memory_core.stores.reader import MycelReader
from memory_core.tokens import TokenCounter

# A read that met a lock or a time limit may read differently next time: never kept.
TRANSIENT = frozenset({ProblemKind.LOCKED, ProblemKind.TIMEOUT})

_SOURCE_WORDS = {
    ContextLimitSource.MODELS_MAPPING: "models.json",
    ContextLimitSource.MODELS_CUSTOM_CONFIG: "models.json",
    ContextLimitSource.MODELS_ACTIVE: "models.json",
    ContextLimitSource.RUNTIME_CONFIG: "runtime.json",
    ContextLimitSource.PRICING_CACHE: "pricing cache",
    ContextLimitSource.BUNDLED_SNAPSHOT: "bundled snapshot",
    ContextLimitSource.DEFAULT: "Mycel's default",
}


def limit_source(limit: ContextLimit) -> str:
    """Where today's config takes a thread's limit from, in a few words ("assumed default" when the
    thread names no model, so Mycel's web default is assumed)."""
    if limit.model is None:
        return "assumed default"
    return _SOURCE_WORDS[limit.source]


@dataclass(frozen=True, slots=True)
class ThreadCalls:
    calls: tuple[RecordedCall, ...]
    inference: SettingsInForce
    configured: Configured
    messages: tuple[Message, ...]
    summaries: tuple[SummaryRow, ...]
    problems: tuple[StoreProblem, ...]

    @property
    def transient(self) -> bool:
        return any(p.kind in TRANSIENT for p in self.problems)

    @property
    def context_limit(self) -> int:
        """The limit of the newest call's settings (today's when the thread has no call)."""
        return self.calls[-1].context_limit if self.calls else self.configured.settings.context_limit

    @property
    def context_limit_source(self) -> str:
        return self.calls[-1].context_limit_source if self.calls else self.configured.source


def configured_for(
    settings: MemorySettings, limit: ContextLimit, known_limits: Mapping[str, int]
) -> Configured:
    return Configured(settings=settings, source=limit_source(limit), known_limits=known_limits)


def calls_of(
    messages: tuple[Message, ...],
    summaries: tuple[SummaryRow, ...],
    holding: tuple[tuple[int, ...], tuple[str, ...]],
    configured: Configured,
    *,
    counter: TokenCounter | None,
) -> tuple[tuple[RecordedCall, ...], SettingsInForce]:
    """The pure part: messages, rows and the checkpoint lineage in; calls and settings in force out."""
    inputs = list(call_inputs(messages, configured.settings, counter))
    inference = settings_in_force(inputs, summaries, configured)
    active = newest_active(summaries)
    calls = recorded_calls(
        inputs,
        inference,
        inference.off_history,
        holding=holding,
        summary_chars=simulated_summary_chars(active.summary_text if active else None),
        counter=counter,
    )
    return calls, inference


def thread_calls(
    reader: MycelReader,
    row: ThreadRow,
    settings: MemorySettings,
    limit: ContextLimit,
    known_limits: Mapping[str, int],
    *,
    counter: TokenCounter | None,
) -> ThreadCalls:
    """Read the thread's head, summaries and checkpoints, and reconstruct every model call."""
    state = reader.get_state(row.thread_id, row.head_checkpoint_id)
    summaries = reader.list_summaries(row.thread_id)
    checkpoints = reader.list_checkpoints(row.thread_id)
    messages = state.value.messages if state.value is not None else ()
    head = state.value.checkpoint.checkpoint_id if state.value is not None else row.head_checkpoint_id
    configured = configured_for(settings, limit, known_limits)
    rows = tuple(summaries.value)
    calls, inference = calls_of(
        messages, rows, checkpoints_holding(checkpoints.value, head), configured, counter=counter
    )
    return ThreadCalls(
        calls=calls,
        inference=inference,
        configured=configured,
        messages=messages,
        summaries=rows,
        problems=state.problems + summaries.problems + checkpoints.problems,
    )
