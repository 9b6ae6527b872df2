"""`manage.py build_fleet_index`: build the fleet index, or bring it up to date, in the foreground; then
read the records of model calls it lacks and sum the Context reports kept from them (`--no-records` leaves
those to the server's background builder).

One builder runs at a time across every instance sharing the dashboard's database: when another holds
the lock, this waits until the index is complete and says so.
"""

import time
from typing import Any

from django.core.management.base import BaseCommand

from memory_core.app.fleet_index import BUILD_ROW_CAP, IndexState, build_until_done, store_name
from memory_core.app.fleet_records import build_records
from mycel_dashboard.web.fleet_index import DashboardFleetIndex, builder_reader, sum_reports
from mycel_dashboard.web.source import current_source


class Command(BaseCommand):
    help = "Build the fleet index the Threads list sorts and filters by (the dashboard's own database)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--no-records", action="store_true", help="build the head facts only")

    def handle(self, *args: object, **options: object) -> None:
        locations = current_source().locations
        started = time.perf_counter()

        def progress(state: IndexState) -> None:
            self.stdout.write(f"{state.done:,} of {state.total:,} threads", ending="\n")

        state = build_until_done(
            lambda cap: builder_reader(locations, cap), DashboardFleetIndex(), on_progress=progress
        )
        if state is not None:
            self.stdout.write(
                f"Fleet index complete: {state.total:,} threads in {time.perf_counter() - started:.1f} s"
            )
        if options.get("no_records"):
            return
        records_started = time.perf_counter()
        read = build_records(
            builder_reader(locations, BUILD_ROW_CAP),
            DashboardFleetIndex(),
            on_progress=lambda done: self.stdout.write(f"{done:,} records read"),
        )
        if read is None:
            self.stdout.write("Records: another builder is reading them")
            return
        self.stdout.write(f"Records read: {read:,} in {time.perf_counter() - records_started:.1f} s")
        sums_started = time.perf_counter()
        summed = sum_reports(DashboardFleetIndex(), store_name(builder_reader(locations, BUILD_ROW_CAP)))
        if summed is None:
            self.stdout.write("Context reports: another builder is summing them")
        else:
            self.stdout.write(
                f"Context reports summed: {summed} in {time.perf_counter() - sums_started:.1f} s"
            )
