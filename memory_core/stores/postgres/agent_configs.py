"""A Mycel dev agent's memory override, `agent.agent_configs.compact_json`, read-only (reference §3.3, §4.8).

Which agent: a thread's `agent.threads.agent_user_id` when that table has the thread, else the id in the
thread id itself (`f"{agent_user_id}-{seq}"`). Which config row: `identity.users(id).agent_config_id`,
as dev itself looks it up. Every absence (table, column, row) means dev's
defaults, and is said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_core.config.dev_layers import IgnoredFile, merge_dev_layers
from memory_core.config.model import EffectiveConfig
from memory_core.stores.locations import MycelLocations
from memory_core.stores.postgres.connect import PgError, PgRead, read_only
from memory_core.stores.runtime_config import list_layer_files

_STORE = "agent configs"
TABLE = "agent.agent_configs"
# Dev's agent ids are "m_" + 12 characters (storage/utils.py); a thread id appends "-<seq>".
_THREAD_ID = re.compile(r"^(m_[A-Za-z0-9]{12})-\d+$")

_COLUMNS_SQL = """
SELECT a.attname, format_type(a.atttypid, a.atttypmod)
FROM pg_catalog.pg_attribute a
JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = %s AND c.relname = %s AND a.attnum > 0 AND NOT a.attisdropped
"""


def agent_id_in_thread_id(thread_id: str) -> str | None:
    """The agent id a dev thread id starts with (None for sub-agent and foreign ids)."""
    found = _THREAD_ID.match(thread_id)
    return found.group(1) if found else None


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentCompactConfig:
    """What the database says about one agent's compact_json, and whether the dashboard may write it."""

    agent_id: str | None
    config_id: str | None = None  # agent.agent_configs.id
    compact_json: Any = None  # None: no row (or no column): dev's defaults apply
    table_ready: bool = False  # agent.agent_configs with id and compact_json jsonb
    can_update: bool = False  # ... and the role may UPDATE compact_json
    notes: tuple[str, ...] = ()  # each absence, said
    problems: tuple[str, ...] = field(default=())  # reads that failed

    @property
    def writable(self) -> bool:
        return self.table_ready and self.can_update and self.config_id is not None


def table_columns(read: PgRead, schema: str, table: str) -> dict[str, str]:
    """Column name -> type of a table, from pg_catalog (information_schema hides tables the role cannot
    read); empty when the table does not exist."""
    return {str(name): str(kind) for name, kind in read.rows(_COLUMNS_SQL, (schema, table))}


def compact_table_ready(columns: dict[str, str]) -> bool:
    return "id" in columns and columns.get("compact_json") == "jsonb"


def get_agent_compact_config(
    url: str,
    *,
    thread_id: str | None = None,
    agent_id: str | None = None,
    timeout_s: float,
    row_cap: int = 100,
) -> AgentCompactConfig:
    """The agent's compact_json (by agent id, or the thread's agent), in one read-only transaction."""
    try:
        with read_only(url, _STORE, timeout_s=timeout_s, row_cap=row_cap) as read:
            return _read(read, thread_id=thread_id, agent_id=agent_id)
    except PgError as exc:
        return AgentCompactConfig(agent_id=agent_id, problems=(exc.problem.message,))


