"""`mycel-memory storage [THREAD_ID] [--turns N] [--json]`: bytes on disk per store, thread and checkpoint,
each thread's growth per turn and its size N turns on (memory_core/app/storage.py, as the Storage
screen shows them)."""

from __future__ import annotations

import argparse
from typing import Any

from memory_core import figures
from memory_core.app.errors import UnknownThread
from memory_core.app.fleet_storage import fleet_storage_report
from memory_core.app.inputs import parse_bounded
from memory_core.app.status import refuse_unreadable, require_data
from memory_core.app.storage import (
    DEFAULT_TURNS_AHEAD,
    MAX_TURNS_AHEAD,
    storage_as_json,
    thread_storage,
    thread_storage_as_json,
)
from memory_core.cli.common import print_json
from memory_core.cli.reading import open_reader, warn
from memory_core.cli.table import print_table, printable, short_id
from memory_core.footprint.growth import MIN_TURNS_TO_FIT

# The terminal table shows the biggest threads; --json has every one.
_TOP = 20


def run_storage(args: argparse.Namespace) -> int:
    turns = parse_bounded(args.turns, "turns", low=0, high=MAX_TURNS_AHEAD, default=DEFAULT_TURNS_AHEAD)
    reader = open_reader()
    require_data(reader.locations)
    if args.thread_id is not None:
        return _one_thread(reader, args.thread_id, turns, as_json=args.json)
    # From the dashboard's fleet index when it is built (what the Storage page shows), else walked.
    limit = None if args.json else _TOP  # --json has every thread; the table the biggest
    result = fleet_storage_report(reader, args.fleet_index(), turns_ahead=turns, limit=limit)
    if not result.value.thread_count:
        refuse_unreadable(result.problems)
    warn(result.problems)
    data = storage_as_json(result)
    if args.json:
        print_json(data)
        return 0
    _print_fleet(data)
    return 0


def _print_fleet(data: dict[str, Any]) -> None:
    threads = data["threads"]
    print_table(
        (
            "THREAD",
            "NAME",
            "STORE",
            "BYTES",
            "SHARE",
            "CKPTS",
            "TURNS",
            "+/TURN",
            f"PROJECTED IN {data['turns_ahead']} TURNS",
            "QUADRATIC",
        ),
        [
            (
                short_id(t["thread_id"]),
                t["name"] or "",
                t["store"],
                figures.size(t["bytes"]),
                figures.percent(t["share"], decimals=1),
                figures.count(t["checkpoints"]),
                figures.count(t["turns"]),
                figures.size(t["growth_bytes_per_turn"])
                + ("" if t["growth_basis"] == "fitted" else " (mean)"),
                figures.size(t["projected_bytes"]),
                "yes" if t["quadratic"] else "",
            )
            for t in threads[:_TOP]
        ],
    )
    if not threads:
        print("(no threads)")
    elif len(threads) > _TOP:
        print(f"... {len(threads) - _TOP:,} more threads (--json lists every one)")
    print(f"\n{figures.count(data['thread_count'])} threads, {figures.size(data['total_bytes'])}")
    if any(t["growth_basis"] != "fitted" for t in threads[:_TOP]):
        print(f"(mean): {MIN_TURNS_TO_FIT} turns or more are fitted; fewer grow at their mean per turn")
    for store in data["stores"]:
        line = (
            f"{store['store']}: {figures.count(store['threads'])} threads, "
            f"{figures.size(store['thread_bytes'])} of threads"
        )
        if store["measured"]:
            line += (
                f"; file {figures.size(store['file_bytes'])}, WAL {figures.size(store['wal_bytes'])}, "
                f"free {figures.size(store['free_bytes'])} ({store['measured_by']})"
            )
        else:
            line += "; its space could not be measured"
        print(printable(line))
        for note in store.get("estimated", []):
            print(f"  estimated: {printable(note)}")


def _one_thread(reader: Any, thread_id: str, turns: int, *, as_json: bool) -> int:
    found = thread_storage(reader, thread_id, turns_ahead=turns)
    warn(found.problems)
    detail = found.value
    if detail is None:
        raise UnknownThread.named(thread_id)
    data = thread_storage_as_json(detail, found.problems)
    if as_json:
        print_json(data)
        return 0
    print(printable(f"{data['thread_id']}  {data['name'] or ''}  ({data['store']}, {data['layout']} layout)"))
    basis = "" if data["growth_basis"] == "fitted" else f" ({data['growth_basis']})"
    print(
        f"{figures.size(data['bytes'])} ({figures.size_exact(data['bytes'])}) in "
        f"{figures.count(data['checkpoints'])} checkpoints over {figures.count(data['turns'])} turns; "
        f"{figures.delta_size(data['growth_bytes_per_turn'])} per turn{basis}; "
        f"projected {figures.size(data['projected_bytes'])} after {figures.count(turns)} more turns"
        + ("; grows with the square of its length" if data["quadratic"] else "")
    )
    print()
    print_table(
        (
            "CHECKPOINT",
            "TURN",
            "SOURCE",
            "CHECKPOINT COL",
            "METADATA",
            "WRITES",
            "BLOBS",
            "TOTAL",
            "CUMULATIVE",
        ),
        [
            (
                r["checkpoint_id"],
                r["turn"],
                r["source"] or "",
                figures.size(r["checkpoint"]),
                figures.size(r["metadata"]),
                figures.size(r["writes"]),
                figures.size(r["blobs"]),
                figures.size(r["bytes"]),
                figures.size(r["cumulative"]),
            )
            for r in data["checkpoint_rows"]
        ],
    )
    if data["other_bytes"]:
        print(f"+ {figures.size(data['other_bytes'])} under no checkpoint of the root namespace")
    print(f"\nchannels at the head ({data['head_checkpoint_id'] or '-'}):")
    print_table(
        ("CHANNEL", "INLINE", "BLOB", "WRITES", "TOTAL"),
        [
            (
                c["channel"],
                figures.size(c["inline"]),
                figures.size(c["blob"]),
                figures.size(c["writes"]),
                figures.size(c["bytes"]),
            )
            for c in data["channels"]
        ],
    )
    if not data["channels"]:
        print("(no channels measured)")
    return 0
