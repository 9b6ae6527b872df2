"""The dry-run of a Mycel dev thread from the CLI and on the page: one decision (dev's middleware at the next
call, memory_core.app.calls.dev_next_call), the same figures in both."""

from __future__ import annotations

import html
from pathlib import Path

import pytest

from memory_core.cli import main
from tests.postgres.test_pg_dev_pages import BREAKER, COMPACTING, dev_client  # noqa: F401 - the fixture
from tests.support.cli import cli_json

CASES = [
    (BREAKER, ["--context-limit", "6000"]),  # breaker open: over the trigger, not attempted
    (COMPACTING, ["--context-limit", "6000", "--trigger-tokens", "1500"]),  # a proposal, attempted
]


def _cli_dry_run(capsys: pytest.CaptureFixture[str], thread: str, flags: list[str]) -> dict:
    return cli_json(capsys, "dry-run", thread, *flags, "--json")


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
    # The split printed is dev's own (it keeps the newest message), the one its decision counts.
    assert (report["summarize_count"], report["keep_count"]) == (dev["summarize_count"], dev["keep_count"])
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


def test_the_what_if_s_next_call_follows_dev_s_rules_and_its_breaker(dev_client) -> None:  # noqa: F811
    # The breaker thread is far over a 6,000 window's trigger: main's rules would compact at its next call,
    # dev's do not while its breaker is open (the record's last call left it open).
    from memory_core.app.calls import configured_for, thread_calls
    from memory_core.app.thread_settings import thread_memory_settings
    from memory_core.memory_settings import MemorySettings
    from memory_core.rules.profile import RulesProfile
    from memory_core.stores.locations import resolve_locations
    from memory_core.stores.reader import MycelReader
    from memory_core.whatif import recorded_side

    reader = MycelReader(resolve_locations())
    row = reader.get_thread(BREAKER).value
    assert row is not None
    settings = MemorySettings(context_limit=6000)
    record = thread_calls(
        reader,
        row,
        configured_for(reader.locations, thread_memory_settings(reader.locations, row), settings=settings),
        counter=None,
    )
    assert record.rules is RulesProfile.DEV and record.calls[-1].breaker_open
    messages = reader.get_state(BREAKER).value.messages
    dev = recorded_side(messages, record.calls, settings, rules=RulesProfile.DEV).next_call
    main_rules = recorded_side(messages, record.calls, settings).next_call
    assert main_rules.would_compact and not dev.would_compact
    assert dev.trigger_tokens == main_rules.trigger_tokens == 4200


def test_the_dry_run_says_when_the_record_ran_under_another_limit(dev_client) -> None:  # noqa: F811
    # Today's config gives 1,000,000; the sample's summary rows say 6,000 (its leon:tiny model).
    page = html.unescape(dev_client.get(f"/threads/{BREAKER}/dry-run/").content.decode())
    assert "last ran under a context limit of 6,000" in page and "this plan uses today's 1,000,000" in page
    planned_as_it_ran = html.unescape(
        dev_client.get(f"/threads/{BREAKER}/dry-run/?context_limit=6000").content.decode()
    )
    assert 'id="record-limit"' not in planned_as_it_ran
