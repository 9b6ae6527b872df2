"""`manage.py search_index`: build the search index from scratch (a search keeps it up to date after)."""

import time

from django.core.management.base import BaseCommand, CommandError

from memory_core.app.search import SearchIndexError, default_index, rebuild_index
from mycel_dashboard.screens.shared.memory import problem_text
from mycel_dashboard.web.source import open_source


class Command(BaseCommand):
    help = "Index every thread's messages, tool calls and results, summaries and queued items again."

    def handle(self, *args: object, **options: object) -> None:
        _source, reader = open_source()
        index = default_index(reader)
        started = time.perf_counter()
        try:
            found = rebuild_index(reader, index)
        except SearchIndexError as exc:
            raise CommandError(str(exc)) from None
        for problem in dict.fromkeys(found.problems):
            if not problem.expected_absence:
                self.stderr.write(f"warning: {problem_text(problem)}")
        self.stdout.write(
            f"Indexed {found.value.threads_updated:,} threads, {found.value.documents_added:,} documents "
            f"in {time.perf_counter() - started:.1f} s: {index.path}"
        )
