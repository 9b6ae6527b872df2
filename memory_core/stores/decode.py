"""Safe decoding of LangGraph's serialized blobs into plain data.

LangGraph's own `JsonPlusSerializer` imports whatever class a blob names; on data we did not write that
can run code. Here every msgpack extension becomes a plain dict or value, and pickle is refused.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import ormsgpack

# Extension codes of langgraph.checkpoint.serde.jsonplus (reference §2.1).
EXT_CONSTRUCTOR_SINGLE_ARG = 0  # UUID, Decimal, set, Enum, ZoneInfo…
EXT_CONSTRUCTOR_POS_ARGS = 1  # Path, timedelta, date, Send…
EXT_CONSTRUCTOR_KW_ARGS = 2  # namedtuple, dataclass, time…
EXT_METHOD_SINGLE_ARG = 3  # datetime.fromisoformat
EXT_PYDANTIC_V1 = 4
EXT_PYDANTIC_V2 = 5
EXT_NUMPY_ARRAY = 6

_OPTIONS = ormsgpack.OPT_NON_STR_KEYS

# A PostgreSQL checkpoint (AsyncPostgresSaver) is its JSONB row plus one (type, bytes) blob per channel
# version in `checkpoint_blobs`. The Postgres backend packs both into one payload of this type, so the
# payload stays a (type, bytes) pair that the memos can hash and this decoder can read like any other.
POSTGRES_CHECKPOINT = "postgres-checkpoint"

# Deeper data is refused: everything downstream (redaction, message building, templates, json.dumps)
# recurses, and a blob nested hundreds of levels deep raised RecursionError past the reader (found by
# tests/core/test_decoder_fuzz.py). Real checkpoints nest about a dozen levels.
MAX_NESTING = 100
_CONTAINERS = (dict, list)  # exactly what ormsgpack and json build
_PLAIN_KEYS = frozenset({str, int, float, bool, bytes, type(None)})


class UnreadableBlob(ValueError):
    """A blob we cannot or will not decode; the message says why in plain words."""


def _unpack(data: bytes) -> Any:
    return ormsgpack.unpackb(data, ext_hook=_EXT_HOOKS[0], option=_OPTIONS)


def _ext_hook(depth: int) -> Callable[[int, bytes], Any]:
    """The extension hook for payloads nested `depth` extensions deep. Each ext payload is unpacked by a
    fresh call, which restarts ormsgpack's own depth limit: the depth is counted here instead, carried by
    which hook runs (one per depth, built once), so no per-call state is kept."""
    if depth >= MAX_NESTING:
        return lambda code, data: {"__ext__": code, "bytes": len(data)}

    def hook(code: int, data: bytes) -> Any:
        try:
            payload = ormsgpack.unpackb(data, ext_hook=_EXT_HOOKS[depth + 1], option=_OPTIONS)
        except Exception:
            return {"__ext__": code, "bytes": len(data)}
        return _plain_ext(code, payload)

    return hook


def _plain_ext(code: int, payload: Any) -> Any:
    if type(payload) is not list or len(payload) < 2:
        return {"__ext__": code, "payload": payload}
    module, name = payload[0], payload[1]
    rest = payload[2] if len(payload) > 2 else None
    if code in (EXT_PYDANTIC_V1, EXT_PYDANTIC_V2, EXT_CONSTRUCTOR_KW_ARGS) and type(rest) is dict:
        return {"__class__": name, "__module__": module, **rest}
    if code == EXT_CONSTRUCTOR_SINGLE_ARG and (module, name) == ("uuid", "UUID") and isinstance(rest, str):
        try:
            return str(uuid.UUID(rest))
        except ValueError:
            return rest
    if code in (EXT_CONSTRUCTOR_SINGLE_ARG, EXT_METHOD_SINGLE_ARG):
        # datetime → its ISO string, UUID → its text, set → a list, Enum → its value.
        return rest
    if code == EXT_CONSTRUCTOR_POS_ARGS:
        return {"__class__": name, "__module__": module, "args": rest}
    return {"__ext__": code, "payload": payload}


_EXT_HOOKS = [_ext_hook(depth) for depth in range(MAX_NESTING + 1)]


def _skip_ext(code: int, data: bytes) -> None:
    return None


def _shallow(value: Any, what: str) -> Any:
    """`value` itself once no list or map in it nests deeper than MAX_NESTING and every map key is plain
    (with OPT_NON_STR_KEYS a map keyed by an array decodes with a tuple key: it becomes its repr); raise
    UnreadableBlob. One walk, level by level, so it never recurses itself."""
    level = [value] if type(value) in _CONTAINERS else []
    for _ in range(MAX_NESTING):
        deeper: list[Any] = []
        for node in level:
            if type(node) is dict:
                # The key types checked in C (map, issuperset): nearly every map has only text keys.
                if not _PLAIN_KEYS.issuperset(map(type, node)):
                    for key in [k for k in node if type(k) not in _PLAIN_KEYS]:
                        node[repr(key)] = node.pop(key)
                deeper += [v for v in node.values() if type(v) in _CONTAINERS]
            else:
                deeper += [v for v in node if type(v) in _CONTAINERS]
        if not deeper:
            return value
        level = deeper
    raise UnreadableBlob(f"{what} is nested deeper than {MAX_NESTING} levels")


def _as_bytes(blob: object, what: str) -> bytes:
    """The bytes of a column value. SQLite columns take any type: an INTEGER there would make bytes(n)
    allocate n zero bytes, and a REAL would raise TypeError past the reader."""
    if isinstance(blob, bytes | bytearray | memoryview):
        return bytes(blob)
    if isinstance(blob, str):
        return blob.encode("utf-8", "replace")
    raise UnreadableBlob(f"{what} is stored as {type(blob).__name__}, not as bytes")


def _from_lc_json(value: Any) -> Any:
    # Legacy "json" blobs spell objects as {"lc": 1, "type": "constructor", "id": [...], "kwargs": {...}}.
    if isinstance(value, list):
        return [_from_lc_json(v) for v in value]
    if not isinstance(value, dict):
        return value
    if value.get("lc") == 1 and value.get("type") == "constructor" and isinstance(value.get("id"), list):
        ids = value["id"]
        raw_kwargs = value.get("kwargs")
        kwargs: dict[str, Any] = raw_kwargs if isinstance(raw_kwargs, dict) else {}
        out = {k: _from_lc_json(v) for k, v in kwargs.items()}
        return {"__class__": str(ids[-1]) if ids else "", "__module__": ".".join(map(str, ids[:-1])), **out}
    return {k: _from_lc_json(v) for k, v in value.items()}


def decode_typed(type_: str | None, blob: bytes | None) -> Any:
    """Decode a (type, blob) pair as LangGraph stores it, into plain data; raise UnreadableBlob."""
    if type_ is None and blob is None:
        return None
    if type_ == "null":
        return None
    if blob is None:
        raise UnreadableBlob(f"a {type_!r} value without data")
    data = _as_bytes(blob, f"the {type_!r} value")
    if type_ in ("bytes", "bytearray"):
        return data
    if type_ == POSTGRES_CHECKPOINT:
        return _postgres_checkpoint(data)
    if type_ == "pickle":
        raise UnreadableBlob("pickle payloads are refused: unpickling untrusted data can run arbitrary code")
    if type_ == "msgpack":
        try:
            value = _unpack(data)
        except Exception as exc:
            if "recursion" in str(exc).lower():
                raise UnreadableBlob(
                    f"the msgpack value is nested deeper than {MAX_NESTING} levels"
                ) from None
            raise UnreadableBlob(f"damaged msgpack ({type(exc).__name__}: {exc})") from None
        return _shallow(value, "the msgpack value")
    if type_ == "json":
        try:
            parsed = json.loads(data)
        except RecursionError:
            raise UnreadableBlob(f"the JSON value is nested deeper than {MAX_NESTING} levels") from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise UnreadableBlob(f"damaged JSON ({exc})") from None
        return _from_lc_json(_shallow(parsed, "the JSON value"))
    raise UnreadableBlob(f"unknown serializer type {type_!r}")


def count_checkpoint_messages(type_: str | None, blob: bytes | None) -> int | None:
    """The length of a checkpoint's `messages` list without building any message (None if unreadable)."""
    if type_ != "msgpack" or blob is None:
        # A Postgres payload decodes every channel, not only `messages`: one head's worth of work.
        try:
            value = decode_typed(type_, blob)
        except UnreadableBlob:
            return None
    else:
        try:
            value = ormsgpack.unpackb(_as_bytes(blob, "the checkpoint"), ext_hook=_skip_ext, option=_OPTIONS)
        except Exception:
            return None
    if not isinstance(value, dict):
        return None
    channels = value.get("channel_values")
    if not isinstance(channels, dict):
        return None
    messages = channels.get("messages", [])
    return len(messages) if isinstance(messages, list) else None


