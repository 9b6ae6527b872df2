"""Saving a Mycel dev agent's memory override into `agent.agent_configs.compact_json` (reference §4.8).

One transaction: the table and its columns are checked in pg_catalog, the row is locked
(`SELECT … FOR UPDATE`) and must still hold the value the form was rendered with, then one UPDATE.
Where the table, the column or the privilege is missing, nothing is written and the caller offers the
exact JSON instead (`CompactJsonRefused.offer_json`). Dev never reads runtime.json, so this never writes one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import errors
from psycopg.types.json import Jsonb

from memory_core.config import contains_redaction
from memory_core.config.dev_layers import merge_dev_layers
from memory_core.stores.postgres.agent_configs import TABLE, compact_table_ready
from memory_core.stores.postgres.connect import mask_url


class CompactJsonRefused(Exception):
    """Nothing was written. offer_json: the reason is the database (no table/column/privilege), so the
    JSON should be offered for someone to apply by hand; otherwise reload or fix the value."""

    def __init__(self, message: str, *, offer_json: bool = False) -> None:
        super().__init__(message)
        self.offer_json = offer_json


@dataclass(frozen=True, slots=True, kw_only=True)
class SavedCompactJson:
    config_id: str
    before: Any
    after: Mapping[str, Any]


def compact_json_text(document: Mapping[str, Any]) -> str:
    """The exact JSON to put in the column (what the page offers when it cannot write)."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False)


def compact_json_sha256(value: Any) -> str | None:
    """A digest of a compact_json as read (None: there was none), for stale-edit checks: the form carries
    this, not the value, so nothing stored reaches the page twice."""
    if value is None:
        return None
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def apply_compact_json(
    url: str,
    *,
    config_id: str,
    expected_sha256: str | None,
    document: Mapping[str, Any],
    timeout_s: float,
) -> SavedCompactJson:
    """Replace one agent's compact_json if its digest is still `expected_sha256` (compact_json_sha256 of
    the value read when the form was rendered). Raises CompactJsonRefused with nothing written otherwise."""
    refusals = merge_dev_layers(compact_json=document).errors  # keys and values, as dev checks them
    if refusals:
        raise CompactJsonRefused(f"Refusing to save: {refusals[0].message}")
    if contains_redaction(document):
        raise CompactJsonRefused("Refusing to save: the document contains hidden (redacted) values.")
    try:
        with (
            psycopg.connect(url, prepare_threshold=None, connect_timeout=max(1, round(timeout_s))) as conn,
            conn.transaction(),
        ):
            conn.execute("SELECT set_config('statement_timeout', %s, true)", (f"{int(timeout_s * 1000)}",))
            columns = _columns(conn)
            if not columns:
                raise CompactJsonRefused(f"There is no {TABLE} table to write into.", offer_json=True)
            if not compact_table_ready(columns):
                raise CompactJsonRefused(
                    f"{TABLE} has no id and compact_json jsonb columns.", offer_json=True
                )
            row = conn.execute(
                "SELECT compact_json FROM agent.agent_configs WHERE id = %s FOR UPDATE", (config_id,)
            ).fetchone()
            if row is None:
                raise CompactJsonRefused(f"{TABLE} has no row {config_id} (deleted since you opened it?).")
            if compact_json_sha256(row[0]) != expected_sha256:
                raise CompactJsonRefused(
                    f"{TABLE} row {config_id} was changed since you opened it; reload to see the new value."
                )
            conn.execute(
                "UPDATE agent.agent_configs SET compact_json = %s WHERE id = %s",
                (Jsonb(dict(document)), config_id),
            )
    except errors.InsufficientPrivilege as exc:
        raise CompactJsonRefused(
            f"The role may not write {TABLE} ({_first_line(exc)}); nothing was changed.", offer_json=True
        ) from None
    except errors.ReadOnlySqlTransaction as exc:
        raise CompactJsonRefused(
            f"The server refused the write ({_first_line(exc)}); nothing was changed.", offer_json=True
        ) from None
    except psycopg.Error as exc:
        raise CompactJsonRefused(f"{mask_url(url)}: {_first_line(exc)}; nothing was changed.") from None
    return SavedCompactJson(config_id=config_id, before=row[0], after=dict(document))


def _columns(conn: psycopg.Connection[Any]) -> dict[str, str]:
    rows = conn.execute(
        """
        SELECT a.attname, format_type(a.atttypid, a.atttypmod)
        FROM pg_catalog.pg_attribute a
        JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
        JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'agent' AND c.relname = 'agent_configs' AND a.attnum > 0 AND NOT a.attisdropped
        """
    ).fetchall()
    return {str(name): str(kind) for name, kind in rows}


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
