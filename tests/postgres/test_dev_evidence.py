"""The record against Mycel dev's own evidence threads (tests/data/mycel-dev-evidence, issue 26): for every
call the scripted model received, the call the record shows, with the same messages (type and size, in
order) after the system prompt; and no call the model never received.

The threads were written by Mycel dev's own code through its own run path, only the chat model scripted
(generate.py beside the data says how): an owner steer during a run, prompt-too-long recoveries, a breaker
that opens and a compaction that later succeeds and closes it, compactions with no summary row.

Where the record does not yet reproduce what dev did, the case is an xfail(strict=True) naming what is
missing, so it flips the day the record learns it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from memory_core.app.calls import ThreadCalls, configured_for, thread_calls
from memory_core.app.thread import thread_facts
from memory_core.app.thread_settings import thread_memory_settings
from memory_core.compaction import SUMMARY_HEADER
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from memory_core.tokens import default_counter
from mycel_dashboard.screens.call.presenter import call_page
from tests.support.mycel_env import MYCEL_ENV
from tests.support.postgres import database_name
from tests.support.sample_data import DEV_EVIDENCE

LOG = json.loads((DEV_EVIDENCE / "driver_log.json").read_text())
TRUTH = {t["thread_id"]: t for t in json.loads((DEV_EVIDENCE / "truth.json").read_text())["threads"]}
# The scripted provider counts with cl100k_base (generate.py), as the record does offline.
COUNTER = default_counter()
THREADS = tuple(LOG["threads"])
# The call page names dev's summary message apart; the model got a system message.
_KIND = {"summary": "system"}


def _steps(thread_id: str) -> list[dict[str, Any]]:
    return [c for c in LOG["model_calls"] if c["thread"] == thread_id and c["kind"] == "step"]


@dataclass(frozen=True)
class Recorded:
    """One thread as the record shows it: `calls --json`'s calls and each call page's request."""

    calls: list[dict[str, Any]]  # what `mycel-memory calls --json` prints
    requests: list[list[list[Any]]]  # per call: [kind, chars] of each message after the system prompt
    provider_sized: list[list[int | None]]  # per call and message: an unstored summary's provider tokens
    replies: list[str | None]  # per call: the id of the AI message it produced (None: refused)
    refused: list[bool]  # per call: the provider refused it (prompt too long), so it produced none
    notes: list[str]  # what the record says it assumed (`thread --json`'s memory.assumed)


@pytest.fixture(scope="module")
def recorded(pg_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Recorded]]:
    """Every evidence thread read once through the record (a database loaded from dump.sql)."""
    url = pg_server.create_database(database_name("dev_evidence"))
    pg_server.load_sql(url, DEV_EVIDENCE / "dump.sql")
    home = tmp_path_factory.mktemp("dev-evidence")
    shutil.copy(DEV_EVIDENCE / "leon.db", home / "leon.db")  # dev's SQLite summaries; never opened in place
    with pytest.MonkeyPatch.context() as env:
        for name in MYCEL_ENV:
            env.delenv(name, raising=False)
        env.setenv("HOME", str(home))
        env.setenv("LEON_POSTGRES_URL", url)
        env.setenv("LEON_DB_PATH", str(home / "leon.db"))
        env.setenv("MYCEL_CONFIG_HOME", str(home))
        reader = MycelReader(resolve_locations())
        yield {thread_id: _read(reader, thread_id) for thread_id in THREADS}


def _read(reader: MycelReader, thread_id: str) -> Recorded:
    row = reader.get_thread(thread_id).value
    assert row is not None, thread_id
    locations = reader.locations
    record: ThreadCalls = thread_calls(
        reader,
        row,
        configured_for(locations, thread_memory_settings(locations, row)),
        counter=default_counter(),
    )
    pages = [call_page(record, n) for n in range(1, len(record.calls) + 1)]
    requests = [[[_KIND.get(item.kind, item.kind), item.chars] for item in page.items] for page in pages]
    provider_sized = [[item.provider_tokens for item in page.items] for page in pages]
    memory = thread_facts(reader, row)["memory"]
    return Recorded(
        calls=memory["calls"],
        notes=memory["assumed"],
        requests=requests,
        provider_sized=provider_sized,
        replies=[None if c.refused else record.messages_of(c)[c.index].id for c in record.calls],
        refused=[c.refused for c in record.calls],
    )


# -- what the record does not reproduce yet (issue 26), call by call ---------------------------------------

DIFFERS: dict[tuple[str, int], str] = {}
# Prompt-too-long recoveries, refused requests, dev's terminal error and the breaker across a rewrite are
# reproduced (memory_core.rules.dev_recovery, memory_core.call_record.dev_calls.dev_walk): no xfail.
THREAD_DIFFERS: dict[str, str] = {}
COMPACTIONS_DIFFER: dict[str, str] = {}


def _xfail(reason: str | None) -> tuple[pytest.MarkDecorator, ...]:
    return (pytest.mark.xfail(strict=True, reason=reason),) if reason else ()


# -- every call the model answered ---------------------------------------------------------------------


def _answered() -> list[Any]:
    return [
        pytest.param(
            thread_id, number, id=f"{thread_id}/call-{number}", marks=_xfail(DIFFERS.get((thread_id, number)))
        )
        for thread_id in THREADS
        for number, seen in enumerate(_steps(thread_id), start=1)
        if seen["step_action"] == "ok"
    ]


@pytest.mark.parametrize(("thread_id", "number"), _answered())
def test_each_answered_call_is_in_the_record_as_the_model_received_it(
    recorded: dict[str, Recorded], thread_id: str, number: int
) -> None:
    seen = _steps(thread_id)[number - 1]
    record = recorded[thread_id]
    assert seen["out_id"] in record.replies, f"no call of the record produced {seen['out_id']}"
    at = record.replies.index(seen["out_id"])
    assert seen["sent"][0][0] == "system"  # Mycel's system prompt: never stored, counted not shown
    assert record.calls[at]["request_messages"] == seen["n_in"]
    unstored = _unstored_summaries(thread_id, seen)
    # A summary no store holds is sized by the provider's counts, in tokens: its characters are estimated.
    assert [n for n, tokens in enumerate(record.provider_sized[at]) if tokens is not None] == list(unstored)
    assert [record.provider_sized[at][n] for n in unstored] == list(unstored.values())
    sent = [kind_chars for n, kind_chars in enumerate(seen["sent"][1:]) if n not in unstored]
    assert [item for n, item in enumerate(record.requests[at]) if n not in unstored] == sent
    assert [record.requests[at][n][0] for n in unstored] == [seen["sent"][1 + n][0] for n in unstored]


def _unstored_summaries(thread_id: str, seen: dict[str, Any]) -> dict[int, int]:
    """The summaries the model got that no store holds (the thread has no summary row: dev kept them in
    memory), by position after the system prompt, with their tokens as the scripted provider counted."""
    if TRUTH[thread_id]["summaries"]:
        return {}
    return {
        n: COUNTER.count(m["text"])
        for n, m in enumerate(seen["messages"][1:])
        if m["type"] == "system" and m.get("text", "").startswith(SUMMARY_HEADER)
    }


# -- and only those --------------------------------------------------------------------------------------


@pytest.mark.parametrize("thread_id", [pytest.param(t, marks=_xfail(THREAD_DIFFERS.get(t))) for t in THREADS])
def test_the_record_has_a_call_for_every_request_and_no_other(
    recorded: dict[str, Recorded], thread_id: str
) -> None:
    seen = _steps(thread_id)
    record = recorded[thread_id]
    answered = [c["out_id"] for c in seen if c["step_action"] == "ok"]
    made = [r for r, refused in zip(record.replies, record.refused, strict=True) if not refused]
    assert [r for r in made if r not in answered] == []  # no call the model never made
    assert len(record.calls) == len(seen)  # refused requests are calls the model received too
    assert record.refused == [c["step_action"] != "ok" for c in seen]  # ... and where it refused them


def test_a_summary_the_store_does_not_hold_is_sized_by_the_providers_counts_and_said_so(
    recorded: dict[str, Recorded],
) -> None:
    # Dev kept m_evNoSumRow26-1's summaries in memory only: the record sizes them by the provider's counts
    # (exactly, in tokens: the scripted provider counts with the record's encoding) and says its characters
    # are estimated; every other thread's summaries are stored rows, measured as they are.
    said = {t: [n for n in r.notes if "No summary row holds" in n] for t, r in recorded.items()}
    assert {t for t, lines in said.items() if lines} == {"m_evNoSumRow26-1"}
    [line] = said["m_evNoSumRow26-1"]
    texts = [
        m["text"]
        for c in _steps("m_evNoSumRow26-1")
        for m in c["messages"]
        if m.get("text", "").startswith(SUMMARY_HEADER)
    ]
    received = [
        COUNTER.count(text) for text in dict.fromkeys(texts)
    ]  # each summary, in the order dev sent it
    assert len(received) == 3
    assert f"give their size: {', '.join(f'{n:,}' for n in received)} tokens" in line
    assert "fitted exactly" in line and "every call agrees" in line and "stored nowhere" in line
    record = recorded["m_evNoSumRow26-1"]
    assert {c["summary_tokens_by_provider"] for c in record.calls if not c["summary_stored"]} == set(received)
    [agent] = [a for a in LOG["actions"] if a["action"] == "agent" and a["thread"] == "m_evNoSumRow26-1"]
    assert {c["context_limit"] for c in record.calls} == {agent["context_limit"]}  # the limit dev had
    # The estimate of its characters is near what the model got (595, and 23 for the header).
    estimated = {
        r[n][1]
        for r, sized in zip(record.requests, record.provider_sized, strict=True)
        for n, t in enumerate(sized)
        if t
    }
    assert len(estimated) == 1 and abs(estimated.pop() - 618) <= 618 * 0.05


# -- where dev called its summariser, and the breaker after each call ------------------------------------


def _dev_memory(thread_id: str) -> dict[str, tuple[bool, bool, dict[str, Any]]]:
    """Per answered call (by the id of its answer): dev called the summariser for it, a summary came back,
    and dev's breaker when the model got the request."""
    out: dict[str, tuple[bool, bool, dict[str, Any]]] = {}
    summaries: list[str] = []
    for call in (c for c in LOG["model_calls"] if c["thread"] == thread_id):
        if call["kind"] != "step":
            summaries.append(call["summary_action"])
            continue
        if call["step_action"] == "ok":
            out[call["out_id"]] = (bool(summaries), "ok" in summaries, call["breaker"])
        summaries = []
    return out