def decode_metadata(blob: bytes | str | None) -> dict[str, Any]:
    """Checkpoint metadata: UTF-8 JSON text in a BLOB (reference §2.1); older savers used msgpack."""
    if blob is None:
        return {}
    data = _as_bytes(blob, "checkpoint metadata")
    try:
        value = json.loads(data)
    except RecursionError:
        raise UnreadableBlob(f"checkpoint metadata is nested deeper than {MAX_NESTING} levels") from None
    except (ValueError, UnicodeDecodeError):
        try:
            value = _unpack(data)
        except Exception:
            raise UnreadableBlob("checkpoint metadata is neither JSON nor msgpack") from None
    if not isinstance(value, dict):
        raise UnreadableBlob("checkpoint metadata is not a map")
    _shallow(value, "checkpoint metadata")
    return {str(k): v for k, v in value.items()}


def pack_postgres_checkpoint(
    checkpoint_json: bytes, blobs: list[tuple[str, str | None, bytes | None]]
) -> bytes:
    """The payload bytes of a Postgres checkpoint: its JSON text and (channel, type, bytes) per blob row."""
    return ormsgpack.packb({"checkpoint": checkpoint_json, "blobs": [list(b) for b in blobs]})


def _postgres_checkpoint(data: bytes) -> dict[str, Any]:
    # The envelope holds only maps, lists, text and bytes (we packed it): no extension can run here.
    try:
        envelope = ormsgpack.unpackb(data)
        checkpoint = json.loads(envelope["checkpoint"])
        blobs = envelope["blobs"]
    except RecursionError:
        raise UnreadableBlob(f"the checkpoint JSON is nested deeper than {MAX_NESTING} levels") from None
    except Exception as exc:
        raise UnreadableBlob(f"damaged Postgres checkpoint ({type(exc).__name__}: {exc})") from None
    if not isinstance(checkpoint, dict) or not isinstance(blobs, list):
        raise UnreadableBlob("the Postgres checkpoint is not a map with its blobs")
    _shallow(checkpoint, "the checkpoint JSON")
    inline = checkpoint.get("channel_values")
    channels: dict[str, Any] = dict(inline) if isinstance(inline, dict) else {}
    for channel, kind, blob in blobs:
        if kind == "empty":  # a channel listed in the versions with no value (aio.py `aput`)
            continue
        channels[str(channel)] = decode_typed(kind, blob)
    checkpoint["channel_values"] = channels
    return checkpoint
