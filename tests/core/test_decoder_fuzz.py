"""Fuzzing the checkpoint decoder: random bytes and mutated REAL blobs never raise past the stores' border.

The decoder functions may only raise UnreadableBlob (the reader turns it into "this checkpoint is
unreadable"); the reader API returns problems, never exceptions. Every call runs under a watchdog thread,
so a hang inside ormsgpack's native code fails the test instead of stalling it. Real blobs come from a
copy of the sample home's leon.db (written by Mycel) and from a small demo home (LangGraph's saver).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import closing
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import ormsgpack
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from memory_core import memo
from memory_core.records import ProblemKind
from memory_core.stores.checkpoints import decode_checkpoint, meta_from_row
from memory_core.stores.decode import (
    MAX_NESTING,
    UnreadableBlob,
    count_checkpoint_messages,
    decode_metadata,
    decode_typed,
)
from memory_core.stores.reader import MycelReader
from tests.core.store_builders import point_locations
from tests.support.sample_data import SAMPLE_HOME

T = TypeVar("T")

WATCHDOG_S = 5.0  # far above any real decode here (< 50 ms); only a hang reaches it
DECODER = hypothesis_settings(
    max_examples=400,
    deadline=2000,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
THROUGH_READER = hypothesis_settings(
    max_examples=30,
    deadline=4000,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# Values of other SQLite storage classes where a BLOB belongs (an INTEGER made bytes(n) allocate n bytes).
COLUMN_VALUES = st.one_of(st.text(max_size=64), st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=False))
PLAIN_TYPES = (dict, list, str, int, float, bool, bytes, type(None))
SERIALIZER_TYPES = ("msgpack", "json", "pickle", "bytes", "null", None, "no-such-serializer")

# Headers that declare far more data than follows (array/map/str/bin/ext with 32-bit lengths).
HUGE_HEADERS = (
    b"\xdd\xff\xff\xff\xff",
    b"\xdf\xff\xff\xff\xff",
    b"\xdb\xff\xff\xff\xff",
    b"\xc6\xff\xff\xff\xff",
    b"\xc9\xff\xff\xff\xff\x05",
    b"\xdc\xff\xff",
    b"\xde\xff\xff",
    b"\xda\xff\xff",
    b"\xc8\xff\xff\x00",
)

_POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="decoder-watchdog")


def watched(call: Callable[[], T], what: str) -> T:
    """Run `call` on the watchdog thread; a call still running after WATCHDOG_S fails the test."""
    future = _POOL.submit(call)
    try:
        return future.result(timeout=WATCHDOG_S)
    except FutureTimeout:
        pytest.fail(f"{what} did not return within {WATCHDOG_S} s (hang)")


def only_unreadable(call: Callable[[], T], what: str) -> T | None:
    """The value, or None when the call said UnreadableBlob; any other exception fails the test."""
    try:
        return watched(call, what)
    except UnreadableBlob as exc:
        assert str(exc), "an UnreadableBlob must say why"
        return None


def plain_nodes(value: Any) -> Iterator[Any]:
    stack = [value]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def assert_plain(value: Any) -> None:
    """Decoded data is plain: no object of a class named by the blob was ever built."""
    for node in plain_nodes(value):
        assert type(node) in PLAIN_TYPES, f"decoder built a {type(node).__name__}"


# -- real blobs -------------------------------------------------------------------------------------


class RealBlobs(list[tuple[str | None, bytes]]):
    """The real blobs, with a short repr: hypothesis prints fixtures in a falsifying example."""

    def __repr__(self) -> str:
        return f"<{len(self)} real blobs>"


def _blobs_of(db: Path) -> list[tuple[str | None, bytes]]:
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT type, checkpoint FROM checkpoints ORDER BY length(checkpoint)").fetchall()
        rows += conn.execute("SELECT type, value FROM writes WHERE value IS NOT NULL").fetchall()
        rows += conn.execute("SELECT 'json', metadata FROM checkpoints").fetchall()
    return [(kind, bytes(blob)) for kind, blob in rows if blob is not None]


@pytest.fixture(scope="module")
def real_blobs(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str | None, bytes]]:
    """Checkpoint payloads, write values and metadata from Mycel's own files and from a demo home."""
    from memory_core.demo import write_demo_home

    blobs: list[tuple[str | None, bytes]] = []
    copy = tmp_path_factory.mktemp("sample") / "leon.db"
    shutil.copyfile(SAMPLE_HOME / "leon.db", copy)
    blobs += _blobs_of(copy)
    demo = tmp_path_factory.mktemp("demo") / "home"
    write_demo_home(demo, seed=11, threads=3)
    blobs += _blobs_of(demo / "leon.db")
    # Keep the set varied but bounded: every small blob, and a spread of the large ones.
    small = [b for b in blobs if len(b[1]) <= 20_000]
    large = sorted((b for b in blobs if len(b[1]) > 20_000), key=lambda b: len(b[1]))[::4]
    assert len(small) > 100 and large, "the real homes should give many blobs"
    return RealBlobs(small + large)