def _read(read: PgRead, *, thread_id: str | None, agent_id: str | None) -> AgentCompactConfig:
    notes: list[str] = []
    if agent_id is None and thread_id is not None:
        if table_columns(read, "agent", "threads").keys() >= {"id", "agent_user_id"}:
            row = read.one("SELECT agent_user_id FROM agent.threads WHERE id = %s", (thread_id,))
            agent_id = str(row[0]) if row and row[0] else None
        agent_id = agent_id or agent_id_in_thread_id(thread_id)
        if agent_id is None:
            notes.append(f"No agent is known for thread {thread_id}: dev's defaults apply.")
            return AgentCompactConfig(agent_id=None, notes=tuple(notes))
    columns = table_columns(read, "agent", "agent_configs")
    if not columns:
        notes.append(f"There is no {TABLE} table: dev's defaults apply.")
        return AgentCompactConfig(agent_id=agent_id, notes=tuple(notes))
    if not compact_table_ready(columns):
        notes.append(f"{TABLE} has no compact_json jsonb column: dev's defaults apply.")
        return AgentCompactConfig(agent_id=agent_id, notes=tuple(notes))
    config_id = _config_id(read, agent_id, notes)
    can_update = bool(
        (read.one("SELECT has_column_privilege(%s, 'compact_json', 'UPDATE')", (TABLE,)) or (False,))[0]
    )
    if config_id is None:
        notes.append(f"Agent {agent_id} has no config in {TABLE}: dev's defaults apply.")
        return AgentCompactConfig(
            agent_id=agent_id, table_ready=True, can_update=can_update, notes=tuple(notes)
        )
    row = read.one("SELECT compact_json FROM agent.agent_configs WHERE id = %s", (config_id,))
    if row is None:
        notes.append(f"{TABLE} has no row {config_id} (named by identity.users): dev's defaults apply.")
        return AgentCompactConfig(
            agent_id=agent_id, table_ready=True, can_update=can_update, notes=tuple(notes)
        )
    return AgentCompactConfig(
        agent_id=agent_id,
        config_id=config_id,
        compact_json=row[0],
        table_ready=True,
        can_update=can_update,
        notes=tuple(notes),
    )


def _config_id(read: PgRead, agent_id: str | None, notes: list[str]) -> str | None:
    # Dev finds an agent's config only through its user row (backend/threads/pool/registry.py).
    if agent_id is None:
        return None
    if not table_columns(read, "identity", "users").keys() >= {"id", "agent_config_id"}:
        notes.append("There is no identity.users table (with agent_config_id) to name the agent's config.")
        return None
    row = read.one("SELECT agent_config_id FROM identity.users WHERE id = %s", (agent_id,))
    if row is None:
        notes.append(f"identity.users has no row {agent_id}.")
        return None
    if not row[0]:
        notes.append(f"identity.users row {agent_id} names no agent config.")
        return None
    return str(row[0])


@dataclass(frozen=True, slots=True, kw_only=True)
class DevConfigView:
    """One dev agent's memory config as every screen shows it: the row, the merged layers, the files
    main would read and dev does not."""

    agent: AgentCompactConfig
    effective: EffectiveConfig
    postgres: bool  # False: no LEON_POSTGRES_URL, so no agent config can be read
    thread_id: str | None = None  # the thread the agent was found from (None: asked by agent id)


def get_dev_config(
    locations: MycelLocations,
    *,
    thread_id: str | None = None,
    agent_id: str | None = None,
    project_dir: Path | None = None,
    timeout_s: float,
) -> DevConfigView:
    """The one place a dev thread's or agent's effective memory config is decided (page and CLI)."""
    if locations.postgres_url:
        agent = get_agent_compact_config(
            locations.postgres_url, thread_id=thread_id, agent_id=agent_id, timeout_s=timeout_s
        )
    else:
        known = agent_id or (agent_id_in_thread_id(thread_id) if thread_id else None)
        agent = AgentCompactConfig(
            agent_id=known,
            notes=(
                "LEON_POSTGRES_URL is not set: Mycel dev keeps agent configs in PostgreSQL; defaults shown.",
            ),
        )
    ignored = [
        IgnoredFile(path=str(layer.path), document=layer.file.document)
        for layer in list_layer_files(locations, project_dir=project_dir)
        if layer.file.exists
    ]
    effective = merge_dev_layers(
        compact_json=agent.compact_json, agent_id=agent.agent_id or "", ignored_files=ignored
    )
    return DevConfigView(
        agent=agent, effective=effective, postgres=bool(locations.postgres_url), thread_id=thread_id
    )
