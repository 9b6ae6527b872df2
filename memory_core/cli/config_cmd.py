"""`mycel-memory config`: Mycel's memory config from the command line — show, set (with a diff), history.

    mycel-memory config [--json]
    mycel-memory config --thread ID | --agent ID [--json]      # a Mycel dev agent's profile
    mycel-memory config set KEY VALUE --layer user|project [--dry-run] [--json]
    mycel-memory config history --layer user|project [--json]
    mycel-memory config restore VERSION --layer user|project [--json]

VALUE is read as JSON when it parses (2000, true, null), else as text; null removes the key from the
layer. Writes go through the same guarded save as the dashboard: nested form, backup, atomic replace.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memory_core import figures
from memory_core.app.audit import AuditRecord
from memory_core.cli.audited import actor_of, run_audited
from memory_core.cli.common import CliError, print_json
from memory_core.config import (
    ConfigLayerName,
    ConfigProblem,
    KeyChange,
    Severity,
    apply_change,
    changes_words,
    document_changes,
    redact_secrets,
)
from memory_core.context_limits import ContextLimit
from memory_core.memory_settings import compaction_trigger
from memory_core.stores.locations import MycelLocations, resolve_locations
from memory_core.stores.reader import MycelReader
from memory_core.stores.runtime_config import (
    ConfigFileError,
    LayerFile,
    SavedLayer,
    get_loaded_config,
    list_history,
    list_layer_files,
)
from memory_core.stores.thread_list.derived import default_folder
from memory_core.stores.write.config_files import apply_layer, apply_restore

RESTART_NOTE = "Mycel applies memory settings when it builds an agent: restart Mycel's backend to use them."


def _project_dir(args: argparse.Namespace, locations: MycelLocations) -> Path:
    given: Path | None = args.project_dir
    return given or locations.project_dir or Path(os.getcwd())


def _layer(args: argparse.Namespace, locations: MycelLocations) -> LayerFile:
    name = ConfigLayerName(args.layer)
    for layer in list_layer_files(locations, project_dir=_project_dir(args, locations)):
        if layer.name is name:
            if layer.file.problems:
                raise CliError(layer.file.problems[0].message)
            return layer
    raise CliError(f"no {name.value} layer file is known")  # pragma: no cover - user and project always exist


def _problem_json(problem: ConfigProblem) -> dict[str, Any]:
    return {
        "severity": problem.severity.value,
        "key_path": problem.key_path,
        "message": problem.message,
        "layer": problem.layer.value if problem.layer else None,
    }


def _limit_json(limit: ContextLimit, threads: int) -> dict[str, Any]:
    return {
        "model": limit.model,
        "resolved_model": limit.resolved_model,
        "context_limit": limit.value,
        "trigger_tokens": compaction_trigger(limit.value),
        "source": limit.source.value,
        "explanation": limit.explanation,
        "threads": threads,
    }


def _models_in_use(locations: MycelLocations) -> dict[str | None, int]:
    counts: dict[str | None, int] = {}
    for row in MycelReader(locations, facts_folder=default_folder(os.environ)).list_threads().value:
        model = row.configured_model or row.model
        counts[model] = counts.get(model, 0) + 1
    return counts


def _memory_keys(key_path: str) -> bool:
    return key_path.startswith(("memory.", "tools.spill_buffer")) or key_path == "runtime.context_limit"


def run_show(args: argparse.Namespace) -> int:
    if getattr(args, "thread", None) or getattr(args, "agent", None):
        return run_dev_show(args)
    locations = resolve_locations()
    project = _project_dir(args, locations)
    loaded = get_loaded_config(locations, project_dir=project)
    effective = loaded.effective
    values = {
        key: {"value": item.value, "layer": item.layer.value}
        for key, item in effective.values.items()
        if _memory_keys(key)
    }
    limits = []
    for model, count in sorted(_models_in_use(locations).items(), key=lambda item: (-item[1], item[0] or "")):
        limits.append(
            _limit_json(get_loaded_config(locations, model=model, project_dir=project).context_limit, count)
        )
    problems = [p for p in loaded.problems if p.severity is not Severity.INFO]
    if args.json:
        print_json(
            {
                "layers": [
                    {"name": "system", "path": None, "exists": True, "sha256": None},
                    *(
                        {
                            "name": layer.name.value,
                            "path": str(layer.path),
                            "exists": layer.file.exists,
                            "sha256": layer.file.sha256,
                        }
                        for layer in loaded.layers
                    ),
                ],
                "values": redact_secrets(values),
                "problems": [_problem_json(p) for p in problems],
                "context_limits": limits,
            }
        )
        return 0
    for layer in loaded.layers:
        state = "" if layer.file.exists else "  (does not exist)"
        print(f"{layer.name.value:8} {layer.path}{state}")
    print()
    shown = {
        k: v for k, v in values.items() if k != "tools.spill_buffer.thresholds"
    }  # one line per tool instead
    width = max(len(k) for k in shown)
    for key, item in shown.items():
        print(f"{key:{width}}  {json.dumps(redact_secrets(item['value'])):>12}  {item['layer']}")
    print()
    print("Context limit per model in use:")
    for limit in limits or [_limit_json(loaded.context_limit, 0)]:
        print(
            f"  {limit['model'] or '(none)'}: {figures.count(limit['context_limit'])} — {limit['explanation']}"
        )
    _print_problems(problems)
    return 0


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _change_json(change: KeyChange) -> dict[str, Any]:
    return {
        "key_path": change.key_path,
        "before": change.before,
        "after": change.after,
        "added": change.added,
        "removed": change.removed,
    }


def _shown(value: Any, missing: bool, absent: str = "(absent)") -> str:
    return absent if missing else json.dumps(redact_secrets(value))


def _saved_state(document: Any, saved: SavedLayer) -> dict[str, Any]:
    """What the audit row keeps after a save or a restore: the file's hash, its backup, the document."""
    state: dict[str, Any] = {"sha256": saved.sha256, "backup": str(saved.backup) if saved.backup else None}
    if document is not None:
        state["document"] = document
    return state