@pytest.mark.parametrize(
    "thread_id", [pytest.param(t, marks=_xfail(COMPACTIONS_DIFFER.get(t))) for t in THREADS]
)
def test_compactions_attempts_and_breaker_are_where_dev_had_them(
    recorded: dict[str, Recorded], thread_id: str
) -> None:
    dev = _dev_memory(thread_id)
    record = recorded[thread_id]
    assert set(record.replies) >= set(dev)
    shown = {
        reply: (c["attempted"] or c["compacted"], c["compacted"], c["breaker"])
        for reply, c in zip(record.replies, record.calls, strict=True)
        if reply in dev
    }
    assert shown == dev


# -- what dev's summariser received before each call ---------------------------------------------------


def _summariser_calls(thread_id: str) -> list[list[dict[str, Any]]]:
    """Per step call, in order: the summariser requests dev made before it (its messages' kinds and sizes,
    the output cap, what came back)."""
    out: list[list[dict[str, Any]]] = []
    pending: list[dict[str, Any]] = []
    for call in (c for c in LOG["model_calls"] if c["thread"] == thread_id):
        if call["kind"] == "step":
            out.append(pending)
            pending = []
        else:
            pending.append(call)
    return out


@pytest.mark.parametrize(
    "thread_id", [pytest.param(t, marks=_xfail(COMPACTIONS_DIFFER.get(t))) for t in THREADS]
)
def test_each_summariser_request_is_in_the_record_in_devs_shape_and_size(
    recorded: dict[str, Recorded], thread_id: str
) -> None:
    """Before each call, the summariser requests dev made: two messages each (dev's system prompt, the
    conversation with dev's nine-section prompt), capped at 20,000 output tokens, no tools, sized as sent."""
    record = recorded[thread_id]
    logged = _summariser_calls(thread_id)
    assert len(record.calls) == len(logged)
    for number, (call, made) in enumerate(zip(record.calls, logged, strict=True), start=1):
        shown = [
            ([[m["role"], m["chars"]] for m in r["messages"]], r["max_tokens"], r["tools"])
            for r in call["summariser_requests"]
        ]
        seen = [(c["sent"], c["max_tokens"], c["offered_tools"]) for c in made]
        assert shown == seen, f"{thread_id} call {number}"
