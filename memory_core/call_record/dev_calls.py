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
from collections.abc import Callable, Sequence
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
from memory_core.call_record.provider_counts import (
    chars_per_token,
    estimated_chars,
    measured_note,
    measured_summaries,
    with_measured,
)
from memory_core.compaction import SUMMARY_HEADER, compact_up_to_index, summary_text_for
from memory_core.memory_settings import MYCEL_COMPACTION_THRESHOLD, MemorySettings
from memory_core.messages import Message, MessageType
from memory_core.model_view import ActiveSummary
from memory_core.notices import NoticeKind, notice_kind
from memory_core.records import BreakerState, SummaryRow
from memory_core.replay import placeholder_summary
from memory_core.rules.dev import dev_trigger_tokens, next_breaker
from memory_core.rules.dev_recovery import (
    carried_count,
    is_terminal_error,
    recovery_summary,
    refused_as_too_long,
)
from memory_core.rules.request_time import NOTHING_ADDED, STEER_NOTE, RequestTimeIndex
from memory_core.rules.steer import joined_a_running_run
from memory_core.tokens import TokenCounter

# Summary lengths (characters) tried, longest first, when no row gives one.
UNKNOWN_SUMMARY_SIZES = (2000, 1000, 500, 250)
SIZE_STEPS = 6  # halvings between two candidate lengths: to within 1/64 of their gap
_UNEXPLAINED = "No context limit explains"


Holding = tuple[tuple[int, ...], tuple[str, ...]]
# Stands in for the answer a refused request never got (call_inputs' `at_end`), and for a message of the
# whole record no rule reads (a notice a recovery carried over, counted in the history it was written in).
_NO_ANSWER = Message(type=MessageType.AI, content="", raw_type="none")
_NEUTRAL = Message(type=MessageType.OTHER, content="", raw_type="none")


@dataclass(frozen=True, slots=True)
class DevHistory:
    """One history dev held: the newest checkpoint's messages before a prompt-too-long recovery rewrote
    it (the head's for the last), and the checkpoints that first held each message."""

    messages: tuple[Message, ...]
    holding: Holding = ((), ())


@dataclass(frozen=True, slots=True)
class DevPoint:
    """Where one call sits: its history, its place on the whole record (the histories end to end, one
    slot after each rewritten one for the request the provider refused there), whether the provider
    refused it, and the recovery compaction dev made right before it."""

    history: int
    at: int
    refused: bool = False
    reactive: ActiveSummary | None = None
    reactive_id: str | None = None


@dataclass(frozen=True, slots=True)
class DevWalk:
    """Every call of a thread dev ran, over all its histories, ready for dev's walk."""

    calls: tuple[CallInput, ...]
    points: tuple[DevPoint, ...]
    record: DevRecord
    histories: tuple[DevHistory, ...]


