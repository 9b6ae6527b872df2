"""The Config screen for a Mycel dev agent: its layers and sources, dev's strict checks, the keys only main
reads, and the compact_json a save would write (or offer, where the database cannot take it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memory_core.config import ConfigLayerName, ConfigProblem, Severity, redact_secrets
from memory_core.config.dev_layers import (
    DEFAULTS_SOURCE,
    compact_json_source,
    compact_json_with,
    merge_dev_layers,
)
from memory_core.config.dev_schema import COMPACT_JSON_KEYS, COMPACTION, DEV_KEY_SPECS
from memory_core.config.schema import ValueKind
from memory_core.stores.postgres.agent_configs import DevConfigView
from memory_core.stores.write.agent_config_writer import compact_json_sha256, compact_json_text

SAVE_NOTE = (
    "Mycel dev reads compact_json when it builds the agent: the change applies to the agent's next start "
    "(dev's own UI sets only trigger_tokens; every key stored here is merged)."
)


@dataclass(frozen=True, slots=True)
class DevRow:
    key_path: str
    name: str
    value: Any
    layer: str
    kind: str  # "bool" | "int"
    editable: bool  # only memory.compaction keys live in compact_json
    nullable: bool
    description: str


@dataclass(frozen=True, slots=True)
class DevLayerLine:
    name: str
    source: str


def dev_rows(view: DevConfigView) -> tuple[DevRow, ...]:
    return tuple(
        DevRow(
            key_path=key,
            name=key.rsplit(".", 1)[1],
            value=view.effective.value(key),
            layer=view.effective.layer_of(key).value,
            kind="bool" if spec.kind is ValueKind.BOOL else "int",
            editable=key.startswith(COMPACTION + "."),
            nullable=spec.nullable,
            description=spec.description,
        )
        for key, spec in DEV_KEY_SPECS.items()
    )


def dev_layer_lines(view: DevConfigView) -> tuple[DevLayerLine, ...]:
    agent = view.agent
    if agent.compact_json is not None and agent.agent_id:
        agent_line = compact_json_source(agent.agent_id) + (
            f" (row {agent.config_id})" if agent.config_id else ""
        )
    else:
        agent_line = "no compact_json for this agent: nothing merged"
    return (
        DevLayerLine(name=ConfigLayerName.SYSTEM.value, source=DEFAULTS_SOURCE),
        DevLayerLine(name=ConfigLayerName.AGENT.value, source=agent_line),
        DevLayerLine(
            name=ConfigLayerName.OVERRIDE.value, source="constructor overrides (none memory-related)"
        ),
    )


def dev_context(view: DevConfigView) -> dict[str, Any]:
    """What the page's dev card shows."""
    problems = view.effective.problems
    return {
        "view": view,
        "rows": dev_rows(view),
        "layer_lines": dev_layer_lines(view),
        "errors": [p for p in problems if p.severity is Severity.ERROR],
        "warnings": [p for p in problems if p.severity is Severity.WARNING],
        "expected_sha256": compact_json_sha256(view.agent.compact_json) or "",
        "unknown_keys": unknown_keys(view.agent.compact_json),
        "save_note": SAVE_NOTE,
    }


@dataclass(frozen=True, slots=True)
class DevProposal:
    """compact_json as it would be saved, and dev's refusals of it."""

    document: Mapping[str, Any]
    errors: tuple[ConfigProblem, ...]

    @property
    def text(self) -> str:
        """The JSON to offer (secret-looking values hidden: it goes on a page and into the audit log)."""
        return compact_json_text(redact_secrets(self.document))


def unknown_keys(compact_json: Any) -> tuple[str, ...]:
    """Keys of a stored compact_json that dev refuses (the form has no field for them)."""
    if not isinstance(compact_json, Mapping):
        return ()
    return tuple(str(key) for key in compact_json if key not in COMPACT_JSON_KEYS)


def dev_proposal(current: Any, changes: Mapping[str, Any], *, drop_unknown: bool = False) -> DevProposal:
    """The agent's compact_json with the form's values applied, checked as dev would check it.

    drop_unknown removes the keys dev refuses, which the form cannot show as fields; without it they
    stay, and dev's refusal of them stops the save."""
    document = compact_json_with(current, changes)
    if drop_unknown:
        document = {key: value for key, value in document.items() if key in COMPACT_JSON_KEYS}
    return DevProposal(document=document, errors=merge_dev_layers(compact_json=document).errors)
