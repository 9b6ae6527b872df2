"""The per-checkpoint series of a thread (message count, Mycel's estimate, tiktoken, provider tokens), fast.

Every SQLite checkpoint holds the whole message list, so decoding each one costs quadratic bytes (a
200-turn thread is ~560 MB). Instead we decode only a few checkpoints (roots, fork children, leaves) and
rebuild every other state from its parent plus the parent's `messages` writes, which hold just the new
messages of that step, applying LangGraph's add_messages rules. Each rebuilt leaf is then compared with
its real decoded payload (same types in order, same message sizes and ids); a lineage whose leaf does not
match is decoded checkpoint by checkpoint instead. Tests check the result equals decoding everything.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from memory_core.messages import Message, MessageType, text_of
from memory_core.stores.checkpoints import CheckpointMeta, decode_checkpoint, message_from_plain
from memory_core.stores.decode import UnreadableBlob, decode_typed
from memory_core.stores.redact import masked_texts
from memory_core.tokens import content_chars

REMOVE_ALL_MESSAGES = "__remove_all__"  # langgraph.graph.message.REMOVE_ALL_MESSAGES

TokenCount = Callable[[str], int]


class WriteRow(NamedTuple):
    checkpoint_id: str
    task_id: str
    task_path: str
    idx: int
    type: str | None
    value: bytes | None


@dataclass(frozen=True, slots=True)
class SeriesPoint:
    checkpoint_id: str
    messages: int | None
    estimated_tokens: int | None
    tiktoken_tokens: int | None
    input_tokens: int | None
    readable: bool = True
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class Series:
    points: Mapping[str, SeriesPoint]
    decoded: int  # checkpoint payloads decoded to build it
    rebuilt: int  # checkpoints rebuilt from writes
    fallbacks: int  # lineages whose rebuilt leaf did not match and were decoded instead


class _Entry(NamedTuple):
    id: str | None
    type: MessageType
    chars: int
    tokens: int | None
    input_tokens: int | None


class _State(NamedTuple):
    entries: list[_Entry]
    chars: int
    tokens: int | None


def _entry(message: Message, count: TokenCount | None) -> _Entry:
    return _Entry(
        id=message.id,
        type=message.type,
        chars=content_chars(message.content),
        # Counted as the pages show the text (secrets masked at the border), so both paths give one figure.
        tokens=count(text_of(masked_texts(message.content))) if count is not None else None,
        input_tokens=message.input_tokens if message.type is MessageType.AI else None,
    )


def _state(entries: list[_Entry]) -> _State:
    tokens: int | None = 0
    for e in entries:
        tokens = None if tokens is None or e.tokens is None else tokens + e.tokens
    return _State(entries, sum(e.chars for e in entries), tokens)


def _point(checkpoint_id: str, state: _State) -> SeriesPoint:
    input_tokens = None
    for e in reversed(state.entries):
        if e.type is MessageType.AI:
            input_tokens = e.input_tokens
            break
    return SeriesPoint(
        checkpoint_id=checkpoint_id,
        messages=len(state.entries),
        estimated_tokens=state.chars // 2,
        tiktoken_tokens=state.tokens,
        input_tokens=input_tokens,
    )


def _unreadable(checkpoint_id: str, problem: str) -> SeriesPoint:
    return SeriesPoint(checkpoint_id, None, None, None, None, readable=False, problem=problem)


def _is_remove(item: Any) -> str | None:
    """The id a RemoveMessage removes, else None."""
    if isinstance(item, Mapping) and (
        item.get("__class__") == "RemoveMessage" or item.get("type") == "remove"
    ):
        found = item.get("id")
        return found if isinstance(found, str) else ""
    return None


def _apply(parent: _State, items: Sequence[Any], count: TokenCount | None, seen_ids: set[str]) -> _State:
    """LangGraph's add_messages: same id replaces in place, RemoveMessage removes, otherwise append."""
    entries = list(parent.entries)
    appended_only = True
    index: dict[str, int] | None = None
    for item in items:
        if item is None:
            continue
        if isinstance(item, Mapping) and item.get("__class__") == "Overwrite":
            # LangGraph's Overwrite bypasses add_messages: the wrapped list becomes the channel value.
            value = item.get("value")
            entries = [
                _entry(message_from_plain(v, redacted=False), count) for v in value or [] if v is not None
            ]
            appended_only = False
            index = None
            continue
        removed = _is_remove(item)
        if removed is not None:
            appended_only = False
            entries = [] if removed == REMOVE_ALL_MESSAGES else [e for e in entries if e.id != removed]
            index = None
            continue
        entry = _entry(message_from_plain(item, redacted=False), count)
        if entry.id is not None and entry.id in seen_ids:
            if index is None:
                index = {e.id: i for i, e in enumerate(entries) if e.id is not None}
            at = index.get(entry.id)
            if at is not None:
                entries[at] = entry
                appended_only = False
                continue
        if entry.id is not None:
            seen_ids.add(entry.id)
            if index is not None:
                index[entry.id] = len(entries)
        entries.append(entry)
    if not appended_only:
        return _state(entries)
    added = entries[len(parent.entries) :]
    tokens = parent.tokens
    for e in added:
        tokens = None if tokens is None or e.tokens is None else tokens + e.tokens
    return _State(entries, parent.chars + sum(e.chars for e in added), tokens)