def dev_walk(
    histories: Sequence[DevHistory],
    rows: Sequence[SummaryRow],
    settings: MemorySettings,
    counter: TokenCounter | None = None,
) -> DevWalk:
    """The calls of every history, in order: each history's calls whose answers the next history does
    not carry over, its terminal error as the refused request it reports (any other terminal error is
    no call), and the refused request that ended it when a recovery rewrote it. Rows are matched to
    the first history (in the order they were written) with a call at their count; the recovery's own
    row, at the refused request, is the compaction before the next call."""
    calls: list[CallInput] = []
    points: list[DevPoint] = []
    laid: list[Message] = []
    local_calls: list[list[int]] = []
    offsets: list[int] = []
    ends: list[int | None] = []
    last = len(histories) - 1
    for k, history in enumerate(histories):
        messages = history.messages
        carried = carried_count(histories[k - 1].messages, messages) if k else 0
        offsets.append(len(laid))
        laid.extend(
            _NEUTRAL if (j <= carried and k) and notice_kind(m) is not NoticeKind.NONE else m
            for j, m in enumerate(messages)
        )
        end = None if k == last else len(messages)
        ends.append(end)
        if end is not None:
            laid.append(_NEUTRAL)  # the refused request's slot
        here: list[int] = []
        first_new = 1 + carried if k else 0
        for call in call_inputs(messages, settings, counter, at_end=_NO_ANSWER if end is not None else None):
            refused = call.index == end or refused_as_too_long(call.message)
            if call.index < first_new or (is_terminal_error(call.message) and not refused):
                continue
            calls.append(call)
            points.append(DevPoint(k, offsets[k] + call.index, refused=refused))
            here.append(call.index)
        local_calls.append(here)
    by_index: dict[int, SummaryRow] = {}
    reactive_rows: dict[int, SummaryRow] = {}
    matched: set[int] = set()
    era = 0
    for row in rows:  # oldest first
        for k in range(era, len(histories)):
            if row.compacted_at in local_calls[k]:
                era = k
                target = reactive_rows if row.compacted_at == ends[k] else by_index
                target[offsets[k] + row.compacted_at] = row
                matched.add(id(row))
                break
    for n, point in enumerate(points):
        k = point.history
        if n == 0 or points[n - 1].history == k or ends[k - 1] is None:
            continue
        summary = recovery_summary(histories[k - 1].messages, histories[k].messages)
        stored = reactive_rows.get(offsets[k - 1] + (ends[k - 1] or 0))
        if (
            stored is not None
            and summary is not None
            and stored.compact_up_to_index == summary.compact_up_to_index
        ):
            summary = ActiveSummary.from_row(stored)
        points[n] = replace(point, reactive=summary, reactive_id=stored.summary_id if stored else None)
    record = dev_record(laid, (), [p.at for p in points])
    record = replace(
        record,
        rows_by_index=by_index,
        off_history=tuple(r for r in rows if id(r) not in matched),
    )
    return DevWalk(tuple(calls), tuple(points), record, tuple(histories))


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
    points: Sequence[DevPoint] | None = None,
) -> tuple[tuple[DevStep, ...], int]:
    """Dev's walk along the calls under `settings`, and how many rows and notices it leaves unexplained.

    With no `record` every attempt with something to summarise succeeds (a replay under proposed
    settings); with one, an attempt succeeds where the record shows a compaction. `splitters` keeps each
    call's splitter across walks (the limit search walks many times); `give_up` stops at the first
    unexplained row or notice (the search only needs to know there is one). `points` place calls from
    several histories (dev_histories) on one record; without them every call is on one history.
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
    for n, call in enumerate(calls):
        i = call.index  # on its own history: where dev's cached summary applies
        point = points[n] if points is not None else DevPoint(0, i)
        g = point.at  # on the whole record: its rows and notices
        reactive = point.reactive is not None and point.reactive.summary_text != ""
        if point.reactive is not None:
            # The recovery's compaction before this call: a summary cached, the breaker closed.
            cache = (point.reactive, point.reactive_id)
            breaker = BreakerState()
            if record is not None:
                walk.claim_notice(g, compact_at)
        # Only calls before a notice can claim it: one behind us and unclaimed is unexplained for good.
        passed = sum(1 for k in notices if k < g and k not in walk.claimed)
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
        attempted = should and not breaker.open and not reactive
        row = record.rows_by_index.get(g) if record else None
        compacted, stored, split = reactive, point.reactive_id is not None or not reactive, False
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
            elif record is None or row is not None or _notice_says_compacted(walk, g, compact_at, up_to):
                if row is not None:
                    walk.claim_notice(g, compact_at)
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
                if opened and record is not None and walk.claim_notice(g, record.breaker_notices) is None:
                    walk.mismatches += 1
        elif row is not None:
            # A stored row where these settings would not have attempted: unexplained, yet the record.
            walk.mismatches += 1
            walk.claim_notice(g, compact_at)
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
                attempted=attempted or reactive,
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
    points: Sequence[DevPoint] | None = None,
) -> tuple[SettingsInForce, tuple[DevStep, ...]]:
    """The settings under which dev's walk explains every row and notice, and the walk under them:
    the configured (the config then, for the record) when it does, else the limit the rows suggest, a
    named model's, else the roundest."""
    config = configured.settings
    splitters: dict[int, CallSplitter] = {}

    def walk(settings: MemorySettings, give_up: bool = False) -> tuple[tuple[DevStep, ...], int]:
        return dev_steps(
            calls,
            settings,
            record,
            summary_chars=summary_chars,
            splitters=splitters,
            give_up=give_up,
            points=points,
        )

    tried: list[tuple[MemorySettings, str]] = [(config, configured.source)]
    if main_guess is not None:
        tried.append((replace(config, context_limit=main_guess.context_limit), "inferred from summaries"))
    for name, value in sorted(configured.known_limits.items(), key=lambda p: p[1]):
        tried.append((replace(config, context_limit=value), f"inferred from the record (matches {name})"))
    disagreements: list[str] = []
    # A failed attempt leaves no trace of its own: of the readings that explain the record, the one
    # with the fewest failed attempts (a summariser seldom fails), the first tried among equals.
    best: tuple[int, MemorySettings, str, tuple[DevStep, ...]] | None = None
    for settings, source in tried:
        steps, misses = walk(settings, give_up=True)  # a walk with nothing unexplained runs to the end
        if misses == 0 and (best is None or _failed(steps) < best[0]):
            best = (_failed(steps), settings, source, steps)
            if not best[0]:
                break
    if (best is None or best[0]) and config.fixed_trigger_tokens is None:
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
            if best is None or _failed(steps) < best[0]:
                best = (_failed(steps), settings, "inferred from the record", steps)
                if not best[0]:
                    break
    if best is not None:
        _, settings, source, steps = best
        if settings.context_limit != config.context_limit:
            disagreements.append(_needs(settings, configured))
        return _inference(calls, record, settings, source, disagreements), steps
    steps, misses = walk(config)
    disagreements.append(
        f"{_UNEXPLAINED} {misses} of the thread's summary rows and notices under Mycel dev's rules."
    )
    return _inference(calls, record, config, configured.source, disagreements), steps


