"""Where Mycel keeps its files, resolved from the same environment variables and defaults Mycel uses."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path


class StoreRole(StrEnum):
    MAIN = "main"  # leon.db: checkpoints, writes, threads (+ summaries/file_operations of non-web agents)
    SUMMARY = "summary"  # summary.db beside leon.db (web threads)
    FILE_OPS = "file_ops"  # file_ops.db beside leon.db
    EVENTS = "events"  # events.db beside leon.db
    CHAT = "chat"
    QUEUE = "queue"
    SANDBOX = "sandbox"
    TASKS = "tasks"
    AGENT_REGISTRY = "agent_registry"


# Mycel dev's SQLite roles and the variable each requires (reference mycel-dev §3.9).
SQLITE_PATH_VARIABLES = {
    StoreRole.MAIN: "LEON_DB_PATH",
    StoreRole.QUEUE: "LEON_QUEUE_DB_PATH",
    StoreRole.SANDBOX: "LEON_SANDBOX_DB_PATH",
    StoreRole.CHAT: "LEON_CHAT_DB_PATH",
}


@dataclass(frozen=True, slots=True)
class MycelLocations:
    """Every file the dashboard may read, and the config home that holds runtime.json and models.json."""

    main: Path
    summary: Path
    file_ops: Path
    events: Path
    chat: Path
    queue: Path
    sandbox: Path
    tasks: Path
    agent_registry: Path
    config_home: Path
    project_dir: Path | None
    # LEON_POSTGRES_URL: checkpoints in PostgreSQL (dev always; main with LEON_STORAGE_STRATEGY=supabase).
    # Never in a repr: the URL may carry a password.
    postgres_url: str | None = field(default=None, repr=False)
    storage_strategy: str | None = None  # LEON_STORAGE_STRATEGY as Mycel reads it
    # The SQLite path variables that were set (LEON_DB_PATH, LEON_QUEUE_DB_PATH, LEON_SANDBOX_DB_PATH…):
    # Mycel dev has no ~/.leon defaults, so on dev a file is a store only where its variable names it.
    explicit: frozenset[str] = frozenset()

    def path(self, role: StoreRole) -> Path:
        return Path(getattr(self, role.value))

    def databases(self) -> dict[StoreRole, Path]:
        return {role: self.path(role) for role in StoreRole}


def _expand(value: str) -> Path:
    return Path(os.path.expandvars(os.path.expanduser(value)))


def resolve_locations(environ: Mapping[str, str] | None = None) -> MycelLocations:
    """Resolve Mycel's paths as its own code does (reference §1.1–1.2).

    The run-events file is always the sibling of leon.db: Mycel's StorageContainer ignores
    LEON_RUN_EVENT_DB_PATH. MYCEL_CONFIG_HOME (ours, not Mycel's) points at a copied ~/.leon.
    """
    env = os.environ if environ is None else environ
    home = _expand(env.get("HOME", "~")) / ".leon" if "HOME" in env else Path.home() / ".leon"
    config_home = _expand(env["MYCEL_CONFIG_HOME"]) if env.get("MYCEL_CONFIG_HOME") else home
    main = _expand(env["LEON_DB_PATH"]) if env.get("LEON_DB_PATH") else home / "leon.db"

    def role_path(variable: str, default: Path) -> Path:
        return _expand(env[variable]) if env.get(variable) else default

    project = env.get("MYCEL_PROJECT_DIR")
    return MycelLocations(
        main=main,
        summary=main.with_name("summary.db"),
        file_ops=main.with_name("file_ops.db"),
        events=main.with_name("events.db"),
        chat=role_path("LEON_CHAT_DB_PATH", main.with_name("chat.db")),
        queue=role_path("LEON_QUEUE_DB_PATH", main.with_name("queue.db")),
        sandbox=role_path("LEON_SANDBOX_DB_PATH", home / "sandbox.db"),
        tasks=config_home / "tasks.db",
        agent_registry=config_home / "agent_registry.db",
        config_home=config_home,
        project_dir=_expand(project) if project else None,
        postgres_url=env.get("LEON_POSTGRES_URL") or None,
        storage_strategy=env.get("LEON_STORAGE_STRATEGY") or None,
        explicit=frozenset(v for v in SQLITE_PATH_VARIABLES.values() if env.get(v)),
    )