def _same(derived: _State, decoded: _State) -> bool:
    """Whether a rebuilt state carries the same messages as the decoded one.

    Parallel tasks of one step may land in another order than we guessed, and add_messages gives id-less
    inputs a fresh uuid when applying them; neither changes any number of the series. So: the same
    message types in order, the same multiset of (type, chars, tokens, input tokens), and every id we
    know present in the decoded state.
    """
    if len(derived.entries) != len(decoded.entries):
        return False
    if [e.type for e in derived.entries] != [e.type for e in decoded.entries]:
        return False
    if Counter(e[1:] for e in derived.entries) != Counter(e[1:] for e in decoded.entries):
        return False
    known = {e.id for e in decoded.entries}
    return all(e.id is None or e.id in known for e in derived.entries)


def _by_task(writes: Iterable[WriteRow]) -> tuple[dict[str, dict[tuple[str, str], list[Any]]], set[str]]:
    """Per checkpoint, per (task path, task id), the decoded write items in write order; and the
    checkpoints with a write that could not be decoded."""
    values: dict[str, dict[tuple[str, str], list[tuple[int, Any]]]] = defaultdict(lambda: defaultdict(list))
    broken: set[str] = set()
    for w in writes:
        try:
            value = decode_typed(w.type, w.value)
        except UnreadableBlob:
            broken.add(w.checkpoint_id)
            continue
        values[w.checkpoint_id][(w.task_path, w.task_id)].append((w.idx, value))
    out: dict[str, dict[tuple[str, str], list[Any]]] = {}
    for checkpoint_id, tasks in values.items():
        out[checkpoint_id] = {}
        for task, found in tasks.items():
            items: list[Any] = []
            for _idx, value in sorted(found, key=lambda v: v[0]):
                items.extend(value if isinstance(value, list) else [value])
            out[checkpoint_id][task] = items
    return out, broken


# Message classes add_messages keeps as they are written (a chunk is converted to its message first).
_KEPT_CLASSES = frozenset({"HumanMessage", "AIMessage", "ToolMessage", "SystemMessage"})
_KEPT_TYPES = frozenset({"human", "ai", "tool", "system"})
# langchain_core.messages.utils._create_message_from_message_type: the roles a message dict may name.
_ROLES = {
    "human": "human",
    "user": "human",
    "ai": "ai",
    "assistant": "ai",
    "system": "system",
    "developer": "system",
    "tool": "tool",
}
# The keys of a message dict we convert exactly; any other key becomes an additional kwarg (or, for
# response_metadata, status, example, a field) whose effect we do not replay: such a step is read from the head.
_DICT_KEYS = frozenset({"role", "type", "content", "name", "tool_call_id", "tool_calls", "id"})


def _plain_content(value: Any) -> Any:
    """The content a message gets from `value` (None and empty become ""), or None when pydantic would
    refuse or coerce it (a ToolMessage turns other content into text)."""
    if not value:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(block, str | Mapping) for block in value):
        return value
    return None


def _plain_calls(value: Any) -> list[Mapping[str, Any]] | None:
    """LangChain-form tool calls as given; None for OpenAI-form ones (`function`: their arguments are
    parsed) or any call AIMessage would refuse."""
    if not isinstance(value, list):
        return None
    for call in value:
        if not isinstance(call, Mapping) or "function" in call:
            return None
        call_id = call.get("id")
        if not isinstance(call.get("name"), str) or not isinstance(call.get("args"), Mapping):
            return None
        if call_id is not None and not isinstance(call_id, str):
            return None
    return value