def run_set(args: argparse.Namespace) -> int:
    locations = resolve_locations()
    layer = _layer(args, locations)
    value = _parse_value(args.value)
    try:
        document = apply_change(layer.file.document, args.key, value)
    except ValueError as exc:
        raise CliError(f"refused, nothing written: {exc}") from exc
    changes = document_changes(layer.file.document, document)
    written = False
    backup: str | None = None
    if changes and not args.dry_run:
        # Worded as the pages' saves are on the Audit screen (what Mycel ran with for a key the file lacked).
        effective = get_loaded_config(locations, project_dir=_project_dir(args, locations)).effective
        described = changes_words(changes, effective)
        intent = AuditRecord(
            action="config_save",
            actor=actor_of(args),
            target=str(layer.path),
            message=f"{described} (from the command line)",
            before={"document": layer.file.document, "sha256": layer.file.sha256},
        )
        try:
            saved = run_audited(
                args,
                intent,
                lambda: apply_layer(
                    layer.path,
                    document,
                    expected_sha256=layer.file.sha256,
                    locations=locations,
                    project_dir=_project_dir(args, locations),
                ),
                outcome=lambda done: (described, _saved_state(document, done)),
                refusals=(ConfigFileError,),
            )
        except ConfigFileError as exc:
            raise CliError(str(exc)) from exc
        written = True
        backup = str(saved.backup) if saved.backup else None
    if args.json:
        print_json(
            {
                "layer": layer.name.value,
                "path": str(layer.path),
                "changes": [redact_secrets(_change_json(c)) for c in changes],
                "dry_run": args.dry_run,
                "written": written,
                "backup": backup,
                "note": RESTART_NOTE if written else None,
            }
        )
        return 0
    if not changes:
        print(f"{layer.path} already has {args.key} = {json.dumps(value)}; nothing to write.")
        return 0
    for change in changes:
        print(
            f"{change.key_path}: {_shown(change.before, change.added)} -> {_shown(change.after, change.removed, '(removed)')}"
        )
    if args.dry_run:
        print(f"dry run: {layer.path} was not changed.")
    else:
        print(f"wrote {layer.path}" + (f" (previous version: {backup})" if backup else ""))
        print(RESTART_NOTE)
    return 0


def run_history(args: argparse.Namespace) -> int:
    locations = resolve_locations()
    layer = _layer(args, locations)
    entries = list_history(layer.path)
    if args.json:
        print_json(
            {
                "layer": layer.name.value,
                "path": str(layer.path),
                "versions": [
                    {
                        "version": e.path.name,
                        "saved_at": e.saved_at.isoformat(),
                        "size": e.size,
                        "sha256": None if e.absent else e.sha256,
                        "absent": e.absent,
                    }
                    for e in entries
                ],
            }
        )
        return 0
    if not entries:
        print(f"no earlier versions of {layer.path}")
    for entry in entries:
        what = (
            "no file (the next save created it)"
            if entry.absent
            else f"{entry.size:>7} bytes  {entry.sha256[:12]}"
        )
        print(f"{entry.path.name}  {entry.saved_at:%Y-%m-%d %H:%M:%S} UTC  {what}")
    return 0


