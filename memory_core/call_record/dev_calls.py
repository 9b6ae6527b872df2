"""Every model call of a thread Mycel dev ran, under dev's memory rules (reference mycel-dev.md §4).

Dev estimates the trigger on the summarized view, so a thread compacts once per trigger crossing, not at
every call; an attempt can fail, and three failures in a row open a breaker that stops every later
attempt. Dev leaves a record of both in the history itself: a `compact` notice (with the new
`compact_up_to_index`) after a run that compacted, a `compact_breaker` notice after the run that opened
the breaker. Summary rows, when stored, are the truth for where it compacted and what it wrote.

The arithmetic says where dev attempted; the record says whether the attempt succeeded: a row at the
call or a `compact` notice at the end of its run is a success, anything else a failure. The context
limit in force is the one under which that reading explains every row and notice of the thread.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from memory_core.call_inputs import CallInput, CallSplitter, call_inputs
from memory_core.call_record.calls import RecordedCall, holder_of, sent_size, summary_head_tiktoken
from memory_core.call_record.evidence import (
    Configured,
    Segment,
    SettingsInForce,
    config_words,
    rows_on_history,
)
from memory_core.call_record.intervals import Limits
from memory_core.compaction import SUMMARY_HEADER, compact_up_to_index, summary_text_for
from memory_core.memory_settings import MYCEL_COMPACTION_THRESHOLD, MemorySettings
from memory_core.messages import Message, MessageType
from memory_core.model_view import ActiveSummary
from memory_core.notices import NoticeKind, notice_kind
from memory_core.records import BreakerState, SummaryRow
from memory_core.replay import placeholder_summary
from memory_core.rules.dev import dev_trigger_tokens, next_breaker
from memory_core.rules.request_time import NOTHING_ADDED, STEER_NOTE, RequestTimeIndex
from memory_core.rules.steer import joined_a_running_run
from memory_core.tokens import TokenCounter

# Summary lengths (characters) tried, longest first, when no row gives one.
UNKNOWN_SUMMARY_SIZES = (2000, 1000, 500, 250)
_UNEXPLAINED = "No context limit explains"


@dataclass(frozen=True, slots=True)
class DevRecord:
    """What dev left of its compactions: rows by call, and its notices with the run each ends."""

    rows_by_index: dict[int, SummaryRow]
    off_history: tuple[SummaryRow, ...]
    compact_notices: tuple[tuple[int, int], ...]  # (message index, compact_boundary_index)
    breaker_notices: tuple[int, ...]  # message indexes
    run_start: dict[int, int]  # notice index -> index of the owner message that started its run (-1)


def dev_record(
    messages: Sequence[Message], rows: Sequence[SummaryRow], call_indices: Sequence[int]
) -> DevRecord:
    by_index, off = rows_on_history(rows, call_indices)
    compact: list[tuple[int, int]] = []
    breaker: list[int] = []
    run_start: dict[int, int] = {}
    start = -1
    for i, message in enumerate(messages):
        kind = notice_kind(message)
        if kind is NoticeKind.COMPACT:
            boundary = (message.metadata or {}).get("compact_boundary_index")
            compact.append((i, boundary if isinstance(boundary, int) else -1))
            run_start[i] = start
        elif kind is NoticeKind.COMPACT_BREAKER:
            breaker.append(i)
            run_start[i] = start
        elif (
            kind is NoticeKind.NONE
            and message.type is MessageType.HUMAN
            and not joined_a_running_run(message)
        ):
            start = i  # a run starts at the message its owner (or another agent) sent; a steer joins one
    return DevRecord(by_index, off, tuple(compact), tuple(breaker), run_start)


@dataclass(frozen=True, slots=True)
class DevStep:
    """Dev's middleware at one call of the thread."""

    index: int
    trigger_view_tokens: int
    should_compact: bool
    attempted: bool
    compacted: bool
    stored: bool  # the compaction's row is stored (True when it did not compact)
    split_turn: bool
    summary: ActiveSummary | None  # in front of what was sent
    summary_id: str | None
    breaker: BreakerState  # after the call


@dataclass(slots=True)
class _Walk:
    """The record being matched while walking one candidate setting."""

    record: DevRecord | None
    claimed: set[int] = field(default_factory=set)
    mismatches: int = 0

    def claim_notice(self, index: int, notices: Sequence[int]) -> int | None:
        """Claim the first unclaimed notice after call `index` that ends the same run."""
        if self.record is None:
            return None
        for k in notices:
            if k > index and k not in self.claimed and self.record.run_start.get(k, -1) < index:
                self.claimed.add(k)
                return k
        return None


