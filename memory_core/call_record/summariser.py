"""What Mycel's summariser got before each call of the record: the part of the call's input it summarised,
in the branch's request shape (memory_core.rules.summariser), sized without building its text.

Mycel summarises the pruned input of the call that compacts: the messages its split leaves out (dev's
split always keeps the newest), and a split turn's prefix in a second request. Under dev's rules a failed
attempt sent the first request and got no summary, and a prompt-too-long recovery summarised the input
the provider refused, right before the call that retried it. Only the calls that compacted or attempted
are sized, each from the per-message numbers of its history (memory_core.call_inputs): O(log n) a call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from memory_core.call_inputs import CallInput, call_inputs
from memory_core.call_record.calls import RecordedCall
from memory_core.compaction import compact_up_to_index, plan_compaction
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message, MessageType
from memory_core.rules.profile import RulesProfile
from memory_core.rules.summariser import (
    Conversation,
    SummariserRequest,
    planned_requests,
    summariser_requests,
)

# Stands in for the answer a refused request never got: its input is then the whole history.
_NO_ANSWER = Message(type=MessageType.AI)


def with_summariser_requests(
    calls: Sequence[RecordedCall],
    settings_of: Callable[[RecordedCall], MemorySettings],
    messages_of: Callable[[RecordedCall], Sequence[Message]],
    *,
    rules: RulesProfile,
) -> tuple[RecordedCall, ...]:
    """`calls` with each one's summariser requests."""
    dev = rules is RulesProfile.DEV
    inputs: dict[tuple[int, MemorySettings], dict[int, CallInput]] = {}

    def input_of(call: RecordedCall) -> tuple[CallInput | None, MemorySettings]:
        history, settings = messages_of(call), settings_of(call)
        key = (id(history), settings)
        if key not in inputs:
            inputs[key] = {c.index: c for c in call_inputs(history, settings, at_end=_NO_ANSWER)}
        return inputs[key].get(call.index), settings

    out = []
    previous: RecordedCall | None = None
    for call in calls:
        if call.compacted or (dev and call.attempted):
            planned = summarised_call(previous, call, dev=dev)
            found, settings = input_of(planned)
            if found is not None:
                requests = requests_at(found, settings, dev=dev, whole=call.compacted, rules=rules)
                call = replace(call, summariser=requests)
        out.append(call)
        previous = call
    return tuple(out)


def requests_at(
    found: CallInput, settings: MemorySettings, *, dev: bool, whole: bool, rules: RulesProfile
) -> tuple[SummariserRequest, ...]:
    """The requests of a compaction on `found`'s input (`whole`: it succeeded, so a split turn's prefix
    request was sent too); none when the split leaves fewer than two messages to summarise."""
    splitter = found.splitter()
    cut = splitter.cut(settings.effective_keep_recent_tokens, keep_newest=dev)
    total = found.index
    prefix = splitter.turn_prefix(cut, settings.context_limit) if cut else 0
    if compact_up_to_index(total, cut, total - cut, prefix) is None:
        return ()
    history = Conversation(cut, found.summary_text_chars(0, cut))
    turn = Conversation(prefix, found.summary_text_chars(cut, cut + prefix)) if whole and prefix else None
    return summariser_requests(history, turn, rules=rules)


def summarised_call(previous: RecordedCall | None, call: RecordedCall, *, dev: bool) -> RecordedCall:
    """Whose input the compaction before `call` summarised: a recovery's is the input the provider refused,
    right before the call that retried it."""
    return previous if dev and previous is not None and previous.refused else call


def requests_with_text(
    messages: Sequence[Message], settings: MemorySettings, *, dev: bool, whole: bool, rules: RulesProfile
) -> tuple[SummariserRequest, ...]:
    """requests_at's requests with their text, from a plan of `messages` (one call's input): a page that
    shows one compaction's requests builds them so."""
    requests = planned_requests(plan_compaction(messages, settings=settings, keep_newest=dev), rules=rules)
    return requests if whole else requests[:1]