# -- mutations --------------------------------------------------------------------------------------


def _ext_record(code: int, payload: bytes) -> bytes:
    size = len(payload)
    tag = code.to_bytes(1, "big", signed=True)
    if size < 256:
        return b"\xc7" + bytes([size]) + tag + payload
    if size < 65536:
        return b"\xc8" + size.to_bytes(2, "big") + tag + payload
    return b"\xc9" + size.to_bytes(4, "big") + tag + payload


def ext_nesting(depth: int, code: int = 1) -> bytes:
    """An ext whose payload is an array holding an ext … `depth` times: each ext restarts the unpacker."""
    inner = ormsgpack.packb(None)
    for _ in range(depth):
        inner = _ext_record(code, b"\x93" + ormsgpack.packb("m") + ormsgpack.packb("C") + inner)
    return inner


def wrap_in_checkpoint(value_bytes: bytes) -> bytes:
    """A checkpoint map whose channel_values.extra is `value_bytes` (already msgpack)."""
    return b"\x81\xaechannel_values\x82\xa8messages\x90\xa5extra" + value_bytes


@st.composite
def mutation(draw: st.DrawFn, blob: bytes, donor: bytes) -> bytes:
    kind = draw(
        st.sampled_from(("flip", "insert", "delete", "truncate", "splice_ext", "huge", "nest", "donor"))
    )
    at = draw(st.integers(0, len(blob)))
    if kind == "flip" and blob:
        at = min(at, len(blob) - 1)
        return blob[:at] + bytes([blob[at] ^ draw(st.integers(1, 255))]) + blob[at + 1 :]
    if kind == "insert":
        return blob[:at] + draw(st.binary(min_size=1, max_size=16)) + blob[at:]
    if kind == "delete":
        return blob[:at] + blob[at + draw(st.integers(1, 64)) :]
    if kind == "truncate":
        return blob[:at]
    if kind == "splice_ext":
        code = draw(st.one_of(st.integers(0, 6), st.integers(-128, 127)))
        start = draw(st.integers(0, len(donor)))
        payload = draw(st.one_of(st.binary(max_size=32), st.just(donor[start : start + 200])))
        return blob[:at] + _ext_record(code, payload) + blob[at:]
    if kind == "huge":
        header = draw(st.sampled_from(HUGE_HEADERS))
        return blob[:at] + header + blob[at + len(header) :]
    if kind == "nest":
        depth = draw(st.sampled_from((50, 99, 100, 101, 300, 600, 1000, 1100, 5000)))
        style = draw(st.sampled_from(("array", "map", "ext")))
        if style == "ext":
            return wrap_in_checkpoint(ext_nesting(min(depth, 1100), code=draw(st.sampled_from((1, 5)))))
        opener = b"\x91" if style == "array" else b"\x81\xa1k"
        return wrap_in_checkpoint(opener * depth + blob)
    start = draw(st.integers(0, len(donor)))
    return blob[:at] + donor[start : start + draw(st.integers(1, 500))] + blob[at:]


@st.composite
def damaged_blobs(draw: st.DrawFn, real: list[tuple[str | None, bytes]]) -> tuple[str | None, bytes]:
    """A real blob with 1–4 mutations, random bytes, or a deeply nested JSON text; sometimes mislabelled."""
    source = draw(st.sampled_from(("mutated", "mutated", "mutated", "random", "deep_json")))
    kind, blob = draw(st.sampled_from(real))
    if source == "random":
        blob = draw(st.binary(max_size=2048))
    elif source == "deep_json":
        depth = draw(st.integers(1, 3000))
        inner = b'{"a": ' * depth + b"1" + b"}" * depth
        blob = draw(st.sampled_from((b"[" * depth + b"]" * depth, inner)))
        kind = "json"
    else:
        for _ in range(draw(st.integers(1, 4))):
            _, donor = draw(st.sampled_from(real))
            blob = draw(mutation(blob, donor))
    if draw(st.integers(0, 9)) == 0:
        kind = draw(st.sampled_from(SERIALIZER_TYPES))
    return kind, blob


