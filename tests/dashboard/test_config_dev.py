"""The Config page for a Mycel dev agent (real server: Mycel dev's sample database plus dev's side tables):
its layers and sources, dev's strict refusals, the files only main reads, and the audited save into the
agent's compact_json — or the exact JSON offered where the database cannot take it."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from memory_core.stores.write.agent_config_writer import compact_json_sha256
from mycel_dashboard.models import AuditEntry
from tests.postgres.test_pg_config_dev import (
    AGENT,
    CONFIG_ID,
    THREAD,
    select_only_url,
    stored,
    with_agent_config,
)

COMPACT_KEYS = ("enabled", "reserve_tokens", "keep_recent_tokens", "min_messages", "trigger_tokens")


@pytest.fixture
def dev_db(pg_dev_sample: str, monkeypatch: pytest.MonkeyPatch) -> str:
    url = with_agent_config(pg_dev_sample, {"trigger_tokens": 5000})
    monkeypatch.setenv("LEON_POSTGRES_URL", url)
    return url


def _save(client, *, expected, extra=None, **values):
    data = {
        "profile": "dev",
        "agent": AGENT,
        "expected_sha256": compact_json_sha256(expected) or "",
    }
    data.update(extra or {})
    data.update({f"memory.compaction.{k}": "" for k in COMPACT_KEYS})
    data.update({f"memory.compaction.{k}": str(v) for k, v in values.items()})
    return client.post("/config/save/", data)


def test_a_dev_agents_page_shows_its_layers_sources_and_trigger_tokens(viewer_client, dev_db: str) -> None:
    response = viewer_client.get(f"/config/?agent={AGENT}")
    assert response.status_code == 200
    body = response.content.decode()
    assert f"agent.agent_configs.compact_json for agent {AGENT} (row {CONFIG_ID})" in body
    assert "Mycel dev defaults (config/defaults/runtime.json)" in body
    assert 'name="memory.compaction.trigger_tokens"' in body
    assert 'data-dev-key="memory.compaction.trigger_tokens">5,000<' in body
    assert "Only operators may save." in body


def test_a_dev_thread_picks_its_agents_config(viewer_client, dev_db: str) -> None:
    body = viewer_client.get(f"/config/?thread={THREAD}").content.decode()
    assert f'Mycel dev · agent <code>{AGENT}</code> <span class="muted">for thread {THREAD}</span>' in body
    assert 'data-dev-key="memory.compaction.trigger_tokens">5,000<' in body


def test_devs_strict_refusals_and_main_only_files_are_on_the_page(
    viewer_client, dev_db: str, isolated_mycel_home: Path
) -> None:
    with psycopg.connect(dev_db, autocommit=True) as conn:
        conn.execute(
            """UPDATE agent.agent_configs SET compact_json = '{"trigger_tokens": 0, "threshold": 0.5}'"""
        )
    (isolated_mycel_home / "runtime.json").write_text(
        '{"memory": {"compaction": {"keep_recent_tokens": 1234}}}'
    )
    body = viewer_client.get(f"/config/?agent={AGENT}").content.decode()
    assert (
        "memory.compaction.trigger_tokens: 0 is not allowed: it must be an integer greater than 0 or null"
        in body
    )
    assert "memory.compaction.threshold: unknown key (Extra inputs are not permitted)" in body
    assert "Mycel dev does not read this file" in body
    assert 'data-dev-key="memory.compaction.keep_recent_tokens">20,000<' in body  # the file is not merged


def test_an_operator_saves_compact_json_read_back_and_audited(operator_client, dev_db: str) -> None:
    response = _save(operator_client, expected={"trigger_tokens": 5000}, trigger_tokens=7000, min_messages=5)
    assert response.status_code == 200, response.content.decode()
    assert stored(dev_db) == {"trigger_tokens": 7000, "min_messages": 5}
    body = response.content.decode()
    assert "Saved <code>agent.agent_configs.compact_json</code>" in body
    assert 'data-dev-key="memory.compaction.trigger_tokens">7,000<' in body  # read back from the database
    entry = AuditEntry.objects.get()
    assert entry.action == AuditEntry.Action.CONFIG_SAVE and entry.result == AuditEntry.Result.APPLIED
    assert entry.actor == "operator"
    assert entry.before == {"compact_json": {"trigger_tokens": 5000}}
    assert entry.after == {"compact_json": {"trigger_tokens": 7000, "min_messages": 5}}
    assert AGENT in entry.target
    assert not (Path.home() / ".leon" / "runtime.json").exists()  # never a runtime.json


def test_a_stale_save_is_refused_and_audited(operator_client, dev_db: str) -> None:
    with psycopg.connect(dev_db, autocommit=True) as conn:
        conn.execute("""UPDATE agent.agent_configs SET compact_json = '{"trigger_tokens": 6000}'""")
    response = _save(operator_client, expected={"trigger_tokens": 5000}, trigger_tokens=7000)
    assert response.status_code == 409
    assert "was changed since you opened it" in response.content.decode()
    assert stored(dev_db) == {"trigger_tokens": 6000}
    assert AuditEntry.objects.get().result == AuditEntry.Result.REFUSED


def test_a_value_dev_refuses_is_not_saved(operator_client, dev_db: str) -> None:
    response = _save(operator_client, expected={"trigger_tokens": 5000}, trigger_tokens=0)
    assert response.status_code == 400
    assert "greater than 0 or null" in response.content.decode()
    assert stored(dev_db) == {"trigger_tokens": 5000}


def test_without_the_table_the_exact_json_is_offered(
    operator_client, pg_dev_sample: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEON_POSTGRES_URL", pg_dev_sample)
    page = operator_client.get(f"/config/?agent={AGENT}").content.decode()
    assert "There is no agent.agent_configs table: dev&#x27;s defaults apply." in page
    assert "Show the JSON to apply by hand" in page
    response = _save(operator_client, expected=None, trigger_tokens=7000)
    assert response.status_code == 409
    body = response.content.decode()
    assert (
        f"this JSON goes in <code>agent.agent_configs.compact_json</code> for agent <code>{AGENT}</code>"
        in body
    )
    assert (
        '<pre class="offered-json" id="dev-offered-json">{\n  &quot;trigger_tokens&quot;: 7000\n}</pre>'
        in body
    )
    assert AuditEntry.objects.get().result == AuditEntry.Result.REFUSED


def test_a_select_only_role_is_offered_the_json(
    operator_client, pg_dev_sample: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = with_agent_config(pg_dev_sample, {"trigger_tokens": 5000})
    monkeypatch.setenv("LEON_POSTGRES_URL", select_only_url(url))
    response = _save(operator_client, expected={"trigger_tokens": 5000}, trigger_tokens=7000)
    assert response.status_code == 409
    body = response.content.decode()
    assert "may not UPDATE agent.agent_configs.compact_json" in body
    assert "&quot;trigger_tokens&quot;: 7000" in body
    assert stored(url) == {"trigger_tokens": 5000}


def test_a_viewer_cannot_save(viewer_client, dev_db: str) -> None:
    assert _save(viewer_client, expected={"trigger_tokens": 5000}, trigger_tokens=7000).status_code == 403
    assert stored(dev_db) == {"trigger_tokens": 5000}


def test_stored_keys_dev_refuses_block_a_save_until_removed(operator_client, dev_db: str) -> None:
    with psycopg.connect(dev_db, autocommit=True) as conn:
        conn.execute("""UPDATE agent.agent_configs SET compact_json = '{"trigger_tokens": 5000, "foo": 1}'""")
    expected = {"trigger_tokens": 5000, "foo": 1}
    page = operator_client.get(f"/config/?agent={AGENT}").content.decode()
    assert "Remove the stored keys Mycel dev refuses: <code>foo</code>" in page
    kept = _save(operator_client, expected=expected, trigger_tokens=7000)
    assert kept.status_code == 400
    assert "memory.compaction.foo: unknown key" in kept.content.decode()
    assert stored(dev_db) == expected
    dropped = _save(operator_client, expected=expected, extra={"drop_unknown": "on"}, trigger_tokens=7000)
    assert dropped.status_code == 200
    assert stored(dev_db) == {"trigger_tokens": 7000}


def test_a_secret_stored_in_compact_json_never_reaches_the_page_or_the_audit(
    operator_client, pg_dev_sample: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-ant-FAKE-compact-secret-0123456789"
    expected = {"trigger_tokens": 5000, "api_key": secret}
    url = with_agent_config(pg_dev_sample, expected)
    monkeypatch.setenv("LEON_POSTGRES_URL", select_only_url(url))
    page = operator_client.get(f"/config/?agent={AGENT}").content.decode()
    assert "memory.compaction.api_key: unknown key" in page
    refused = _save(operator_client, expected=expected, trigger_tokens=7000)  # dev refuses the unknown key
    assert refused.status_code == 400
    entry = AuditEntry.objects.get()
    assert entry.result == AuditEntry.Result.REFUSED
    for text in (page, refused.content.decode(), entry.message, repr(entry.after), repr(entry.before)):
        assert secret not in text


def test_a_dev_thread_never_saves_into_a_runtime_json(operator_client, dev_db: str) -> None:
    from memory_core.stores.locations import resolve_locations

    user_layer = resolve_locations().config_home / "runtime.json"
    before = user_layer.read_bytes() if user_layer.exists() else None
    page = operator_client.get(f"/config/?thread={THREAD}").content.decode()
    assert "Try values (what-if only)" in page
    assert 'id="dev-save-note"' in page
    assert 'name="layer"' not in page  # no runtime.json layer to pick
    form = {"thread": THREAD, "layer": "user", "memory.pruning.protect_recent": "5", "expected_sha256": ""}
    for path in ("/config/save/", "/config/preview/"):
        answer = (operator_client.post if path.endswith("save/") else operator_client.get)(path, form)
        assert "Mycel dev does not read runtime.json" in answer.content.decode(), path
    assert (user_layer.read_bytes() if user_layer.exists() else None) == before
    refused = AuditEntry.objects.get(action=AuditEntry.Action.CONFIG_SAVE)
    assert refused.result == AuditEntry.Result.REFUSED
