"""Which memory settings were in force while a thread ran, inferred from what Mycel stored.

Mycel stores no setting with a thread's history, but every summary row is a measurement of one: it was
written at the call whose input held `compacted_at` messages, so that call's pruned estimate was over
int(0.7 × limit); its `compact_up_to_index` is where the split landed, which pins keep_recent_tokens
(capped at int(0.4 × limit)); its split-turn flag says whether the kept part was over int(0.6 × limit).
A call with no row says the opposite of the first — unless Mycel compacted and failed to store the row (a
"database is locked" save is only logged). Each measurement is a set of context limits; intersecting
them, call after call, gives the limits consistent with the whole record. When no limit fits every row,
the settings changed: the thread is cut into segments, each with its own limit.

Rows are hard evidence (Mycel never invents one); a call without a row is soft (a save can fail). A call
without a row that contradicts the rows around it is a compaction whose summary was not stored when the
next call has a row again, and a change of settings when a run of such calls follows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial

from memory_core.call_inputs import CallInput, CallSplitter
from memory_core.call_record.intervals import UNBOUNDED, Limits, preimage
from memory_core.compaction import max_history_tokens
from memory_core.memory_settings import MemorySettings, compaction_trigger
from memory_core.records import SummaryRow

# Below this no model has ever had a window; Mycel's arithmetic is monotone in the limit above it.
MIN_LIMIT = 10
# A split-turn row's cut lies at one of the human messages before its compact_up_to_index; the nearest
# few are the only ones Mycel's walk can reach in practice (each costs a handful of binary searches).
_SPLIT_CANDIDATES = 8


@dataclass(frozen=True, slots=True)
class Segment:
    """Calls [first, last] (positions in the call list) run under one context limit."""

    first: int
    last: int
    limits: Limits  # every limit consistent with the evidence of these calls
    settings: MemorySettings  # what the reconstruction uses: the chosen limit and keep_recent_tokens
    source: str  # where the chosen limit comes from, in words
    rows: int  # summary rows among these calls
    kept_lowered: bool = False  # keep_recent_tokens stayed at an earlier, smaller model's cap


@dataclass(frozen=True, slots=True)
class SettingsInForce:
    segments: tuple[Segment, ...]
    rows_by_index: Mapping[int, SummaryRow]  # AI message index -> the row its call wrote
    off_history: tuple[SummaryRow, ...]  # rows written at no model call of this history
    not_stored: frozenset[int]  # AI message indices where Mycel compacted but stored no row
    disagreements: tuple[str, ...]  # where the config compared with could not have produced what is stored
    assumed: tuple[str, ...] = ()  # what the reading assumed where the store keeps no trace of it

    def segment_at(self, position: int) -> Segment:
        for segment in self.segments:
            if segment.first <= position <= segment.last:
                return segment
        return self.segments[-1]


@dataclass(frozen=True, slots=True)
class Configured:
    """What the config said for the thread — as it was at its newest call (the record's: `as_of`), or
    today's with a proposal (a what-if) — and the limits other named models have."""

    settings: MemorySettings
    source: str  # e.g. "models.json", "assumed default"
    known_limits: Mapping[str, int]  # e.g. {"leon:snug": 5500} from models.json and the pricing cache
    as_of: datetime | None = None  # the moment the config files were read as of; None: as they are now


def _keep(limit: int, base: int) -> int:
    """Mycel's set_context_limit: keep_recent_tokens lowered to int(0.4 × limit), never raised."""
    cap = int(limit * 0.4)
    return cap if base > cap > 0 else base


class _CallEvidence:
    """One call's measurements as sets of limits."""

    def __init__(self, call: CallInput) -> None:
        self.call = call
        self.pruned = call.pruned_tokens
        self._splitter: CallSplitter | None = None

    @property
    def splitter(self) -> CallSplitter:
        if self._splitter is None:
            self._splitter = self.call.splitter()
        return self._splitter

    def over_trigger(self) -> Limits:
        """Limits under which this call's pruned estimate is over the trigger."""
        return preimage(compaction_trigger, MIN_LIMIT, UNBOUNDED, at_most=self.pruned - 1)

    def _cut_is(self, cut: int, base: int) -> Limits:
        return preimage(
            lambda limit: -self.splitter.cut(_keep(limit, base)),
            MIN_LIMIT,
            UNBOUNDED,
            at_least=-cut,
            at_most=-cut,
        )

    def row_limits(self, row: SummaryRow, base: int) -> Limits:
        """Limits under which Mycel, with keep_recent_tokens `base` before the cap, writes exactly this row."""
        up_to, i = row.compact_up_to_index, self.call.index
        if not row.is_split_turn:
            where = self._cut_is(up_to, base)
            if i - up_to > 1 and where:
                keep = self.splitter.keep_tokens(up_to)
                where = where & preimage(max_history_tokens, MIN_LIMIT, UNBOUNDED, at_least=keep)
            return where & self.over_trigger()
        parts = []
        humans = [c for c in range(up_to - 1, 1, -1) if self.call.numbers.humans[c]][:_SPLIT_CANDIDATES]
        for cut in humans:
            if i - cut <= 1:
                continue
            where = self._cut_is(cut, base)
            if not where:
                continue
            over = preimage(
                max_history_tokens, MIN_LIMIT, UNBOUNDED, at_most=self.splitter.keep_tokens(cut) - 1
            )
            if not over:
                continue
            splitter = self.splitter
            prefix = preimage(
                partial(_turn_prefix, splitter, cut),
                over.low,
                over.high,
                at_least=up_to - cut,
                at_most=up_to - cut,
            )
            parts.append(where & over & prefix)
        return Limits.union(parts) & self.over_trigger()

    def no_row_floor(self, base: int) -> int:
        """The smallest limit under which this call writes no row: under the trigger, or a split that
        leaves fewer than two messages to summarise (Mycel then aborts and stores nothing)."""
        under = preimage(compaction_trigger, MIN_LIMIT, UNBOUNDED, at_least=self.pruned)
        aborts = preimage(
            lambda limit: -self.splitter.cut(_keep(limit, base)), MIN_LIMIT, UNBOUNDED, at_least=-1
        )
        return min(under.low if under else UNBOUNDED, aborts.low if aborts else UNBOUNDED)


def _turn_prefix(splitter: CallSplitter, cut: int, limit: int) -> int:
    return splitter.turn_prefix(cut, limit)


def rows_on_history(
    rows: Sequence[SummaryRow], call_indices: Sequence[int]
) -> tuple[dict[int, SummaryRow], tuple[SummaryRow, ...]]:
    """Each model call's row (compacted_at = the call's message count; the newest row when a rollback
    made Mycel compact the same count twice), and the rows no call of this history wrote."""
    at_calls = set(call_indices)
    by_index: dict[int, SummaryRow] = {}
    for row in rows:  # oldest first: a later row at the same count replaces an earlier one
        if row.compacted_at in at_calls:
            by_index[row.compacted_at] = row
    matched = {id(r) for r in by_index.values()}
    off = tuple(r for r in rows if id(r) not in matched)
    return by_index, off


@dataclass(slots=True)
class _Open:
    """The segment being built."""

    first: int
    plain: Limits  # consistent limits if keep_recent_tokens was capped from the config's value
    lowered: Limits  # ... if it kept an earlier segment's smaller value (Limits(()) for the first)
    floor: int | None  # that earlier value
    model: str | None  # the model its calls ran with (checkpoint metadata)
    rows: int = 0
    quiet: list[_CallEvidence] = field(default_factory=list)  # its calls without a row


def settings_in_force(
    calls: Sequence[CallInput],
    rows: Sequence[SummaryRow],
    configured: Configured,
    call_models: Sequence[str | None] = (),
) -> SettingsInForce:
    """Segments of calls with the settings that were in force, the rows each call wrote, and the calls
    where Mycel compacted without storing a row.

    A segment ends where the model the calls ran with changed (`call_models`, from the checkpoints), or
    where no single limit explains a row together with the rows before it. Today's config holds for the
    segments of the newest model whenever the rows allow it (the record's config is the config as it was
    then, never today's: no save made since can move it); a call it would have compacted without a row is
    then a summary that was not stored (a save can fail; a row is never invented).
    """
    base = configured.settings.keep_recent_tokens
    by_index, off = rows_on_history(rows, [c.index for c in calls])
    evidence = [_CallEvidence(c) for c in calls]
    models = list(call_models) + [None] * (len(calls) - len(call_models))
    newest_model = next((m for m in reversed(models) if m), None)
    segments: list[Segment] = []

    def opened(position: int, plain: Limits, lowered: Limits | None = None) -> _Open:
        floor = segments[-1].settings.effective_keep_recent_tokens if segments else base
        lower = floor < base
        return _Open(
            position,
            plain,
            (lowered or plain) if lower else Limits(()),
            floor if lower else None,
            models[position] if position < len(models) else None,
        )

    def close(current: _Open, last: int) -> None:
        if last >= current.first:
            newest = current.model is None or current.model == newest_model
            segments.append(_choose(current, last, configured, base, newest=newest))

    unexplained: list[SummaryRow] = []
    current = opened(0, Limits.between(MIN_LIMIT, UNBOUNDED))
    for position, item in enumerate(evidence):
        model = models[position]
        if position > current.first and model and current.model and model != current.model:
            close(current, position - 1)  # another model: Mycel rebuilt the agent's limit
            current = opened(position, Limits.between(MIN_LIMIT, UNBOUNDED))
        elif current.model is None:
            current.model = model
        row = by_index.get(item.call.index)
        if row is None:
            current.quiet.append(item)
            continue
        alone = item.row_limits(row, base)
        kept_floor = item.row_limits(row, current.floor) if current.floor else Limits(())
        if not alone and not kept_floor:
            # No limit at all makes Mycel's arithmetic write this row (other pruning settings, or a row
            # not Mycel's): it still says Mycel compacted here, but it says nothing of the limit.
            unexplained.append(row)
            continue
        plain = current.plain & alone
        lowered = current.lowered & kept_floor
        if plain or lowered:
            current.plain, current.lowered = plain, lowered
        else:  # no single limit explains this row and the ones before: the settings changed
            close(current, position - 1)
            current = opened(position, alone)
            if current.floor:
                current.lowered = item.row_limits(row, current.floor)
        current.rows += 1
    close(current, len(calls) - 1)
    if not segments:  # a thread without a model call: the config as it stands
        segments.append(_choose(current, -1, configured, base, newest=True))
    not_stored = _not_stored_by_arithmetic(segments, evidence, by_index)
    return SettingsInForce(
        segments=tuple(segments),
        rows_by_index=by_index,
        off_history=off,
        not_stored=frozenset(not_stored),
        disagreements=tuple(_disagreements(segments, configured, not_stored, off, calls, unexplained)),
    )


def _choose(current: _Open, last: int, configured: Configured, base: int, *, newest: bool) -> Segment:
    """The limit a segment is reconstructed with: the configured one (for the newest model) when its rows
    allow it;
    else, within what the rows allow and narrowed by its calls without a row, a named model's limit, else
    the roundest consistent number."""
    config = configured.settings
    limits = Limits.union([current.plain, current.lowered])
    if newest and (config.context_limit in limits or (current.rows == 0 and not limits.bounded)):
        chosen, source = config.context_limit, configured.source
    else:
        narrowed = limits
        for item in current.quiet:  # a call without a row was under the trigger, unless a save failed
            tighter = narrowed.at_least(item.no_row_floor(base))
            if tighter:
                narrowed = tighter
        named = [(name, value) for name, value in configured.known_limits.items() if value in narrowed]
        if named:
            name, chosen = min(named, key=lambda pair: pair[1])
            source = f"inferred from summaries (matches {name})"
        elif narrowed.bounded:
            chosen, source = narrowed.roundest(), "inferred from summaries"
        else:  # an earlier model's calls with no row: nothing bounds its limit from above
            chosen = max(narrowed.low, config.context_limit) if narrowed else config.context_limit
            source = "inferred from calls (at least)"
        limits = narrowed
    lowered = chosen not in current.plain and current.floor is not None
    keep = current.floor if lowered and current.floor else config.keep_recent_tokens
    settings = replace(config, context_limit=chosen, keep_recent_tokens=_keep(chosen, keep))
    return Segment(current.first, last, limits, settings, source, current.rows, kept_lowered=lowered)


def _not_stored_by_arithmetic(
    segments: Sequence[Segment], evidence: Sequence[_CallEvidence], by_index: Mapping[int, SummaryRow]
) -> set[int]:
    """Under each segment's chosen settings, the calls without a row at which Mycel compacted."""
    found = set()
    for segment in segments:
        settings = segment.settings
        for item in evidence[segment.first : segment.last + 1]:
            index = item.call.index
            if index in by_index or item.pruned <= settings.trigger_tokens:
                continue
            if item.splitter.cut(settings.effective_keep_recent_tokens) >= 2:
                found.add(index)
    return found


def config_words(configured: Configured) -> str:
    """How a line names the config it compares with: the one in force then, or today's."""
    return "today's config" if configured.as_of is None else "the config in force then"


def _disagreements(
    segments: Sequence[Segment],
    configured: Configured,
    not_stored: set[int],
    off: Sequence[SummaryRow],
    calls: Sequence[CallInput],
    unexplained: Sequence[SummaryRow] = (),
) -> list[str]:
    given = configured.settings.context_limit
    compared = config_words(configured)
    position_of = {c.index: n for n, c in enumerate(calls)}
    lines = []
    for segment in segments:
        span = f"calls {segment.first + 1}\u2013{segment.last + 1}" if len(segments) > 1 else "the thread"
        if segment.rows and given not in segment.limits:
            lines.append(
                f"The stored summaries of {span} need a context limit {segment.limits.words()}; "
                f"{compared} gives {given:,}."
            )
        elif (
            not segment.rows
            and segment.limits
            and segment.limits.low > given
            and segment.limits.bounded is False
            and segment.first
        ):
            lines.append(
                f"From call {segment.first + 1} no summary was stored although compaction was due: "
                f"the limit was {segment.limits.words()} from there on ({compared} gives {given:,})."
            )
        if segment.kept_lowered:
            lines.append(
                f"In {span}, keep_recent_tokens stayed at {segment.settings.keep_recent_tokens:,}, an earlier "
                "smaller model's cap: Mycel only ever lowers it."
            )
    if not_stored:
        numbers = ", ".join(str(position_of[i] + 1) for i in sorted(not_stored))
        lines.append(
            f"Mycel compacted at call{'s' if len(not_stored) > 1 else ''} {numbers} but no summary row is "
            "stored (a failed save is only logged)."
        )
    if unexplained:
        numbers = ", ".join(
            str(position_of[r.compacted_at] + 1) for r in unexplained if r.compacted_at in position_of
        )
        lines.append(
            f"The summary row{'s' if len(unexplained) > 1 else ''} of call{'s' if len(unexplained) > 1 else ''} "
            f"{numbers} could not have been written under any context limit with the pruning and "
            f"keep_recent settings of {compared}: those must have differed (the rows still mark where "
            "Mycel compacted)."
        )
    if off:
        lines.append(
            f"{len(off)} summary row{'s were' if len(off) > 1 else ' was'} written at a message count with no "
            "model call on this history (a failed call, or a branch rolled back)."
        )
    return lines