def _from_message_dict(item: Mapping[str, Any]) -> dict[str, Any] | None:
    """What add_messages makes of a plain message dict (convert_to_messages: `role`, else `type`, names
    the class; `content` is required), as the message dict a head decode would read; None when it is not
    exactly one of the four message classes built from these keys alone."""
    if not item.keys() <= _DICT_KEYS or "content" not in item:
        return None
    role = item["role"] if "role" in item else item.get("type")
    if "role" in item and "type" in item:
        return None  # `type` would become an additional kwarg
    kind = _ROLES.get(role) if isinstance(role, str) else None
    content = _plain_content(item["content"])
    if kind is None or content is None:
        return None
    message: dict[str, Any] = {"type": kind, "content": content}
    for key in ("id", "name", "tool_call_id"):
        value = item.get(key)
        if value is not None and not isinstance(value, str):
            return None
        message[key] = value
    if kind == "tool":
        if message["tool_call_id"] is None:
            return None  # ToolMessage requires it: the step failed
        message["status"] = "success"  # ToolMessage's default, which a head decode reads
    if "tool_calls" in item and item["tool_calls"] is not None:
        calls = _plain_calls(item["tool_calls"])
        if calls is None:
            return None
        message["tool_calls"] = calls
    return message


def _as_appended(item: Any) -> Mapping[str, Any] | None:
    """`item` as the message dict add_messages appends (its id aside: add_messages gives an id-less one a
    fresh uuid), or None when it is not certainly one appended message: a chunk, a RemoveMessage, an
    Overwrite, an unknown role or class, a dict with keys we do not convert."""
    if isinstance(item, str):
        return {"type": "human", "content": item}  # convert_to_messages: a bare string is a human message
    if not isinstance(item, Mapping) or _is_remove(item) is not None:
        return None
    if "__class__" in item:  # a serialised message object
        if item["__class__"] not in _KEPT_CLASSES or item.get("type") not in _KEPT_TYPES:
            return None
        return item
    return _from_message_dict(item)


def appended_items(writes: Iterable[WriteRow], path: Sequence[str]) -> list[Mapping[str, Any]] | None:
    """The messages the `messages` writes stored under `path`'s checkpoints (oldest step first) add to
    the state, as message dicts for message_from_plain, when add_messages only appends them; None when the
    writes cannot say so exactly: a step with several tasks (their order is a guess), an undecodable
    write, an item `_as_appended` cannot convert exactly, or an id seen twice (a replacement). An id-less
    item is always an append (add_messages gives it a fresh id). A replacement of an id from before `path`
    is not seen here: the caller checks the resulting count."""
    by_task, broken = _by_task(writes)
    seen: set[str] = set()
    out: list[Mapping[str, Any]] = []
    for checkpoint_id in path:
        if checkpoint_id in broken:
            return None
        tasks = by_task.get(checkpoint_id, {})
        if len(tasks) > 1:
            return None
        for items in tasks.values():
            for item in items:
                if item is None:
                    continue
                message = _as_appended(item)
                if message is None:
                    return None
                found = message.get("id")
                if found is not None:
                    if not isinstance(found, str) or not found or found in seen:
                        return None
                    seen.add(found)
                out.append(message)
    return out


def _deltas(
    writes: Iterable[WriteRow], order_hint: Mapping[str, int]
) -> tuple[dict[str, list[Any]], set[str]]:
    """Per parent checkpoint, its decoded `messages` write items in application order.

    LangGraph applies a step's tasks sorted by task path. Newer savers store `task_path`; for Mycel's
    layout (none) we order tasks by where their messages sit in a decoded leaf, which is that order.
    Returns also the checkpoints whose writes could not be decoded.
    """
    by_task, broken = _by_task(writes)
    result: dict[str, list[Any]] = {}
    for checkpoint_id, tasks in by_task.items():
        deltas: list[tuple[tuple[Any, ...], list[Any]]] = []
        for (task_path, task_id), items in tasks.items():
            hint = min(
                (order_hint[i["id"]] for i in items if isinstance(i, Mapping) and i.get("id") in order_hint),
                default=1 << 60,
            )
            deltas.append(((task_path, hint, task_id), items))
        deltas.sort(key=lambda d: d[0])
        result[checkpoint_id] = [item for _key, items in deltas for item in items]
    return result, broken