def run_restore(args: argparse.Namespace) -> int:
    locations = resolve_locations()
    layer = _layer(args, locations)
    intent = AuditRecord(
        action="config_restore",
        actor=actor_of(args),
        target=str(layer.path),
        message=f"restore {args.version} (from the command line)",
        before={"document": layer.file.document, "sha256": layer.file.sha256},
    )
    try:
        saved = run_audited(
            args,
            intent,
            lambda: apply_restore(
                layer.path,
                args.version,
                expected_sha256=layer.file.sha256,
                locations=locations,
                project_dir=_project_dir(args, locations),
            ),
            outcome=lambda done: (f"restored {args.version}", _saved_state(None, done)),
            refusals=(ConfigFileError,),
        )
    except ConfigFileError as exc:
        raise CliError(str(exc)) from exc
    if args.json:
        print_json(
            {
                "layer": layer.name.value,
                "path": str(saved.path),
                "restored": args.version,
                "backup": str(saved.backup) if saved.backup else None,
            }
        )
    else:
        print(f"restored {args.version} into {saved.path}")
        print(RESTART_NOTE)
    sys.stdout.flush()
    return 0


def _dev_thread_layout(locations: MycelLocations, thread_id: str) -> str | None:
    rows = MycelReader(locations, facts_folder=default_folder(os.environ)).list_threads().value
    return next((row.layout for row in rows if row.thread_id == thread_id), None)


def run_dev_show(args: argparse.Namespace) -> int:
    """A Mycel dev agent's memory config: defaults → its compact_json → overrides, with each value's source."""
    from memory_core.config.dev_layers import DEFAULTS_SOURCE, compact_json_source
    from memory_core.stores.postgres.agent_configs import get_dev_config

    locations = resolve_locations()
    thread_id: str | None = args.thread
    if thread_id and _dev_thread_layout(locations, thread_id) == "main":
        raise CliError(
            f"thread {thread_id} is in Mycel main's layout: its config is the runtime.json layers "
            "(run `mycel-memory config` without --thread)"
        )
    view = get_dev_config(
        locations,
        thread_id=thread_id,
        agent_id=args.agent,
        project_dir=_project_dir(args, locations),
        timeout_s=5.0,
    )
    agent = view.agent
    effective = view.effective
    layers = [
        {"name": "system", "source": DEFAULTS_SOURCE},
        {
            "name": "agent",
            "source": compact_json_source(agent.agent_id) if agent.agent_id else None,
            "config_id": agent.config_id,
            "compact_json": agent.compact_json,
        },
        {"name": "override", "source": "constructor overrides (none memory-related)"},
    ]
    values = {key: {"value": item.value, "layer": item.layer.value} for key, item in effective.values.items()}
    problems = [p for p in effective.problems if p.severity is not Severity.INFO]
    if args.json:
        print_json(
            redact_secrets(
                {
                    "profile": "dev",
                    "thread_id": thread_id,
                    "agent_id": agent.agent_id,
                    "layers": layers,
                    "values": values,
                    "problems": [_problem_json(p) for p in problems],
                    "notes": list(agent.notes),
                    "read_problems": list(agent.problems),
                    "writable": agent.writable,
                }
            )
        )
        return 0
    print(
        f"Mycel dev profile for agent {agent.agent_id or '(unknown)'}"
        + (f" (thread {thread_id})" if thread_id else "")
    )
    print(f"system   {DEFAULTS_SOURCE}")
    agent_source = compact_json_source(agent.agent_id) if agent.agent_id else "no agent"
    print(f"agent    {agent_source}" + (f" (row {agent.config_id})" if agent.config_id else "  (no row)"))
    for note in (*agent.notes, *agent.problems):
        print(f"         {note}")
    print()
    width = max(len(k) for k in values)
    for key, item in values.items():
        print(f"{key:{width}}  {json.dumps(redact_secrets(item['value'])):>8}  {item['layer']}")
    _print_problems(problems)
    return 0


def _print_problems(problems: Sequence[ConfigProblem]) -> None:
    if problems:
        print()
        for problem in problems:
            where = f" [{problem.layer.value}]" if problem.layer else ""
            print(f"{problem.severity.value}: {problem.key_path or 'file'}{where}: {problem.message}")