def _failed(steps: Sequence[DevStep]) -> int:
    """Attempts that compacted nothing (the summariser failed) in a walk."""
    return sum(1 for step in steps if step.attempted and not step.compacted)


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
    points: Sequence[DevPoint] | None = None,
    histories: Sequence[DevHistory] = (),
) -> tuple[RecordedCall, ...]:
    """dev's walk in the shape of the record every screen reads, with what dev adds at call time
    (`request_time`, from the thread's messages) in each request's counts and sizes. With `points`
    and `histories` (dev_walk) each call reads its own history's holders and additions."""
    added_in = [RequestTimeIndex.of(h.messages) for h in histories]
    last = len(histories) - 1
    head_tiktoken = summary_head_tiktoken(counter)
    note_tiktoken = counter.count(STEER_NOTE) if counter is not None else 0
    segment = inference.segments[-1]
    settings = segment.settings
    out: list[RecordedCall] = []
    for position, (call, step) in enumerate(zip(calls, steps, strict=True)):
        sent_chars, sent, tiktoken = sent_size(call, step.summary, head_tiktoken)
        start = step.summary.compact_up_to_index if step.summary is not None else 0
        point = points[position] if points is not None else None
        index_of = added_in[point.history] if point is not None and added_in else request_time
        added = index_of.at(call.index, start) if index_of is not None else NOTHING_ADDED
        holders = histories[point.history].holding if point is not None and histories else holding
        if added.steer_note:
            sent_chars, sent = sent_chars + added.extra_chars, sent + added.extra_messages
            tiktoken = None if tiktoken is None else tiktoken + note_tiktoken
        out.append(
            RecordedCall(
                call=position + 1,
                index=call.index,
                checkpoint_id=holder_of(call.index, holders),
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
                provider_input_tokens=None
                if point is not None and point.refused
                else call.message.input_tokens,
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
                refused=point is not None and point.refused,
                earlier_history=point.history if point is not None and point.history < last else None,
            )
        )
    return tuple(out)


