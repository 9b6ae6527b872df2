"""One model call, exactly as Mycel handed it to the model: what it added at call time (dev's steer
note), the summary in its cache, then the stored messages from where that summary ends, each as pruned
at that call — from the record (memory_core.call_record), with the sizes Mycel, tiktoken and the provider
give it, and each change Mycel makes at call time with whether the record reproduces it."""

from __future__ import annotations

from dataclasses import dataclass

from memory_core.app.calls import ThreadCalls
from memory_core.call_record.calls import RecordedCall
from memory_core.messages import Message, MessageType
from memory_core.model_view import model_view
from memory_core.pruning import PruneAction
from memory_core.records import SummaryRow
from memory_core.rules.request_time import READ_AT, STEER_NOTE_MESSAGE, CallLine, call_lines
from memory_core.rules.steer import is_owner_steer
from memory_core.rules.summariser import SummariserRequest
from memory_core.tokens import content_chars, default_counter, estimate_message_tokens
from mycel_dashboard.screens.thread_detail.presenter import Badge, NoticeView, View, notice_of, pruning_badge

# Requests longer than this show each message's first characters, with the rest behind a disclosure.
PREVIEW_CHARS = 600


@dataclass(frozen=True, slots=True)
class RequestItem:
    """One message of the request, as sent."""

    position: int  # 1-based in the request, after the system prompt
    kind: str  # human, ai, tool, system, summary
    origin: int | None  # its index in the stored history (None for the summary and what was added)
    tool_name: str | None
    text: str
    chars: int  # what Mycel's estimate counts
    estimated_tokens: int
    badge: Badge | None
    notice: NoticeView | None = None  # one of Mycel dev's own notices, sent as a user turn
    added_at_call_time: bool = False  # Mycel added it to the request and never stored it
    owner_steer: bool = False  # what makes Mycel dev add its steer note
    provider_tokens: int | None = None  # an unstored summary's size by the provider's counts

    @property
    def preview(self) -> str:
        return self.text[:PREVIEW_CHARS]

    @property
    def long(self) -> bool:
        return len(self.text) > PREVIEW_CHARS


@dataclass(frozen=True, slots=True)
class CallPage:
    call: RecordedCall
    calls: int  # how many calls the thread has
    items: tuple[RequestItem, ...]
    reply: Message | None  # the AI message after this call's input (None: refused, nothing stored)
    summary_row: SummaryRow | None  # the row of the summary in front, when stored
    compaction_row: SummaryRow | None  # the row this call's compaction wrote, when stored
    system_prompt_tiktoken_gap: int | None  # provider count minus tiktoken of what is shown
    segment_words: str  # the context limits consistent with the record for this call's settings
    request_time: tuple[CallLine, ...] = ()  # each change Mycel makes at call time, at this call
    mycel_read_at: str = ""  # the branch and commit of Mycel's code those lines were read from
    summariser: tuple[SummariserRequest, ...] = ()  # what Mycel's summariser got before this call
    summarised_refused: bool = False  # ... the input of the call before, which the provider refused

    @property
    def previous(self) -> int | None:
        return self.call.call - 1 if self.call.call > 1 else None

    @property
    def next(self) -> int | None:
        return self.call.call + 1 if self.call.call < self.calls else None


def _kind(message: Message) -> str:
    return message.type.value if message.type is not MessageType.OTHER else "other"


def call_page(record: ThreadCalls, number: int) -> CallPage:
    """Call `number` (1-based) of the thread: its request message by message."""
    call = record.calls[number - 1]
    segment = record.inference.segments[call.segment]
    history = record.messages_of(call)
    messages = history[: call.index]
    view = model_view(messages, settings=segment.settings, summary=call.summary)
    tool_names = {
        c.id: c.name for m in messages if m.type is MessageType.AI for c in m.tool_calls if c.id and c.name
    }
    items: list[RequestItem] = []
    if call.request_time.steer_note:
        note = STEER_NOTE_MESSAGE
        items.append(
            RequestItem(
                position=1,
                kind=_kind(note),
                origin=None,
                tool_name=None,
                text=note.text,
                chars=content_chars(note.content),
                estimated_tokens=estimate_message_tokens(note),
                badge=None,
                added_at_call_time=True,
            )
        )
    for position, item in enumerate(view.items, start=len(items) + 1):
        message = item.message
        decision = item.decision
        badge = None
        if decision is not None and decision.action is not PruneAction.UNCHANGED:
            badge = pruning_badge(decision, View.SENT)
        items.append(
            RequestItem(
                position=position,
                kind="summary" if item.is_summary else _kind(message),
                origin=item.origin,
                tool_name=(message.name or tool_names.get(message.tool_call_id or ""))
                if message.type is MessageType.TOOL
                else None,
                text=message.text,
                chars=content_chars(message.content),
                estimated_tokens=estimate_message_tokens(message),
                badge=badge,
                notice=None if item.is_summary else notice_of(message),
                owner_steer=is_owner_steer(message),
                provider_tokens=call.summary_tokens if item.is_summary else None,
            )
        )
    by_id = {r.summary_id: r for r in record.summaries}
    compaction_row = record.inference.rows_by_index.get(call.index)
    gap = None
    if call.provider_input_tokens is not None and call.tiktoken_tokens is not None:
        gap = call.provider_input_tokens - call.tiktoken_tokens
    return CallPage(
        call=call,
        calls=len(record.calls),
        items=tuple(items),
        # A refused request has no answer; dev's terminal error after one is stored where it would be.
        reply=history[call.index] if call.index < len(history) else None,
        summary_row=by_id.get(call.summary_id) if call.summary_id else None,
        compaction_row=compaction_row,
        system_prompt_tiktoken_gap=gap,
        segment_words=segment.limits.words(),
        request_time=call_lines(record.rules, call.request_time),
        mycel_read_at=READ_AT[record.rules],
        summariser=record.summariser_texts(call),
        summarised_refused=number > 1 and record.calls[number - 2].refused,
    )


def tiktoken_encoding() -> str:
    return default_counter().encoding_name
