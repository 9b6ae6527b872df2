"""A thread's model calls as Mycel made them, read from its stores: the one function behind the Thread
screen's chart and call pages, `mycel-memory calls` and the current side of `mycel-memory whatif`.

Reads the head's messages, the summary rows and the checkpoint list; the rest is memory_core.call_record.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memory_core.app.dev_histories import dev_histories
from memory_core.app.thread_settings import ThreadMemorySettings, project_folder, thread_memory_settings
from memory_core.call_inputs import call_inputs
from memory_core.call_record.calls import RecordedCall, checkpoints_holding, holder_of, recorded_calls
from memory_core.call_record.dev_calls import DevHistory, dev_calls
from memory_core.call_record.evidence import Configured, SettingsInForce, settings_in_force
from memory_core.call_record.summariser import requests_with_text, summarised_call, with_summariser_requests
from memory_core.context_limits import ContextLimit, ContextLimitSource, named_limits
from memory_core.memo import Key, Memo
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message, MessageType
from memory_core.model_view import ActiveSummary, newest_active
from memory_core.records import BreakerState, CheckpointRow, ProblemKind, StoreProblem, SummaryRow, ThreadRow
from memory_core.replay import simulated_summary_chars
from memory_core.rules.dev import DevCallPlan, plan_dev_call
from memory_core.rules.profile import RulesProfile, rules_reason
from memory_core.rules.summariser import SummariserRequest
from memory_core.stores.locations import MycelLocations
from memory_core.stores.reader import MycelReader
from memory_core.stores.runtime_config import change_points, get_models_file, get_pricing_file
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
    rules: RulesProfile = RulesProfile.MAIN  # whose memory rules the calls follow
    rules_reason: str = "main layout"  # why: "dev layout", "--rules"
    # Mycel dev: the histories before prompt-too-long recoveries rewrote the head, oldest first.
    earlier: tuple[tuple[Message, ...], ...] = ()

    @property
    def head_calls(self) -> tuple[RecordedCall, ...]:
        """The calls whose input is in the head's history (not one dev's recovery rewrote)."""
        return tuple(c for c in self.calls if c.earlier_history is None)

    def messages_of(self, call: RecordedCall) -> tuple[Message, ...]:
        """The history a call's input is in: the head's, or an earlier one dev rewrote."""
        if call.earlier_history is not None and call.earlier_history < len(self.earlier):
            return self.earlier[call.earlier_history]
        return self.messages

    def settings_of(self, call: RecordedCall) -> MemorySettings:
        return settings_at(self.inference, self.configured, call)

    def summariser_texts(self, call: RecordedCall) -> tuple[SummariserRequest, ...]:
        """The summariser requests before `call` with their text (the record keeps their sizes only)."""
        if not call.summariser:
            return ()
        position = self.calls.index(call)
        dev = self.rules is RulesProfile.DEV
        planned = summarised_call(self.calls[position - 1] if position else None, call, dev=dev)
        history = self.messages_of(planned)[: planned.index]
        return requests_with_text(
            history, self.settings_of(planned), dev=dev, whole=call.compacted, rules=self.rules
        )

    @property
    def transient(self) -> bool:
        return any(p.kind in TRANSIENT for p in self.problems)

    @property
    def context_limit(self) -> int:
        """The limit of the newest call's settings (today's when the thread has no call)."""
        return self.calls[-1].context_limit if self.calls else self.configured.settings.context_limit

    @property
    def trigger_tokens(self) -> int:
        return self.calls[-1].trigger_tokens if self.calls else self.configured.settings.trigger_tokens

    @property
    def context_limit_source(self) -> str:
        return self.calls[-1].context_limit_source if self.calls else self.configured.source

    @property
    def limit_range(self) -> str | None:
        """What the record allows for the newest call's limit when it allows more than the value chosen
        ("between 4,900 and 5,100"); None when the rows pin it or there is no call."""
        if not self.calls or not self.inference.segments:
            return None
        segments = self.inference.segments
        segment = segments[min(self.calls[-1].segment, len(segments) - 1)]
        limits = segment.limits
        if (not segment.rows and not limits.bounded) or (
            len(limits.spans) == 1 and limits.low == limits.high
        ):
            return None  # nothing measured it (the config's value), or the rows pin it
        return limits.words()


_KNOWN: Memo[dict[str, int]] = Memo("stores.known_limits", max_entries=8)


def known_limits(locations: MycelLocations) -> dict[str, int]:
    """The limit of every model name models.json knows, through the pricing cache as Mycel looks it up
    (kept while both files are unchanged)."""
    files = [locations.config_home / name for name in ("models.json", "pricing_cache.json")]
    stamp = tuple((s.st_mtime_ns, s.st_size) if (s := _stat(p)) else None for p in files)

    def read() -> dict[str, int]:
        return named_limits(
            runtime_context_limit=0,
            models_document=get_models_file(locations).document,
            pricing_document=get_pricing_file(locations).document,
        )

    return _KNOWN.get_or_compute(Key(store=str(locations.config_home), what=stamp), read)


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except OSError:
        return None


def configured_for(
    locations: MycelLocations,
    resolved: ThreadMemorySettings,
    *,
    settings: MemorySettings | None = None,
    as_of: datetime | None = None,
) -> Configured:
    """A thread's config as the inference takes it (`as_of`: the moment `resolved` was read as of);
    `settings` replaces the resolved ones (a limit set on the page, flags on the command line) and is then
    its source, no longer the record's."""
    if settings is None or settings == resolved.settings:
        return Configured(resolved.settings, limit_source(resolved.limit), known_limits(locations), as_of)
    source = (
        limit_source(resolved.limit) if settings.context_limit == resolved.settings.context_limit else "given"
    )
    return Configured(settings, source, known_limits(locations))