def dev_calls(
    histories: Sequence[DevHistory],
    rows: Sequence[SummaryRow],
    configured: Configured,
    main_guess: MemorySettings | None,
    *,
    summary_chars: int,
    counter: TokenCounter | None = None,
) -> tuple[tuple[RecordedCall, ...], SettingsInForce]:
    """A dev thread's calls from its record (every history it held, the head's last): the settings that
    explain it, and the walk under them."""
    walked = dev_walk(histories, rows, configured.settings, counter)
    calls, points, record = walked.calls, walked.points, walked.record
    # Without a row no summary's length is known, and it decides where the summarized view crosses the
    # trigger: of the lengths under which some limit explains every notice, one whose reading has the fewest
    # failed attempts (a summariser seldom fails; a compact notice marks only the run that compacted, so a
    # length too long moves a compaction to an earlier call of its run and reads a failure after it).
    readings: dict[int, tuple[bool, int, SettingsInForce, tuple[DevStep, ...]]] = {}

    def read(size: int) -> tuple[bool, int, SettingsInForce, tuple[DevStep, ...]]:
        if size not in readings:
            inference, steps = dev_settings_in_force(
                calls, record, configured, main_guess, summary_chars=size, points=points
            )
            unexplained = bool(inference.disagreements) and inference.disagreements[-1].startswith(
                _UNEXPLAINED
            )
            readings[size] = (not unexplained, _failed(steps), inference, steps)
        return readings[size]

    sizes = (summary_chars,) if rows else (summary_chars, *UNKNOWN_SUMMARY_SIZES)
    for size in sizes:
        explained, failed, _, _ = read(size)
        if explained and not failed:
            break
    explained_sizes = [n for n in readings if readings[n][0]]
    size = min(explained_sizes, key=lambda n: readings[n][1]) if explained_sizes else sizes[-1]
    if not rows and readings[size][0] and readings[size][1]:
        size = _shorter_without_failure(read, size, [n for n in sizes if n < size])
    _, _, inference, steps = read(size)

    def recorded_at(steps: Sequence[DevStep], inference: SettingsInForce) -> tuple[RecordedCall, ...]:
        return dev_recorded_calls(
            calls, steps, inference, counter=counter, points=points, histories=histories
        )

    recorded = recorded_at(steps, inference)
    if rows or not any(step.compacted and not step.stored for step in steps):
        return recorded, inference
    # The provider's counts are a trace of the unstored summaries' size: taken before any guess.
    inputs = [histories[point.history].messages for point in points]
    measured = measured_summaries(recorded, inputs, counter)
    ratio = chars_per_token(histories[-1].messages, counter) if counter is not None else None
    estimate = None
    if measured is not None and ratio is not None:
        estimate = estimated_chars(measured, ratio)
        size = _nearest_explaining(read, estimate, size)
        _, _, inference, steps = read(size)
        recorded = recorded_at(steps, inference)
        measured = measured_summaries(recorded, inputs, counter) or measured
    if measured is None or counter is None:
        note = _assumed(size, sizes)
    else:
        recorded = with_measured(recorded, measured, counter)
        note = measured_note(measured, size, ratio, estimate)
    return recorded, replace(inference, assumed=(*inference.assumed, note))


def _shorter_without_failure(
    read: Callable[[int], tuple[bool, int, SettingsInForce, tuple[DevStep, ...]]],
    size: int,
    shorter: Sequence[int],
) -> int:
    """Halve the way from `size` (its reading explains the notices, with failed attempts) toward the next
    shorter candidate (none: a tenth of it) for a length whose reading explains them with fewer: a
    length too long reads failures, one too short leaves notices unexplained (SIZE_STEPS halvings)."""
    high, low, best = size, max(shorter, default=size // 10), size
    for _ in range(SIZE_STEPS):
        middle = (high + low) // 2
        if middle in (high, low):
            break
        explained, failed, _, _ = read(middle)
        if not explained:
            low = middle
            continue
        high = middle
        if failed < read(best)[1]:
            best = middle
        if not failed:
            break
    return best


def _nearest_explaining(
    read: Callable[[int], tuple[bool, int, SettingsInForce, tuple[DevStep, ...]]], estimate: int, size: int
) -> int:
    """The length nearest `estimate` that reads the record as `size` does (which explains every notice):
    every notice explained, no more failed attempts, the same context limit (a length and a limit trade
    off against each other; the limit is the one inferred without the estimate). Halving the way."""
    _, failed, inference, _ = read(size)
    limit = inference.segments[-1].settings.context_limit

    def same(length: int) -> bool:
        ok, more, reading, _ = read(length)
        return ok and more <= failed and reading.segments[-1].settings.context_limit == limit

    good, bad = size, estimate
    while abs(good - bad) > 1:
        middle = (good + bad) // 2
        good, bad = (middle, bad) if same(middle) else (good, middle)
    return bad if same(bad) else good


def _assumed(size: int, sizes: Sequence[int]) -> str:
    tried = ", ".join(f"{n:,}" for n in sizes)
    return (
        "No summary row holds the text of this thread's summaries (dev kept them in memory only), so their "
        f"length is assumed: {size:,} characters, a length under which dev's rules explain every compact notice "
        f"with the fewest failed attempts ({tried} tried, then halved between the nearest two). The requests "
        "after a compaction measure that length, and a compaction is placed within its run by it (a notice "
        "marks only the run)."
    )


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
