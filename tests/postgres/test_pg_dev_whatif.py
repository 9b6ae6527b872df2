"""Mycel dev's trigger_tokens on Mycel dev's own data (the sample database, its summaries in its SQLite
fallback): a trigger below keep_recent_tokens attempts and compacts nothing; above the history's tail it
compacts once per crossing, never at every call — through `mycel-memory whatif --json`, the replay the
what-if page draws."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.postgres.test_pg_dev_pages import COMPACTING, dev_client  # noqa: F401 - the fixture
from tests.support.cli import cli_json


def _proposed(capsys: pytest.CaptureFixture[str], *flags: str) -> list[dict]:
    return cli_json(capsys, "whatif", COMPACTING, *flags, "--json")["proposed"]


def test_trigger_tokens_below_keep_recent_compacts_nothing_on_dev_data(
    dev_client,  # noqa: F811 - the fixture
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(tmp_path / "cache"))
    calls = _proposed(
        capsys, "--context-limit", "1000000", "--keep-recent-tokens", "20000", "--trigger-tokens", "1000"
    )
    assert len(calls) == 10
    attempted = [c for c in calls if c["attempted"]]
    assert len(attempted) >= 8  # the view is over 1,000 tokens from the second call on
    assert not any(c["compacted"] for c in calls)  # ... and the whole history fits keep_recent_tokens
    assert all(c["breaker"] == {"failure_count": 0, "open": False} for c in calls)

    # With a tail budget the history exceeds, the same trigger compacts, but once per crossing: after a
    # compaction the summarized view is under the trigger again for a while.
    calls = _proposed(
        capsys, "--context-limit", "1000000", "--keep-recent-tokens", "800", "--trigger-tokens", "1500"
    )
    compacted = [c["call"] for c in calls if c["compacted"]]
    over = [c["call"] for c in calls if c["estimated_tokens"]["after_pruning"] > 1500]
    assert compacted and len(compacted) < len(over)
    assert all(c["trigger_view_tokens"] > 1500 for c in calls if c["compacted"])
