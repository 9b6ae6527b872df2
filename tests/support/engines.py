"""Mycel's checkpoints on each engine the reader serves, for one test run over both (the `mycel_store` fixture
in tests/conftest.py): on SQLite, a copy of the sample home Mycel wrote; on PostgreSQL, the demo's two threads
that LangGraph's AsyncPostgresSaver wrote in Mycel main's layout (the `pg_main_db` fixture). Either is read
back through LangGraph's own saver, the second computation the reports are held against."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager, closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # LangGraph loads when a store is made, not when tests/conftest.py is
    from langchain_core.messages import BaseMessage
    from langgraph.checkpoint.base import BaseCheckpointSaver

ENGINES = ("sqlite", "postgresql")


@dataclass(frozen=True)
class MycelStore:
    """Mycel's data on one engine, with Mycel's environment pointed at it."""

    engine: str
    open_saver: Callable[[], AbstractContextManager[BaseCheckpointSaver[Any]]]
    summary_db: Path  # Mycel's summaries (a SQLite file on either engine); absent: no summary rows
    pricing_cache: Path  # where Mycel looks for its pricing cache; absent: nothing is priced
    model_calls: int  # model calls at the threads' heads, counted by hand for each data set

    def heads(self) -> dict[str, list[BaseMessage]]:
        """Every thread's messages at its head, as LangGraph's own saver lists and decodes them."""
        with self.open_saver() as saver:
            thread_ids = sorted({c.config["configurable"]["thread_id"] for c in saver.list(None)})
            heads = {}
            for thread_id in thread_ids:
                found = saver.get_tuple({"configurable": {"thread_id": thread_id}})
                assert found is not None, thread_id
                heads[thread_id] = list(found.checkpoint["channel_values"]["messages"])
        return heads

    def summaries(self, thread_id: str) -> list[tuple[str, int, int]]:
        """The thread's summary rows, oldest first: (summary_text, compact_up_to_index, compacted_at)."""
        if not self.summary_db.exists():
            return []
        with closing(sqlite3.connect(f"file:{self.summary_db}?mode=ro", uri=True)) as conn:
            return conn.execute(
                "SELECT summary_text, compact_up_to_index, compacted_at FROM summaries WHERE thread_id = ?"
                " ORDER BY created_at",
                (thread_id,),
            ).fetchall()

    def prices(self) -> dict[str, Any] | None:
        """The pricing cache's prices by model key, or None when there is no cache."""
        if not self.pricing_cache.exists():
            return None
        prices: dict[str, Any] = json.loads(self.pricing_cache.read_text())["models"]
        return prices


def sqlite_store(home: Path) -> MycelStore:
    """The sample home (a copy, Mycel's environment pointed at it): six threads, 41 model calls, Mycel's own
    summaries and a pricing cache."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    return MycelStore(
        engine="sqlite",
        open_saver=lambda: SqliteSaver.from_conn_string(str(home / "leon.db")),
        summary_db=home / "summary.db",
        pricing_cache=home / "pricing_cache.json",
        model_calls=41,
    )


def postgres_store(url: str, leon_home: Path) -> MycelStore:
    """The demo's toad_qa and toad_compaction threads in main's layout on the server at `url` (15 model calls),
    Mycel's environment pointed at it with `leon_home` as ~/.leon: no summary row reachable there (the demo's
    rows are not written to the server), no pricing cache."""
    from langgraph.checkpoint.postgres import PostgresSaver

    return MycelStore(
        engine="postgresql",
        open_saver=lambda: PostgresSaver.from_conn_string(url),
        summary_db=leon_home / "summary.db",
        pricing_cache=leon_home / "pricing_cache.json",
        model_calls=15,
    )
