"""The fleet-size live poll counts from one aggregate over the checkpoints' keys what the list in memory counts
from every row, at every moment a head was written, on both engines."""

from __future__ import annotations

from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from mycel_dashboard.screens.live.pulse import fleet_changes, list_changes


def test_the_fleet_poll_counts_the_threads_the_list_in_memory_counts(mycel_store) -> None:
    reader = MycelReader(resolve_locations())
    rows = [row for row in reader.list_threads().value if row.head_checkpoint_id is not None]
    stamps = sorted({row.updated_at.timestamp() for row in rows if row.updated_at is not None})
    assert len(stamps) >= 2, stamps  # the data has moments between which some threads moved and some not
    # Before every head, at each head (the threads written at that moment no longer count), and after all.
    for since in [0.0, *stamps, stamps[0] - 1e-6, stamps[-1] + 1]:
        problems: list = []
        found = fleet_changes(reader, since, len(rows), index_from=0, problems=problems)
        expected = list_changes(rows, since, len(rows))
        assert problems == []
        assert found is not None and (found.new, found.moved) == (expected.new, expected.moved), since
    # A page that knew fewer threads than there are now: the newest of the moved ones are new.
    found = fleet_changes(reader, 0.0, len(rows) - 1, index_from=0, problems=[])
    assert found is not None and (found.new, found.moved) == (1, len(rows) - 1)
    # Below the fleet size the poll leaves the counting to the list in memory.
    assert fleet_changes(reader, 0.0, len(rows), index_from=len(rows) + 1, problems=[]) is None