def build_series(
    metas: Sequence[CheckpointMeta],
    writes: Iterable[WriteRow] | None,
    load_payload: Callable[[str], tuple[str | None, bytes | None]],
    *,
    count: TokenCount | None,
    decoded_before: Callable[[str, tuple[str | None, bytes | None]], Sequence[Message] | None] | None = None,
) -> Series:
    """The series for every checkpoint in `metas`; `writes` None means the thread has no usable writes.

    `decoded_before(checkpoint_id, payload)` may give the messages of a payload the caller decoded already
    (the head a page just read), so it is not decoded a second time.
    """
    ids = {m.checkpoint_id for m in metas}
    children: dict[str, list[str]] = defaultdict(list)
    parent_of: dict[str, str | None] = {}
    for m in metas:
        parent = m.parent_checkpoint_id if m.parent_checkpoint_id in ids else None
        parent_of[m.checkpoint_id] = parent
        if parent is not None:
            children[parent].append(m.checkpoint_id)
    source_of = {m.checkpoint_id: m.source for m in metas}
    decoded_states: dict[str, _State | str] = {}  # a state, or the reason it is unreadable
    decoded_count = 0

    def decode(checkpoint_id: str) -> _State | str:
        nonlocal decoded_count
        found = decoded_states.get(checkpoint_id)
        if found is not None:
            return found
        payload = load_payload(checkpoint_id)
        known = decoded_before(checkpoint_id, payload) if decoded_before is not None else None
        if known is not None:
            result: _State | str = _state([_entry(m, count) for m in known])
            decoded_states[checkpoint_id] = result
            return result
        decoded_count += 1
        try:
            messages = decode_checkpoint(*payload, redacted=False).messages
            result = _state([_entry(m, count) for m in messages])
        except UnreadableBlob as exc:
            result = str(exc)
        decoded_states[checkpoint_id] = result
        return result

    leaves = [m.checkpoint_id for m in metas if not children.get(m.checkpoint_id)]
    order_hint: dict[str, int] = {}
    for leaf in leaves:
        state = decode(leaf)
        if isinstance(state, _State):
            for position, e in enumerate(state.entries):
                if e.id is not None:
                    order_hint.setdefault(e.id, position)

    if writes is None:
        deltas: dict[str, list[Any]] = {}
        broken = set(ids)
    else:
        deltas, broken = _deltas(writes, order_hint)

    def is_anchor(checkpoint_id: str) -> bool:
        parent = parent_of[checkpoint_id]
        return (
            parent is None
            or parent in broken
            or len(children[parent]) > 1  # a fork: the parent's writes belong to one child only
            or source_of.get(checkpoint_id) == "fork"
        )

    points: dict[str, SeriesPoint] = {}
    derived: dict[str, _State] = {}
    seen_ids: set[str] = set()
    rebuilt = 0
    # Parents before children; uuid6 ids are time-ordered, but walk the tree to be independent of it.
    stack = [m.checkpoint_id for m in reversed(metas) if parent_of[m.checkpoint_id] is None]
    while stack:
        current = stack.pop()
        parent = parent_of[current]
        base = derived.get(parent) if parent is not None else None
        if parent is None or base is None or is_anchor(current):
            state = decode(current)
            if isinstance(state, _State):
                seen_ids.update(e.id for e in state.entries if e.id is not None)
        else:
            state = _apply(base, deltas.get(parent, []), count, seen_ids)
            rebuilt += 1
        if isinstance(state, _State):
            derived[current] = state
            points[current] = _point(current, state)
        else:
            points[current] = _unreadable(current, state)
        # Drop a parent's state once its last child is done: memory stays near one state per branch.
        if parent is not None and all(c in points for c in children[parent]):
            derived.pop(parent, None)
        stack.extend(reversed(children.get(current, [])))

    fallbacks = 0
    for leaf in leaves:
        real = decoded_states.get(leaf)
        if not isinstance(real, _State):
            points[leaf] = _unreadable(leaf, real if isinstance(real, str) else "not decoded")
            continue
        if leaf in derived and not _same(derived[leaf], real):
            fallbacks += 1
            node: str | None = leaf
            while node is not None:
                state = decode(node)
                points[node] = _point(node, state) if isinstance(state, _State) else _unreadable(node, state)
                if is_anchor(node):
                    break
                node = parent_of[node]
        points[leaf] = _point(leaf, real)
    return Series(points=points, decoded=decoded_count, rebuilt=rebuilt, fallbacks=fallbacks)


def naive_series(
    metas: Sequence[CheckpointMeta],
    load_payload: Callable[[str], tuple[str | None, bytes | None]],
    *,
    count: TokenCount | None,
) -> Series:
    """The same series by decoding every checkpoint (the slow reference the fast path is tested against)."""
    points: dict[str, SeriesPoint] = {}
    for m in metas:
        try:
            payload = decode_checkpoint(*load_payload(m.checkpoint_id), redacted=False)
        except UnreadableBlob as exc:
            points[m.checkpoint_id] = _unreadable(m.checkpoint_id, str(exc))
            continue
        points[m.checkpoint_id] = _point(
            m.checkpoint_id, _state([_entry(x, count) for x in payload.messages])
        )
    return Series(points=points, decoded=len(metas), rebuilt=0, fallbacks=0)
