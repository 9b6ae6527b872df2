from __future__ import annotations

from collections.abc import Iterator

import pytest

from memory_core.stores.postgres.connect import close_pools


@pytest.fixture(autouse=True)
def _no_pool_outlives_its_test() -> Iterator[None]:
    # Each test has its own database: its pool's idle connections would only hold server slots.
    yield
    close_pools()