def dev_steps(
    calls: Sequence[CallInput],
    settings: MemorySettings,
    record: DevRecord | None,
    *,
    summary_chars: int,
    splitters: dict[int, CallSplitter] | None = None,
    give_up: bool = False,
) -> tuple[tuple[DevStep, ...], int]:
    """Dev's walk along the calls under `settings`, and how many rows and notices it leaves unexplained.

    With no `record` every attempt with something to summarise succeeds (a replay under proposed
    settings); with one, an attempt succeeds where the record shows a compaction. `splitters` keeps each
    call's splitter across walks (the limit search walks many times); `give_up` stops at the first
    unexplained row or notice (the search only needs to know there is one).
    """
    splitters = {} if splitters is None else splitters
    walk = _Walk(record)
    unknown = placeholder_summary(summary_chars)
    threshold = dev_trigger_tokens(settings)
    keep = settings.effective_keep_recent_tokens
    compact_at = [k for k, _ in record.compact_notices] if record else []
    cache: tuple[ActiveSummary, str | None] | None = None
    breaker = BreakerState()
    steps: list[DevStep] = []
    notices = sorted({k for k, _ in record.compact_notices} | set(record.breaker_notices)) if record else []
    for call in calls:
        i = call.index
        # Only calls before a notice can claim it: one behind us and unclaimed is unexplained for good.
        passed = sum(1 for k in notices if k < i and k not in walk.claimed)
        if give_up and (walk.mismatches or passed):
            return tuple(steps), walk.mismatches + passed
        held = cache[0] if cache else None
        applies = held is not None and bool(held.summary_text) and 1 <= held.compact_up_to_index <= i
        if applies and held is not None:
            chars = (
                len(SUMMARY_HEADER) + len(held.summary_text) + call.chars_between(held.compact_up_to_index, i)
            )
        else:
            chars = call.chars_between(0, i)
        view_tokens = chars // 2
        should = view_tokens > threshold
        attempted = should and not breaker.open
        row = record.rows_by_index.get(i) if record else None
        compacted, stored, split = False, True, False
        if attempted:
            splitter = splitters.get(i)
            if splitter is None:
                splitter = splitters[i] = call.splitter()
            cut = splitter.cut(keep, keep_newest=True)
            prefix = splitter.turn_prefix(cut, settings.context_limit)
            up_to = compact_up_to_index(i, cut, i - cut, prefix)
            if up_to is None:
                breaker = next_breaker(breaker, succeeded=True)  # nothing to summarise: dev counts a success
                walk.mismatches += row is not None
            elif record is None or row is not None or _notice_says_compacted(walk, i, compact_at, up_to):
                if row is not None:
                    walk.claim_notice(i, compact_at)
                    cache = (ActiveSummary.from_row(row), row.summary_id)
                    split = row.is_split_turn
                else:
                    split = prefix > 0
                    text = summary_text_for(unknown, unknown) if split else unknown
                    cache = (ActiveSummary(text, up_to), None)
                compacted, stored = True, row is not None or record is None
                breaker = next_breaker(breaker, succeeded=True)
            else:
                before = breaker
                breaker = next_breaker(breaker, succeeded=False)
                opened = breaker.open and not before.open
                if opened and record is not None and walk.claim_notice(i, record.breaker_notices) is None:
                    walk.mismatches += 1
        elif row is not None:
            # A stored row where these settings would not have attempted: unexplained, yet the record.
            walk.mismatches += 1
            walk.claim_notice(i, compact_at)
            cache = (ActiveSummary.from_row(row), row.summary_id)
            compacted, split = True, row.is_split_turn
            breaker = next_breaker(breaker, succeeded=True)
        sent = cache if cache is not None and (compacted or not should) else None
        if sent is not None and not (sent[0].summary_text and 1 <= sent[0].compact_up_to_index <= i):
            sent = None
        steps.append(
            DevStep(
                index=i,
                trigger_view_tokens=view_tokens,
                should_compact=should,
                attempted=attempted,
                compacted=compacted,
                stored=stored,
                split_turn=split,
                summary=sent[0] if sent else None,
                summary_id=sent[1] if sent else None,
                breaker=breaker,
            )
        )
    if record is not None:
        every = {k for k, _ in record.compact_notices} | set(record.breaker_notices)
        walk.mismatches += len(every - walk.claimed)
    return tuple(steps), walk.mismatches


