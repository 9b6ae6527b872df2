"""A typed model of the LangChain messages Mycel keeps in its checkpoints.

Mycel decides by class name (HumanMessage, AIMessage, ToolMessage, SystemMessage); anything else is kept
as "other" so that nothing in a thread is ever dropped from view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

# Content as LangChain stores it: a string, or a list of blocks (dicts such as {"type": "text", "text": …}
# or bare strings).
Content = str | tuple[Any, ...]


class MessageType(StrEnum):
    HUMAN = "human"
    AI = "ai"
    TOOL = "tool"
    SYSTEM = "system"
    OTHER = "other"


_TYPE_ALIASES: dict[str, MessageType] = {
    "human": MessageType.HUMAN,
    "user": MessageType.HUMAN,
    "humanmessage": MessageType.HUMAN,
    "humanmessagechunk": MessageType.HUMAN,
    "ai": MessageType.AI,
    "assistant": MessageType.AI,
    "aimessage": MessageType.AI,
    "aimessagechunk": MessageType.AI,
    "tool": MessageType.TOOL,
    "toolmessage": MessageType.TOOL,
    "toolmessagechunk": MessageType.TOOL,
    "system": MessageType.SYSTEM,
    "systemmessage": MessageType.SYSTEM,
    "systemmessagechunk": MessageType.SYSTEM,
}


class UnknownMessageType(ValueError):
    """A message dict whose type is none of human/ai/tool/system (raised only when asked to be strict)."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str | None
    name: str
    args: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a thread, as stored (never pruned or summarised)."""

    type: MessageType
    content: Content = ""
    id: str | None = None
    name: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    usage_metadata: Mapping[str, Any] | None = None
    metadata: Mapping[str, Any] | None = None
    status: str | None = None
    raw_type: str = ""  # the type as the data spelled it, e.g. "FunctionMessage" for an OTHER message
    model_name: str | None = None  # the provider's response_metadata.model_name (AI messages), if stored

    @property
    def text(self) -> str:
        """The readable text: the string content, or the text of every block joined."""
        return text_of(self.content)

    @property
    def input_tokens(self) -> int | None:
        """Provider-reported input tokens of the call that produced this AI message, when recorded."""
        if not self.usage_metadata:
            return None
        value = self.usage_metadata.get("input_tokens")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def with_content(self, content: Content) -> Message:
        """A copy with other content (what Mycel's pruner does with copy.copy)."""
        return Message(
            type=self.type,
            content=content,
            id=self.id,
            name=self.name,
            tool_calls=self.tool_calls,
            tool_call_id=self.tool_call_id,
            usage_metadata=self.usage_metadata,
            metadata=self.metadata,
            status=self.status,
            raw_type=self.raw_type,
            model_name=self.model_name,
        )


def text_of(content: Any) -> str:
    """The readable text of message content: a string as is, or the text of every block joined.

    Bare string blocks count; a block whose "text" is not a string (or is missing) adds nothing.
    """
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list | tuple) else ():
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping):
            text = block.get("text")
            if isinstance(text, str):
                parts.append(text)
    return "".join(parts)


def message_type_of(raw: Mapping[str, Any]) -> MessageType:
    """The type of a LangChain message dict: its `type`, or the class name a decoder recorded."""
    for key in ("type", "__class__", "role"):
        value = raw.get(key)
        if isinstance(value, str):
            found = _TYPE_ALIASES.get(value.strip().lower())
            if found is not None:
                return found
    return MessageType.OTHER


def _content_of(value: Any) -> Content:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        return tuple(value)
    return str(value)


def _tool_calls_of(value: Any) -> tuple[ToolCall, ...]:
    if not isinstance(value, list | tuple):
        return ()
    calls: list[ToolCall] = []
    for item in value:
        if type(item) is not dict and not isinstance(item, Mapping):
            continue
        call_id = item.get("id")
        name = item.get("name")
        args = item.get("args")
        calls.append(
            ToolCall(
                id=call_id if isinstance(call_id, str) else None,
                name=name if isinstance(name, str) else "",
                args=args if type(args) is dict or isinstance(args, Mapping) else {},
            )
        )
    return tuple(calls)


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# The exact-type checks first: decoded messages hold plain dicts or nothing, and the Mapping ABC's check
# (a negative one for None included) cost more than the rest of building a Message.
def _optional_mapping(value: Any) -> Mapping[str, Any] | None:
    if value is None or type(value) is dict:
        return value
    return value if isinstance(value, Mapping) else None


def _response_model(value: Any) -> str | None:
    if value is None:
        return None
    return _optional_str(value.get("model_name")) if isinstance(value, Mapping) else None


def message_from_dict(raw: Mapping[str, Any], *, strict: bool = False) -> Message:
    """Build a Message from a LangChain message dict (model_dump form, or {"role", "content"} input form).

    With strict=True an unknown type raises UnknownMessageType; otherwise it becomes MessageType.OTHER.
    """
    kind = message_type_of(raw)
    get = raw.get
    raw_type = get("type") or get("__class__") or get("role") or ""
    if kind is MessageType.OTHER and strict:
        raise UnknownMessageType(f"unknown message type {raw_type!r}")
    return Message(
        type=kind,
        content=_content_of(get("content")),
        id=_optional_str(get("id")),
        name=_optional_str(get("name")),
        tool_calls=_tool_calls_of(get("tool_calls")) if kind is MessageType.AI else (),
        tool_call_id=_optional_str(get("tool_call_id")),
        usage_metadata=_optional_mapping(get("usage_metadata")),
        metadata=_optional_mapping(get("metadata")),
        status=_optional_str(get("status")),
        raw_type=raw_type if type(raw_type) is str else str(raw_type),
        model_name=_response_model(get("response_metadata")),
    )


def messages_from_dicts(raws: Sequence[Mapping[str, Any]], *, strict: bool = False) -> tuple[Message, ...]:
    """Build Messages from a list of LangChain message dicts."""
    return tuple(message_from_dict(raw, strict=strict) for raw in raws)
