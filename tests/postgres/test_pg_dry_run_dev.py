"""The dry-run of a Mycel dev thread from the CLI and on the page: one decision (dev's middleware at the next
call, memory_core.stores.thread_calls.dev_next_call), the same figures in both."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from memory_core.cli import main
from tests.postgres.test_pg_dev_pages import BREAKER, COMPACTING, dev_client  # noqa: F401 - the fixture

CASES = [
    (BREAKER, ["--context-limit", "6000"]),  # breaker open: over the trigger, not attempted
    (COMPACTING, ["--context-limit", "6000", "--trigger-tokens", "1500"]),  # a proposal, attempted
]


def _cli_dry_run(capsys: pytest.CaptureFixture[str], thread: str, flags: list[str]) -> dict:
    assert main(["dry-run", thread, *flags, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("thread", "flags"), CASES)
def test_the_cli_and_the_page_give_dev_s_one_decision(
    dev_client,  # noqa: F811 - the fixture
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    thread: str,
    flags: list[str],
) -> None:
    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(tmp_path / "cli-cache"))
    report = _cli_dry_run(capsys, thread, flags)
    assert report["rules"] == "dev" and report["rules_reason"] == "dev layout"
    dev = report["dev"]
    query = "&".join(
        f"{a.lstrip('-').replace('-', '_')}={b}" for a, b in zip(flags[::2], flags[1::2], strict=True)
    )
    page = html.unescape(dev_client.get(f"/threads/{thread}/dry-run/?{query}").content.decode())
    card = page[page.index('id="dev-decision"') :]
    assert f"{dev['trigger_view_tokens']:,}" in card
    assert f"&gt; {dev['threshold_tokens']:,}" in card or f"> {dev['threshold_tokens']:,}" in card
    if thread == BREAKER:
        assert dev["should_compact"] and not dev["attempted"], dev
        assert dev["breaker_before"] == {"failure_count": 3, "open": True}
        assert "no: the breaker is open (3 failures)" in card
        assert report["would_compact_next_call"] is False
    else:
        assert dev["threshold_tokens"] == 1500 and dev["attempted"]
        assert dev["compact_up_to_index"] is not None
        assert f"compact_up_to_index = {dev['compact_up_to_index']}" in card.replace("</code>", "")
        assert report["would_compact_next_call"] is True


def test_trigger_tokens_is_refused_under_main_s_rules(
    dev_client,  # noqa: F811 - the fixture
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["dry-run", BREAKER, "--rules", "main", "--trigger-tokens", "100", "--json"])
    assert code == 2
    assert "--trigger-tokens applies only under Mycel dev's rules" in capsys.readouterr().err