def _notice_says_compacted(walk: _Walk, index: int, notices: Sequence[int], up_to: int) -> bool:
    """A `compact` notice ends this call's run: dev compacted here (one naming another boundary is
    claimed but counted as unexplained)."""
    notice = walk.claim_notice(index, notices)
    if notice is None or walk.record is None:
        return False
    boundary = dict(walk.record.compact_notices).get(notice, up_to)
    walk.mismatches += boundary != up_to
    return True


def _candidate_limits(calls: Sequence[CallInput]) -> list[int]:
    """The limits at which some call's estimate crosses int(0.7 × limit): between two of them dev's
    trigger decisions stay the same."""
    found: set[int] = set()
    for call in calls:
        e = call.pruned_tokens
        lowest_not_over = max(math.ceil(e / MYCEL_COMPACTION_THRESHOLD) - 1, 1)
        while int(lowest_not_over * MYCEL_COMPACTION_THRESHOLD) < e:
            lowest_not_over += 1
        found.update((lowest_not_over - 1, lowest_not_over))
    return sorted(v for v in found if v >= 10)


def dev_settings_in_force(
    calls: Sequence[CallInput],
    record: DevRecord,
    configured: Configured,
    main_guess: MemorySettings | None,
    *,
    summary_chars: int,
) -> tuple[SettingsInForce, tuple[DevStep, ...]]:
    """The settings under which dev's walk explains every row and notice, and the walk under them:
    the configured (the config then, for the record) when it does, else the limit the rows suggest, a
    named model's, else the roundest."""
    config = configured.settings
    splitters: dict[int, CallSplitter] = {}

    def walk(settings: MemorySettings, give_up: bool = False) -> tuple[tuple[DevStep, ...], int]:
        return dev_steps(
            calls, settings, record, summary_chars=summary_chars, splitters=splitters, give_up=give_up
        )

    tried: list[tuple[MemorySettings, str]] = [(config, configured.source)]
    if main_guess is not None:
        tried.append((replace(config, context_limit=main_guess.context_limit), "inferred from summaries"))
    for name, value in sorted(configured.known_limits.items(), key=lambda p: p[1]):
        tried.append((replace(config, context_limit=value), f"inferred from the record (matches {name})"))
    disagreements: list[str] = []
    for settings, source in tried:
        steps, misses = walk(settings, give_up=True)  # a walk with nothing unexplained runs to the end
        if misses == 0:
            if settings.context_limit != config.context_limit:
                disagreements.append(_needs(settings, configured))
            return _inference(calls, record, settings, source, disagreements), steps
    if config.fixed_trigger_tokens is None:
        candidates = _candidate_limits(calls)
        for position, low in enumerate(candidates):
            steps, misses = walk(replace(config, context_limit=low), give_up=True)
            if misses:
                continue
            high = candidates[position + 1] - 1 if position + 1 < len(candidates) else low
            chosen = Limits.between(low, high).roundest()
            settings = replace(config, context_limit=chosen)
            steps, misses = walk(settings, give_up=True)
            if misses:
                settings = replace(config, context_limit=low)
            steps, _ = walk(settings)
            disagreements.append(_needs(settings, configured))
            return _inference(calls, record, settings, "inferred from the record", disagreements), steps
    steps, misses = walk(config)
    disagreements.append(
        f"{_UNEXPLAINED} {misses} of the thread's summary rows and notices under Mycel dev's rules."
    )
    return _inference(calls, record, config, configured.source, disagreements), steps


def _needs(chosen: MemorySettings, configured: Configured) -> str:
    return (
        f"Under Mycel dev's rules the thread's summary rows and notices need a context limit near "
        f"{chosen.context_limit:,}; {config_words(configured)} gives {configured.settings.context_limit:,}."
    )


def _inference(
    calls: Sequence[CallInput], record: DevRecord, settings: MemorySettings, source: str, lines: list[str]
) -> SettingsInForce:
    limits = Limits.between(settings.context_limit, settings.context_limit)
    segment = Segment(0, len(calls) - 1, limits, settings, source, len(record.rows_by_index))
    return SettingsInForce(
        segments=(segment,),
        rows_by_index=record.rows_by_index,
        off_history=record.off_history,
        not_stored=frozenset(),
        disagreements=tuple(lines),
    )


