"""Behind PgBouncer in transaction mode: each transaction may land on another server connection, so a read
must carry no session state and use no server-side prepared statement. Every screen's reads go through one
real PgBouncer in front of the test cluster, with two server connections for many clients, and give what a
direct connection gives."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from memory_core.cli import main
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from tests.support.postgres import running_pgbouncer

THREADS = ("m_rE2uGx6NbP9w-1", "m_rE2uGx6NbP9w-2", "m_sK5yDq1FvT7a-1", "m_sK5yDq1FvT7a-2", "m_sK5yDq1FvT7a-3")


@pytest.fixture
def bouncer(pg_server: Any) -> Iterator[Path]:
    with running_pgbouncer(pg_server, pool_size=2) as socket_dir:
        yield socket_dir


def _reader(url: str, tmp_path: Path) -> MycelReader:
    # A generous time limit: six readers share two server connections on a loaded 2-core machine, and this
    # test is about what they read, not how fast.
    environ = {"HOME": str(tmp_path / "home"), "LEON_POSTGRES_URL": url}
    return MycelReader(resolve_locations(environ), query_timeout_s=60.0)


def _seen(reader: MycelReader, thread_id: str) -> tuple[Any, ...]:
    state = reader.get_state(thread_id)
    checkpoints = reader.list_checkpoints(thread_id)
    assert state.problems == () and checkpoints.problems == (), (state.problems, checkpoints.problems)
    assert state.value is not None
    series = reader.checkpoint_series(thread_id)
    assert series is not None
    return (
        [(m.type, m.id, m.content) for m in state.value.messages],
        [(c.checkpoint_id, c.messages, c.estimated_tokens) for c in checkpoints.value],
        sorted(series.points.items()),
    )


def _calls_json(monkeypatch: pytest.MonkeyPatch, capsys: Any, url: str, cache: Path, thread_id: str) -> str:
    monkeypatch.setenv("LEON_POSTGRES_URL", url)
    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(cache))
    assert main(["calls", thread_id, "--json"]) == 0
    out: str = capsys.readouterr().out
    return out


def _through(url: str, bouncer: Path) -> str:
    database = url.split("@/", 1)[1].split("?", 1)[0]
    return f"postgresql://mycel@/{database}?host={quote(str(bouncer))}&port=6432"


def test_every_read_through_pgbouncer_in_transaction_mode_equals_a_direct_read(
    pg_dev_sample: str, bouncer: Path, tmp_path: Path
) -> None:
    through = _through(pg_dev_sample, bouncer)
    direct = _reader(pg_dev_sample, tmp_path / "direct")
    expected = {thread: _seen(direct, thread) for thread in THREADS}
    listed = direct.list_threads()

    def read_all(worker: int) -> dict[str, tuple[Any, ...]]:
        # Each worker its own reader (no shared memo), many transactions over two server connections.
        reader = _reader(through, tmp_path / f"bounced-{worker}")
        rows = reader.list_threads()
        assert rows.problems == ()
        assert [r.thread_id for r in rows.value] == [r.thread_id for r in listed.value]
        return {thread: _seen(reader, thread) for thread in THREADS}

    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(read_all, range(6)))
    assert all(result == expected for result in results)


def test_the_calls_command_through_pgbouncer_equals_a_direct_read(
    pg_dev_sample: str, bouncer: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("LEON_DB_PATH", "LEON_SANDBOX_DB_PATH", "LEON_QUEUE_DB_PATH", "MYCEL_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    through = _through(pg_dev_sample, bouncer)
    for thread in THREADS:
        direct = _calls_json(monkeypatch, capsys, pg_dev_sample, tmp_path / "direct", thread)
        bounced = _calls_json(monkeypatch, capsys, through, tmp_path / "bounced", thread)
        assert '"call": 1' in direct
        assert bounced == direct