# -- the decoder on its own -------------------------------------------------------------------------


def check_every_decoder(kind: str | None, blob: Any) -> None:
    value = only_unreadable(lambda: decode_typed(kind, blob), "decode_typed")
    if value is not None:
        assert_plain(value)
    for redacted in (True, False):
        decoded = only_unreadable(
            partial(decode_checkpoint, kind, blob, redacted=redacted), "decode_checkpoint"
        )
        if decoded is not None:
            assert all(isinstance(m.text, str) for m in decoded.messages)
            assert_plain(dict(decoded.channels))
    count = watched(lambda: count_checkpoint_messages(kind, blob), "count_checkpoint_messages")
    assert count is None or count >= 0
    metadata = only_unreadable(lambda: decode_metadata(blob), "decode_metadata")
    if metadata is not None:
        assert_plain(metadata)
    row = watched(lambda: meta_from_row(("c", None, kind, 1, blob)), "meta_from_row")
    assert row.metadata_problem is not None or isinstance(row.metadata, dict)


@DECODER
@given(data=st.data())
def test_damaged_real_blobs_only_ever_raise_unreadable_blob(data: st.DataObject, real_blobs) -> None:
    kind, blob = data.draw(damaged_blobs(real_blobs))
    check_every_decoder(kind, blob)


@hypothesis_settings(max_examples=200, deadline=2000, database=None)
@given(kind=st.sampled_from(SERIALIZER_TYPES), blob=st.one_of(st.binary(max_size=4096), COLUMN_VALUES))
def test_random_bytes_and_other_column_types_only_ever_raise_unreadable_blob(
    kind: str | None, blob: Any
) -> None:
    check_every_decoder(kind, blob)


def test_every_real_blob_still_decodes(real_blobs) -> None:
    """The fuzz base is sound: undamaged blobs decode (the depth limit rejects nothing real)."""
    for kind, blob in real_blobs:
        if kind == "json":
            assert decode_metadata(blob)
        elif kind != "null":
            assert_plain(decode_typed(kind, blob))


# Regressions found by this fuzzing: each raised RecursionError past the border (a 500, or the whole
# leon.db reported as damaged because of one checkpoint's metadata).
REGRESSIONS = {
    "json array 5000 deep": ("json", b"[" * 5000 + b"]" * 5000),
    "json object 1000 deep": ("json", b'{"a": ' * 1000 + b"1" + b"}" * 1000),
    "msgpack array 500 deep (below ormsgpack's own limit)": (
        "msgpack",
        wrap_in_checkpoint(b"\x91" * 500 + b"\xc0"),
    ),
    "msgpack map 900 deep": ("msgpack", wrap_in_checkpoint(b"\x81\xa1k" * 900 + b"\xc0")),
    "message content 500 deep": (
        "msgpack",
        b"\x81\xaechannel_values\x81\xa8messages\x91\x82\xa4type\xa2ai\xa7content" + b"\x91" * 500 + b"\xc0",
    ),
    "ext inside array inside ext, 1100 deep": ("msgpack", wrap_in_checkpoint(ext_nesting(1100))),
}


@pytest.mark.parametrize("value", [10**12, 2.5, "text where a blob belongs"], ids=["integer", "real", "text"])
def test_other_column_types_are_refused_without_allocating(value: object) -> None:
    """Regression: bytes(10**12) tried to allocate a terabyte; a REAL raised TypeError past the reader."""
    for kind in ("msgpack", "json"):
        if isinstance(value, str):
            only_unreadable(lambda kind=kind: decode_typed(kind, value), "decode_typed")
        else:
            with pytest.raises(UnreadableBlob, match="stored as"):
                watched(lambda kind=kind: decode_typed(kind, value), "decode_typed")
    if not isinstance(value, str):
        with pytest.raises(UnreadableBlob, match="stored as"):
            decode_metadata(value)  # type: ignore[arg-type]
    assert watched(lambda: count_checkpoint_messages("msgpack", value), "count") is None or isinstance(
        value, str
    )


@pytest.mark.parametrize("case", REGRESSIONS, ids=list(REGRESSIONS))
def test_nesting_regressions_are_unreadable_not_a_crash(case: str) -> None:
    kind, blob = REGRESSIONS[case]
    check_every_decoder(kind, blob)
    if kind == "msgpack":
        with pytest.raises(UnreadableBlob, match="nested"):
            decode_checkpoint(kind, blob)