def dev_recorded_calls(
    calls: Sequence[CallInput],
    steps: Sequence[DevStep],
    inference: SettingsInForce,
    *,
    holding: tuple[tuple[int, ...], tuple[str, ...]] = ((), ()),
    counter: TokenCounter | None = None,
    source: str | None = None,
    request_time: RequestTimeIndex | None = None,
) -> tuple[RecordedCall, ...]:
    """dev's walk in the shape of the record every screen reads, with what dev adds at call time
    (`request_time`, from the thread's messages) in each request's counts and sizes."""
    head_tiktoken = summary_head_tiktoken(counter)
    note_tiktoken = counter.count(STEER_NOTE) if counter is not None else 0
    segment = inference.segments[-1]
    settings = segment.settings
    out: list[RecordedCall] = []
    for position, (call, step) in enumerate(zip(calls, steps, strict=True)):
        sent_chars, sent, tiktoken = sent_size(call, step.summary, head_tiktoken)
        start = step.summary.compact_up_to_index if step.summary is not None else 0
        added = request_time.at(call.index, start) if request_time is not None else NOTHING_ADDED
        if added.steer_note:
            sent_chars, sent = sent_chars + added.extra_chars, sent + added.extra_messages
            tiktoken = None if tiktoken is None else tiktoken + note_tiktoken
        out.append(
            RecordedCall(
                call=position + 1,
                index=call.index,
                checkpoint_id=holder_of(call.index, holding),
                compacted=step.compacted,
                compaction_stored=step.stored,
                split_turn=step.split_turn,
                summary=step.summary,
                summary_id=step.summary_id,
                summary_stored=step.summary is None or step.summary_id is not None,
                sent_messages=sent,
                stored_tokens=call.stored_tokens,
                pruned_tokens=call.pruned_tokens,
                sent_tokens=sent_chars // 2,
                tiktoken_tokens=tiktoken,
                provider_input_tokens=call.message.input_tokens,
                soft_trimmed=call.soft_trimmed,
                hard_cleared=call.hard_cleared,
                over_trigger=step.should_compact,
                context_limit=settings.context_limit,
                trigger_tokens=dev_trigger_tokens(settings),
                context_limit_source=source or segment.source,
                segment=0,
                attempted=step.attempted,
                trigger_view_tokens=step.trigger_view_tokens,
                breaker_failures=step.breaker.failure_count,
                breaker_open=step.breaker.open,
                request_time=added,
            )
        )
    return tuple(out)


def dev_calls(
    calls: Sequence[CallInput],
    messages: Sequence[Message],
    rows: Sequence[SummaryRow],
    configured: Configured,
    main_guess: MemorySettings | None,
    *,
    holding: tuple[tuple[int, ...], tuple[str, ...]] = ((), ()),
    summary_chars: int,
    counter: TokenCounter | None = None,
) -> tuple[tuple[RecordedCall, ...], SettingsInForce]:
    """A dev thread's calls from its record: the settings that explain it, and the walk under them."""
    record = dev_record(messages, rows, [c.index for c in calls])
    # Without a row no summary's length is known, and it decides where the summarized view crosses the
    # trigger: the first of a few lengths under which some limit explains every notice.
    sizes = (summary_chars,) if rows else (summary_chars, *UNKNOWN_SUMMARY_SIZES)
    for size in sizes:
        inference, steps = dev_settings_in_force(calls, record, configured, main_guess, summary_chars=size)
        if not inference.disagreements or not inference.disagreements[-1].startswith(_UNEXPLAINED):
            break
    added = RequestTimeIndex.of(messages)
    return dev_recorded_calls(
        calls, steps, inference, holding=holding, counter=counter, request_time=added
    ), inference


def dev_replayed(
    messages: Sequence[Message],
    settings: MemorySettings,
    *,
    holding: tuple[tuple[int, ...], tuple[str, ...]] = ((), ()),
    summary_chars: int,
    counter: TokenCounter | None = None,
    source: str = "proposed",
) -> tuple[RecordedCall, ...]:
    """A what-if under dev's rules: every attempt with something to summarise succeeds (a working
    summariser), its summaries simulated, so none is stored."""
    calls = list(call_inputs(messages, settings, counter))
    steps, _ = dev_steps(calls, settings, None, summary_chars=summary_chars)
    limits = Limits.between(settings.context_limit, settings.context_limit)
    segment = Segment(0, len(calls) - 1, limits, settings, source, 0)
    inference = SettingsInForce((segment,), {}, (), frozenset(), ())
    replay = dev_recorded_calls(
        calls, steps, inference, holding=holding, counter=counter, request_time=RequestTimeIndex.of(messages)
    )
    # Simulated summaries are not stored: mark each compaction so, as main's replay does.
    return tuple(
        replace(c, compaction_stored=not c.compacted, summary_stored=c.summary is None) for c in replay
    )
