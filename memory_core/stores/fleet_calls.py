"""Every thread's record, for the fleet reports (calibration, tool pressure, the prompt-cache cost).

The record is `thread_calls` under the thread's effective config, exactly what `mycel-memory calls`
prints, kept per thread head in one memo: a warm fleet report reads nothing, and a thread that moved
is the only one rebuilt.
"""

from __future__ import annotations

from collections.abc import Iterator

from memory_core.memo import Key, Memo, digest
from memory_core.record.evidence import Configured
from memory_core.records import ThreadRow
from memory_core.rules.profile import RulesProfile
from memory_core.stores.reader import MycelReader
from memory_core.stores.thread_calls import ThreadCalls, configured_for, thread_calls
from memory_core.stores.thread_settings import project_folder, thread_memory_settings, thread_model
from memory_core.tokens import default_counter

# Small per thread for the fleet's usual threads; sized for a 10,000-thread fleet.
_RECORDS: Memo[ThreadCalls] = Memo("stores.fleet_records", max_entries=12_000)


def recorded_thread(
    reader: MycelReader,
    row: ThreadRow,
    *,
    rules: RulesProfile | None = None,
    today: tuple[Configured, str] | None = None,
) -> ThreadCalls:
    """The thread's model calls as Mycel made them, under its effective config (memoized per head).

    `today` is the config and its digest when the caller already resolved them (a fleet report resolves
    each model and workspace once, not each thread)."""
    configured, settings_digest = today or _today(reader, row)

    def compute() -> ThreadCalls:
        return thread_calls(reader, row, configured, counter=default_counter(), rules=rules)

    if row.head_checkpoint_id is None:
        return compute()
    key = Key(
        store=reader.store_key,
        thread=row.thread_id,
        head=row.head_checkpoint_id,
        settings=settings_digest,
        what=(row.checkpoints, row.summaries, rules),
    )
    return _RECORDS.get_or_compute(key, compute, keep=lambda found: not found.transient)


def _today(reader: MycelReader, row: ThreadRow) -> tuple[Configured, str]:
    configured = configured_for(reader.locations, thread_memory_settings(reader.locations, row))
    return configured, digest(configured)


def fleet_records(reader: MycelReader) -> Iterator[tuple[ThreadRow, ThreadCalls]]:
    """Every thread with checkpoints, newest activity first, with its record."""
    # Today's config depends on the thread's model and workspace only: read once per pair, per report.
    resolved: dict[tuple[object, object], tuple[Configured, str]] = {}
    for row in reader.list_threads().value:
        if row.head_checkpoint_id is None:
            continue
        pair = (thread_model(row), project_folder(reader.locations, row))
        if pair not in resolved:
            resolved[pair] = _today(reader, row)
        yield row, recorded_thread(reader, row, today=resolved[pair])