def test_metadata_nested_too_deep_is_a_checkpoint_problem() -> None:
    deep = (
        json.dumps({"step": 1, "writes": [[[[1]]]]}).encode()[:-1]
        + b', "x": '
        + b"[" * 3000
        + b"]" * 3000
        + b"}"
    )
    row = meta_from_row(("c", None, "msgpack", 1, deep))
    assert row.metadata == {} and row.metadata_problem and "nested" in row.metadata_problem


def test_nesting_up_to_the_limit_still_decodes() -> None:
    blob = wrap_in_checkpoint(b"\x91" * (MAX_NESTING - 4) + b"\xc0")
    decoded = decode_checkpoint("msgpack", blob)
    assert "extra" in decoded.channels


# -- through the reader: damaged rows in a real leon.db ----------------------------------------------


@pytest.fixture(scope="module")
def damaged_home(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, list[str]]:
    """A copy of the sample home's leon.db (and queue/summary files) with one short thread to damage."""
    folder = tmp_path_factory.mktemp("damaged") / "home"
    folder.mkdir()
    for name in ("leon.db", "summary.db", "queue.db", "sandbox.db"):
        shutil.copyfile(SAMPLE_HOME / name, folder / name)
    thread_id = "m_0D8EzdJXJhk9-1"
    with closing(sqlite3.connect(folder / "leon.db")) as conn:
        ids = [
            r[0]
            for r in conn.execute(
                "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id",
                (thread_id,),
            )
        ]
    assert len(ids) >= 5
    return folder, thread_id, ids


@THROUGH_READER
@given(data=st.data())
def test_reader_reports_damaged_rows_and_still_shows_the_rest(
    data: st.DataObject, damaged_home: tuple[Path, str, list[str]], real_blobs
) -> None:
    folder, thread_id, ids = damaged_home
    target = data.draw(st.sampled_from(ids))
    kind, blob = data.draw(damaged_blobs(real_blobs))
    # SQLite columns take any type: a payload stored as TEXT, INTEGER or REAL instead of a BLOB.
    stored: object = data.draw(st.one_of(st.just(blob), COLUMN_VALUES)) if data.draw(st.booleans()) else blob
    metadata = data.draw(st.one_of(st.none(), damaged_blobs(real_blobs).map(lambda b: b[1]), COLUMN_VALUES))
    db = folder / "leon.db"
    with closing(sqlite3.connect(db)) as conn:
        original = conn.execute(
            "SELECT type, checkpoint, metadata FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?",
            (thread_id, target),
        ).fetchone()
        conn.execute(
            "UPDATE checkpoints SET type = ?, checkpoint = ?, metadata = coalesce(?, metadata) "
            "WHERE thread_id = ? AND checkpoint_id = ?",
            (kind, stored, metadata, thread_id, target),
        )
        conn.commit()
    try:
        memo.reset()
        reader = MycelReader(point_locations(folder))
        listed = watched(reader.list_threads, "list_threads")
        assert thread_id in {row.thread_id for row in listed.value}
        assert len(listed.value) >= 6, "one damaged checkpoint must not hide the other threads"
        rows = watched(lambda: reader.list_checkpoints(thread_id), "list_checkpoints")
        assert [r.checkpoint_id for r in rows.value] == ids[::-1], "every checkpoint is still listed"
        assert all(p.kind is not ProblemKind.CORRUPT for p in rows.problems), rows.problems
        state = watched(lambda: reader.get_state(thread_id, target), "get_state")
        assert state.value is not None
        if not state.value.checkpoint.readable:
            assert any(p.kind is ProblemKind.UNREADABLE_CHECKPOINT for p in state.problems)
        watched(lambda: reader.get_thread(thread_id), "get_thread")
        watched(lambda: reader.get_state(thread_id), "get_state(head)")
    finally:
        with closing(sqlite3.connect(db)) as conn:
            conn.execute(
                "UPDATE checkpoints SET type = ?, checkpoint = ?, metadata = ? WHERE thread_id = ? AND checkpoint_id = ?",
                (*original, thread_id, target),
            )
            conn.commit()


def test_a_map_keyed_by_an_array_decodes_with_plain_keys() -> None:
    # Found by the fuzzer in CI: OPT_NON_STR_KEYS turns an array key into a tuple.
    blob = b"\x81\x92\x01\xa1a\xa1v"  # {[1, "a"]: "v"}
    value = decode_typed("msgpack", blob)
    assert_plain(value)
    assert value == {"(1, 'a')": "v"}