def record_configured(locations: MycelLocations, row: ThreadRow, *, at: datetime | None = None) -> Configured:
    """The record's config: the layer files as they were at the thread's newest activity (`at`: at its
    newest model call, once the checkpoints are read), never as they are today, so no save made since
    moves a figure of the past."""
    when = at or row.updated_at
    return configured_for(locations, thread_memory_settings(locations, row, as_of=when), as_of=when)


def record_time(
    messages: Sequence[Message],
    checkpoints: Sequence[CheckpointRow],
    holding: tuple[tuple[int, ...], tuple[str, ...]],
) -> datetime | None:
    """When the thread's newest model call was made: the time of the checkpoint that first held its
    answer (a later checkpoint may be the dashboard's own rollback, written long after)."""
    last = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].type is MessageType.AI), None)
    holder = holder_of(last, holding) if last is not None else None
    return next((c.created_at for c in checkpoints if c.checkpoint_id == holder), None)


def settled(
    locations: MycelLocations,
    row: ThreadRow,
    configured: Configured,
    messages: Sequence[Message],
    checkpoints: Sequence[CheckpointRow],
    holding: tuple[tuple[int, ...], tuple[str, ...]],
) -> Configured:
    """The record's config read again as of the newest model call when that came before the head (a
    rollback's head is written when the operator rolls back); any other config unchanged."""
    if configured.as_of is None:
        return configured
    when = record_time(messages, checkpoints, holding)
    if when is None or when >= configured.as_of:
        return configured
    project = project_folder(locations, row)
    if not any(when < point <= configured.as_of for point in change_points(locations, project)):
        return configured  # no config file changed in between: the same config
    return record_configured(locations, row, at=when)


def models_of(checkpoints: Sequence[CheckpointRow]) -> dict[str, str | None]:
    """The model each checkpoint's run went to (its metadata), by checkpoint id."""
    return {c.checkpoint_id: c.model for c in checkpoints}


