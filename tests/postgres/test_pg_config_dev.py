"""Mycel dev's per-agent memory config in `agent.agent_configs.compact_json`, on a real server: read through
identity.users, saved in one transaction with stale-edit protection, refused (JSON offered) where the table
or the privilege is missing, and nothing written by a read."""

from __future__ import annotations

import json
import uuid
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb

from memory_core.config.dev_layers import merge_dev_layers
from memory_core.demo.dev_tables import dev_side_tables_sql
from memory_core.stores.postgres.agent_configs import agent_id_in_thread_id, get_agent_compact_config
from memory_core.stores.write.agent_config_writer import (
    CompactJsonRefused,
    apply_compact_json,
    compact_json_sha256,
)
from tests.support.postgres import write_counts

AGENT = "m_rE2uGx6NbP9w"
THREAD = f"{AGENT}-1"
CONFIG_ID = "cfg-rE2u"


def with_agent_config(url: str, compact_json: Any) -> str:
    """Dev's side tables (memory_core.demo.dev_tables) plus the sample agent's user and config rows."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(dev_side_tables_sql())
        conn.execute(
            "INSERT INTO identity.users (id, type, display_name, agent_config_id) VALUES (%s, 'agent', 'Toad', %s)",
            (AGENT, CONFIG_ID),
        )
        conn.execute(
            "INSERT INTO agent.agent_configs (id, owner_user_id, agent_user_id, name, version, compact_json) "
            "VALUES (%s, 'u_owner', %s, 'Toad', '1', %s)",
            (CONFIG_ID, AGENT, Jsonb(compact_json)),
        )
    return url


def stored(url: str) -> Any:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT compact_json FROM agent.agent_configs WHERE id = %s", (CONFIG_ID,)
        ).fetchone()
    return row[0] if row else None


def select_only_url(url: str) -> str:
    role = f"mycel_cfg_ro_{uuid.uuid4().hex[:12]}"  # roles are cluster-wide: one per test
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
        for schema in ("agent", "identity"):
            conn.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
            conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}")
    return url.replace("postgresql://mycel@", f"postgresql://{role}@", 1)


def test_the_thread_id_names_its_agent() -> None:
    assert agent_id_in_thread_id(THREAD) == AGENT
    assert agent_id_in_thread_id("subagent-1a2b3c4d") is None


def test_a_threads_agent_config_is_read_through_identity_users(pg_dev_sample: str) -> None:
    url = with_agent_config(pg_dev_sample, {"trigger_tokens": 5000})
    found = get_agent_compact_config(url, thread_id=THREAD, timeout_s=5.0)
    assert (found.agent_id, found.config_id, found.compact_json) == (
        AGENT,
        CONFIG_ID,
        {"trigger_tokens": 5000},
    )
    assert found.writable and found.problems == ()
    effective = merge_dev_layers(compact_json=found.compact_json, agent_id=AGENT)
    assert effective.value("memory.compaction.trigger_tokens") == 5000


def test_no_side_tables_means_defaults_and_says_so(pg_dev_sample: str) -> None:
    found = get_agent_compact_config(pg_dev_sample, thread_id=THREAD, timeout_s=5.0)
    assert found.agent_id == AGENT
    assert found.compact_json is None and not found.writable
    assert found.notes == ("There is no agent.agent_configs table: dev's defaults apply.",)


def test_an_agent_without_a_row_gets_defaults_said(pg_dev_sample: str) -> None:
    url = with_agent_config(pg_dev_sample, {})
    found = get_agent_compact_config(url, agent_id="m_nobody000000", timeout_s=5.0)
    assert found.compact_json is None and found.config_id is None
    assert found.notes == (
        "identity.users has no row m_nobody000000.",
        "Agent m_nobody000000 has no config in agent.agent_configs: dev's defaults apply.",
    )


def test_a_read_writes_nothing(pg_dev_sample: str) -> None:
    url = with_agent_config(pg_dev_sample, {"trigger_tokens": 5000})
    before = write_counts(url)
    for _ in range(3):
        get_agent_compact_config(url, thread_id=THREAD, timeout_s=5.0)
    assert write_counts(url) == before
    assert stored(url) == {"trigger_tokens": 5000}


def test_a_saved_config_is_read_back(pg_dev_sample: str) -> None:
    url = with_agent_config(pg_dev_sample, {"trigger_tokens": 5000})
    saved = apply_compact_json(
        url,
        config_id=CONFIG_ID,
        expected_sha256=compact_json_sha256({"trigger_tokens": 5000}),
        document={"trigger_tokens": 7000, "min_messages": 5},
        timeout_s=5.0,
    )
    assert saved.before == {"trigger_tokens": 5000}
    found = get_agent_compact_config(url, thread_id=THREAD, timeout_s=5.0)
    assert found.compact_json == {"trigger_tokens": 7000, "min_messages": 5}
    effective = merge_dev_layers(compact_json=found.compact_json, agent_id=AGENT)
    assert effective.value("memory.compaction.min_messages") == 5


def test_a_stale_save_is_refused_and_writes_nothing(pg_dev_sample: str) -> None:
    url = with_agent_config(pg_dev_sample, {"trigger_tokens": 5000})
    with psycopg.connect(url, autocommit=True) as conn:  # someone else (dev's UI) saved meanwhile
        conn.execute("UPDATE agent.agent_configs SET compact_json = '{\"trigger_tokens\": 6000}'")
    with pytest.raises(CompactJsonRefused, match="was changed since you opened it") as refused:
        apply_compact_json(
            url,
            config_id=CONFIG_ID,
            expected_sha256=compact_json_sha256({"trigger_tokens": 5000}),
            document={"trigger_tokens": 7000},
            timeout_s=5.0,
        )
    assert not refused.value.offer_json
    assert stored(url) == {"trigger_tokens": 6000}


def test_a_value_dev_refuses_is_never_written(pg_dev_sample: str) -> None:
    url = with_agent_config(pg_dev_sample, {})
    with pytest.raises(CompactJsonRefused, match="trigger_tokens"):
        apply_compact_json(
            url,
            config_id=CONFIG_ID,
            expected_sha256=compact_json_sha256({}),
            document={"trigger_tokens": 0},
            timeout_s=5.0,
        )
    assert stored(url) == {}


def test_no_table_offers_the_json(pg_dev_sample: str) -> None:
    with pytest.raises(CompactJsonRefused, match="There is no agent.agent_configs table") as refused:
        apply_compact_json(
            pg_dev_sample,
            config_id=CONFIG_ID,
            expected_sha256=compact_json_sha256({}),
            document={"trigger_tokens": 7000},
            timeout_s=5.0,
        )
    assert refused.value.offer_json


def test_a_select_only_role_is_offered_the_json_and_writes_nothing(pg_dev_sample: str) -> None:
    url = with_agent_config(pg_dev_sample, {"trigger_tokens": 5000})
    reader = select_only_url(url)
    found = get_agent_compact_config(reader, thread_id=THREAD, timeout_s=5.0)
    assert found.compact_json == {"trigger_tokens": 5000}
    assert found.table_ready and not found.can_update and not found.writable
    with pytest.raises(CompactJsonRefused, match="may not write agent.agent_configs") as refused:
        apply_compact_json(
            reader,
            config_id=CONFIG_ID,
            expected_sha256=compact_json_sha256({"trigger_tokens": 5000}),
            document={"trigger_tokens": 7000},
            timeout_s=5.0,
        )
    assert refused.value.offer_json
    assert stored(url) == {"trigger_tokens": 5000}


def _cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, url: str, *argv: str):
    from memory_core.cli import main

    monkeypatch.setenv("LEON_POSTGRES_URL", url)
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_shows_a_dev_threads_profile_with_sources(
    pg_dev_sample: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url = with_agent_config(pg_dev_sample, {"trigger_tokens": 5000, "enabled": "yes"})
    code, out, _ = _cli(capsys, monkeypatch, url, "config", "--thread", THREAD, "--json")
    assert code == 0
    shown = json.loads(out)
    assert (shown["profile"], shown["agent_id"], shown["writable"]) == ("dev", AGENT, True)
    assert shown["values"]["memory.compaction.trigger_tokens"] == {"value": 5000, "layer": "agent"}
    assert shown["values"]["memory.compaction.enabled"] == {"value": True, "layer": "agent"}
    assert shown["values"]["memory.pruning.protect_recent"] == {"value": 3, "layer": "system"}
    assert [p["key_path"] for p in shown["problems"] if p["severity"] == "error"] == [
        "memory.compaction.enabled"
    ]
    code, text, _ = _cli(capsys, monkeypatch, url, "config", "--agent", AGENT)
    assert code == 0
    assert f"agent    agent.agent_configs.compact_json for agent {AGENT} (row {CONFIG_ID})" in text
    assert "memory.compaction.trigger_tokens" in text and "5000  agent" in text
    assert (
        "error: memory.compaction.enabled [agent]: memory.compaction.enabled: 'yes' is not a boolean" in text
    )


def test_a_thread_row_names_its_agent_when_the_id_does_not(pg_dev_sample: str) -> None:
    url = with_agent_config(pg_dev_sample, {"min_messages": 7})
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO agent.threads (id, agent_user_id) VALUES ('subagent-1a2b3c4d', %s)", (AGENT,)
        )
    found = get_agent_compact_config(url, thread_id="subagent-1a2b3c4d", timeout_s=5.0)
    assert (found.agent_id, found.compact_json) == (AGENT, {"min_messages": 7})


def test_no_compact_json_column_means_defaults_and_the_json_offered(pg_dev_sample: str) -> None:
    url = with_agent_config(pg_dev_sample, {"trigger_tokens": 5000})
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER TABLE agent.agent_configs DROP COLUMN compact_json")
    found = get_agent_compact_config(url, thread_id=THREAD, timeout_s=5.0)
    assert found.compact_json is None and not found.writable
    assert found.notes == ("agent.agent_configs has no compact_json jsonb column: dev's defaults apply.",)
    with pytest.raises(CompactJsonRefused, match="has no id and compact_json jsonb columns") as refused:
        apply_compact_json(
            url, config_id=CONFIG_ID, expected_sha256=None, document={"trigger_tokens": 7000}, timeout_s=5.0
        )
    assert refused.value.offer_json
