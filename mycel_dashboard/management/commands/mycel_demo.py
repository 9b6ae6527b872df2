"""`manage.py mycel_demo`: write a demo Mycel data home (real LangGraph checkpoints, Mycel's tables)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory_core.demo import write_demo_home
from memory_core.demo.home import BUILT_IN_THREADS


class Command(BaseCommand):
    # Writing files needs no URLs, models or templates: skip system checks so it works on any checkout state.
    requires_system_checks: list[str] = []
    help = "Write a deterministic demo Mycel data home (leon.db, summary.db, queue.db, sandbox.db, …)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--out", type=Path, default=None, help="folder (default: DASHBOARD_DEMO_HOME)")
        parser.add_argument("--seed", type=int, default=7, help="same seed, same data (default 7)")
        parser.add_argument(
            "--threads",
            type=int,
            default=BUILT_IN_THREADS,
            help=f"conversation threads (default {BUILT_IN_THREADS}, every built-in scenario)",
        )
        parser.add_argument("--long-turns", type=int, default=0, help="add a long thread with K turns")
        parser.add_argument("--force", action="store_true", help="replace an existing demo home")

    def handle(self, *args: Any, **options: Any) -> None:
        folder: Path = options["out"] or Path(settings.DASHBOARD_DEMO_HOME)
        if options["threads"] < 1 or options["long_turns"] < 0:
            raise CommandError("--threads must be at least 1 and --long-turns at least 0")
        if (folder / "leon.db").exists() and not options["force"]:
            raise CommandError(f"{folder / 'leon.db'} already exists; pass --force to replace the demo home")
        started = time.perf_counter()
        manifest = write_demo_home(
            folder,
            seed=options["seed"],
            threads=options["threads"],
            long_turns=options["long_turns"],
            overwrite=options["force"],
        )
        elapsed = time.perf_counter() - started
        self.stdout.write(f"Wrote a demo Mycel home to {folder} (seed {manifest.seed}) in {elapsed:.1f} s:")
        for thread in manifest.threads:
            self.stdout.write(f"  {thread.thread_id:<20} {thread.message_count:>5} messages  {thread.title}")
        for path in manifest.files:
            if path.suffix in {".db", ".json"} and path.parent == folder:
                self.stdout.write(f"  {path.name:<14} {path.stat().st_size:>10,} bytes")
        self.stdout.write(f"Point Mycel's variables at it: LEON_DB_PATH={folder / 'leon.db'}")