def calls_of(
    messages: tuple[Message, ...],
    summaries: tuple[SummaryRow, ...],
    holding: tuple[tuple[int, ...], tuple[str, ...]],
    configured: Configured,
    *,
    counter: TokenCounter | None,
    models_by_checkpoint: Mapping[str, str | None] | None = None,
    rules: RulesProfile = RulesProfile.MAIN,
    earlier: Sequence[DevHistory] = (),
) -> tuple[tuple[RecordedCall, ...], SettingsInForce]:
    """The pure part: messages, rows and the checkpoint lineage (with the model each checkpoint ran
    with) in; calls and settings in force out, under `rules` (dev's: after the `earlier` histories
    its prompt-too-long recoveries rewrote)."""
    models_by_checkpoint = models_by_checkpoint or {}
    inputs = list(call_inputs(messages, configured.settings, counter))
    models = [models_by_checkpoint.get(holder_of(c.index, holding) or "") for c in inputs]
    inference = settings_in_force(inputs, summaries, configured, models)
    active = newest_active(summaries)
    if rules is RulesProfile.DEV:
        # main's inference reads the rows' limits the same way (dev splits as main does); dev's walk
        # then checks that limit against the notices and the breaker.
        guess = inference.segments[-1].settings if summaries else None
        calls, inference = dev_calls(
            (*earlier, DevHistory(messages, holding)),
            summaries,
            configured,
            guess,
            summary_chars=simulated_summary_chars(active.summary_text if active else None),
            counter=counter,
        )
    else:
        calls = recorded_calls(
            inputs,
            inference,
            inference.off_history,
            holding=holding,
            summary_chars=simulated_summary_chars(active.summary_text if active else None),
            counter=counter,
        )

    earlier_of: dict[int | None, tuple[Message, ...]] = {at: h.messages for at, h in enumerate(earlier)}
    sized = with_summariser_requests(
        calls,
        lambda call: settings_at(inference, configured, call),
        lambda call: earlier_of.get(call.earlier_history, messages),  # None: the head's history
        rules=rules,
    )
    return sized, inference


def settings_at(inference: SettingsInForce, configured: Configured, call: RecordedCall) -> MemorySettings:
    """The settings a call ran under: its segment's (the configured ones when the record has none)."""
    segments = inference.segments
    return segments[min(call.segment, len(segments) - 1)].settings if segments else configured.settings


def thread_calls(
    reader: MycelReader,
    row: ThreadRow,
    configured: Configured,
    *,
    counter: TokenCounter | None,
    rules: RulesProfile | None = None,
) -> ThreadCalls:
    """Read the thread's head, summaries and checkpoints, and reconstruct every model call under the
    rules of the thread's layout (`rules` overrides them)."""
    profile, reason = rules_reason(override=rules, layout=row.layout)
    state = reader.get_state(row.thread_id, row.head_checkpoint_id)
    summaries = reader.list_summaries(row.thread_id)
    checkpoints = reader.list_checkpoints(row.thread_id)
    messages = state.value.messages if state.value is not None else ()
    head = state.value.checkpoint.checkpoint_id if state.value is not None else row.head_checkpoint_id
    rows = tuple(summaries.value)
    holding = checkpoints_holding(checkpoints.value, head)
    configured = settled(reader.locations, row, configured, messages, checkpoints.value, holding)
    histories = (
        dev_histories(reader, row.thread_id, checkpoints.value, messages, holding)
        if profile is RulesProfile.DEV
        else ()
    )
    if histories:
        holding = histories[-1].holding
    calls, inference = calls_of(
        messages,
        rows,
        holding,
        configured,
        counter=counter,
        models_by_checkpoint=models_of(checkpoints.value),
        rules=profile,
        earlier=histories[:-1],
    )
    return ThreadCalls(
        calls=calls,
        inference=inference,
        configured=configured,
        messages=messages,
        summaries=rows,
        problems=state.problems + summaries.problems + checkpoints.problems,
        rules=profile,
        rules_reason=reason,
        earlier=tuple(h.messages for h in histories[:-1]),
    )


def dev_next_call(
    reader: MycelReader, row: ThreadRow, messages: Sequence[Message], settings: MemorySettings
) -> DevCallPlan:
    """Mycel dev's middleware at the thread's next call: behind its active summary row, with the head's
    breaker (the dry-run page and `mycel-memory dry-run --rules dev` both ask here)."""
    active = newest_active(reader.list_summaries(row.thread_id).value)
    summary = ActiveSummary.from_row(active) if active is not None else None
    breaker = BreakerState(row.breaker_failures or 0, row.breaker_open)
    return plan_dev_call(messages, settings=settings, active_summary=summary, breaker=breaker)
