"""The Config screen, assembled from memory_core (no Django): editor rows, the live what-if, save previews.

A proposal is a set of key → value pairs from the page's URL. It is applied as Mycel's highest layer
(overrides) on top of the files, so the what-if shows exactly what Mycel would run with; saving writes
the same pairs into the chosen layer file.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_core.config import (
    KEY_SPECS,
    ConfigLayer,
    ConfigLayerName,
    ConfigProblem,
    EffectiveConfig,
    KeyChange,
    Severity,
    apply_change,
    document_changes,
)
from memory_core.config.merge import layer_problems
from memory_core.config.schema import ValueKind
from memory_core.context_limits import ContextLimit
from memory_core.messages import Message
from memory_core.pruning import PruneAction
from memory_core.records import ThreadRow
from memory_core.replay import DEFAULT_SUMMARY_CHARS
from memory_core.settings import MemorySettings
from memory_core.stores.locations import MycelLocations
from memory_core.stores.reader import MycelReader
from memory_core.stores.runtime_config import (
    HistoryEntry,
    LayerFile,
    LoadedConfig,
    get_loaded_config,
    list_history,
    list_layer_files,
)
from memory_core.whatif import (
    BadgeChange,
    FleetThread,
    FleetWhatIf,
    ThreadSide,
    ThreadWhatIf,
    compare_sides,
    fleet_whatif,
    thread_side,
)
from mycel_dashboard.charts import CallPoint, context_fill_figure
from mycel_dashboard.data import BoundedCache

# The keys the editor offers, in page order, with the slider range (min, max, step) for numbers.
# Sliders are a convenience only: the number input beside each accepts any value Mycel accepts.
SLIDERS: Mapping[str, tuple[int, int, int]] = {
    "memory.pruning.soft_trim_chars": (100, 20_000, 100),
    "memory.pruning.hard_clear_threshold": (500, 100_000, 500),
    "memory.pruning.protect_recent": (1, 20, 1),
    "memory.compaction.keep_recent_tokens": (1_000, 200_000, 1_000),
    "memory.compaction.reserve_tokens": (1_024, 131_072, 1_024),
    "memory.compaction.min_messages": (1, 200, 1),
    "runtime.context_limit": (0, 1_000_000, 1_000),
    "tools.spill_buffer.default_threshold": (1_000, 500_000, 1_000),
}
TOGGLES: tuple[str, ...] = (
    "memory.pruning.enabled",
    "memory.pruning.trim_tool_results",
    "memory.compaction.enabled",
    "tools.spill_buffer.enabled",
)
THRESHOLD_SLIDER = (1_000, 500_000, 1_000)
SECTIONS: tuple[tuple[str, str], ...] = (
    ("memory.pruning.", "Pruning (layer 1: tool results at every model call)"),
    ("memory.compaction.", "Compaction (layer 2: summary of older history)"),
    ("runtime.", "Context limit"),
    ("tools.spill_buffer", "Spill buffer (large tool outputs to files)"),
)
# Threads the fleet what-if covers (most recently active first); their decoded messages stay cached.
FLEET_LIMIT = 50
_MESSAGES: BoundedCache[tuple[Message, ...]] = BoundedCache(FLEET_LIMIT + 14)
_SIDES: BoundedCache[ThreadSide] = BoundedCache(4 * FLEET_LIMIT)

# Where Mycel's documentation and its code part ways, for the settings on this screen (reference App. B).
DOC_VS_CODE: tuple[str, ...] = (
    "memory.compaction.min_messages is documented as the minimum history before compaction; Mycel's code "
    "never reads it — compaction fires whenever the estimate is above 70 % of the context limit.",
    "The compaction threshold is fixed at 0.7 in Mycel's code (agent construction passes 0.7); there is no "
    "key for it, so memory.compaction.threshold or trigger_tokens are ignored.",
    "pruning.enabled / compaction.enabled: the docs say false disables that layer. Mycel only checks whether "
    "either is true; one false alone changes nothing, and both false makes agent construction fail.",
    "trim_tool_results and reserve_tokens are accepted but never used.",
    'Old-style top-level keys (e.g. "context_limit": 50000 at the top of runtime.json, as in Mycel\'s '
    'examples) are ignored: only the nested form {"runtime": {"context_limit": …}} works. Saves here '
    "always write the nested form.",
    "protect_recent counts tool-calling AI steps, not tool messages; hard-cleared results keep a one-line "
    "marker instead of disappearing.",
    "A thresholds object replaces Mycel's default per-tool thresholds instead of adding to them; "
    "run_command, command_status and Fetch match no real tool.",
)


@dataclass(frozen=True, slots=True)
class Proposal:
    """Valid proposed values (coerced the way Mycel would), and the refusals, keyed by dotted path."""

    values: Mapping[str, Any] = field(default_factory=dict)
    errors: Mapping[str, str] = field(default_factory=dict)

    def changes(self, effective: EffectiveConfig) -> dict[str, Any]:
        """The proposed values that differ from what Mycel runs with now."""
        return {
            key: value
            for key, value in self.values.items()
            if key not in effective.values or effective.value(key) != value
        }


def editor_keys(effective: EffectiveConfig) -> list[str]:
    """Every key the editor shows: memory, context limit, spill buffer and one threshold per known tool."""
    keys = [
        k
        for k in KEY_SPECS
        if k.startswith(("memory.", "tools.spill_buffer.")) or k == "runtime.context_limit"
    ]
    keys.remove("tools.spill_buffer.thresholds")
    keys.extend(f"tools.spill_buffer.thresholds.{tool}" for tool in effective.spill.thresholds)
    return keys


def override_document(changes: Mapping[str, Any]) -> dict[str, Any]:
    """The proposal in Mycel's nested runtime.json form (used as the overrides layer)."""
    document: dict[str, Any] = {}
    for key, value in changes.items():
        document = apply_change(document, key, value)
    return document


@dataclass(frozen=True, slots=True)
class EditorRow:
    key_path: str
    name: str  # the last part of the key, for the label
    kind: str  # "int" or "bool"
    value: Any  # what Mycel runs with now
    proposed: Any  # what the form holds (the raw text when it was refused)
    layer: ConfigLayerName
    slider: tuple[int, int, int] | None
    minimum: int | None
    description: str
    unused: str
    error: str | None
    changed: bool

    @property
    def input_id(self) -> str:
        return "cfg-" + self.key_path.replace(".", "-")


@dataclass(frozen=True, slots=True)
class EditorSection:
    title: str
    rows: tuple[EditorRow, ...]


def _minimum(key_path: str) -> int | None:
    spec = KEY_SPECS.get(key_path)
    if spec is None:
        return 1  # per-tool thresholds: Mycel accepts anything, 1 is the least that makes sense
    if spec.gt is not None:
        return int(spec.gt) + 1
    return int(spec.ge) if spec.ge is not None else None


def editor_sections(
    effective: EffectiveConfig, proposal: Proposal, raw: Mapping[str, str]
) -> tuple[EditorSection, ...]:
    """The editor's rows, grouped the way Mycel's runtime.json is."""
    rows: list[EditorRow] = []
    for key in editor_keys(effective):
        spec = KEY_SPECS.get(key)
        boolean = spec is not None and spec.kind is ValueKind.BOOL
        value = effective.value(key)
        if key in proposal.errors:
            proposed: Any = raw.get(key, "")
        else:
            proposed = proposal.values.get(key, value)
        slider = None if boolean else SLIDERS.get(key, THRESHOLD_SLIDER)
        if slider is not None and isinstance(proposed, int):
            slider = (min(slider[0], proposed), max(slider[1], proposed), slider[2])
        rows.append(
            EditorRow(
                key_path=key,
                name=key.rsplit(".", 1)[-1],
                kind="bool" if boolean else "int",
                value=value,
                proposed=proposed,
                layer=effective.layer_of(key),
                slider=slider,
                minimum=None if boolean else _minimum(key),
                description=spec.description if spec else "Bytes above which this tool's output is spilled.",
                unused=spec.unused if spec else "",
                error=proposal.errors.get(key),
                changed=key not in proposal.errors and proposed != value,
            )
        )
    sections = []
    for prefix, title in SECTIONS:
        chosen = tuple(r for r in rows if r.key_path.startswith(prefix))
        if chosen:
            sections.append(EditorSection(title=title, rows=chosen))
    return tuple(sections)


# -- per-thread settings -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ModelLimit:
    """The context limit Mycel would give one model in use, now and under the proposal."""

    model: str | None
    threads: int
    current: ContextLimit
    proposed: ContextLimit

    @property
    def trigger_tokens(self) -> int:
        return MemorySettings(context_limit=self.current.value).trigger_tokens


class SettingsResolver:
    """MemorySettings per (model, workspace), current and proposed; config files are read once per pair."""

    def __init__(
        self, locations: MycelLocations, overrides: Mapping[str, Any], project_dir: Path | None = None
    ) -> None:
        self.locations = locations
        self.overrides = overrides
        self.project_dir = project_dir
        self._loaded: dict[tuple[str | None, str | None, bool], LoadedConfig] = {}

    def loaded(self, model: str | None, cwd: str | None, *, proposed: bool) -> LoadedConfig:
        key = (model, cwd, proposed)
        if key not in self._loaded:
            project = self.project_dir or (Path(cwd) if cwd else None)
            self._loaded[key] = get_loaded_config(
                self.locations,
                model=model,
                project_dir=project,
                overrides=self.overrides if proposed and self.overrides else None,
            )
        return self._loaded[key]

    def pair(self, row: ThreadRow) -> tuple[MemorySettings, MemorySettings]:
        model = row.configured_model or row.model
        return (
            self.loaded(model, row.cwd, proposed=False).effective.settings,
            self.loaded(model, row.cwd, proposed=True).effective.settings,
        )


def model_limits(threads: Sequence[ThreadRow], resolver: SettingsResolver) -> tuple[ModelLimit, ...]:
    """Every model in use across threads, with Mycel's context limit for it and where that comes from."""
    counts: dict[str | None, int] = {}
    for row in threads:
        model = row.configured_model or row.model
        counts[model] = counts.get(model, 0) + 1
    return tuple(
        ModelLimit(
            model=model,
            threads=count,
            current=resolver.loaded(model, None, proposed=False).context_limit,
            proposed=resolver.loaded(model, None, proposed=True).context_limit,
        )
        for model, count in sorted(counts.items(), key=lambda item: (-item[1], item[0] or ""))
    )


# -- the what-if ---------------------------------------------------------------------------------------


def cached_messages(reader: MycelReader, row: ThreadRow) -> tuple[Message, ...]:
    """The head checkpoint's messages, decoded once per head (slider moves never re-read SQLite)."""

    def decode() -> tuple[Message, ...]:
        state = reader.get_state(row.thread_id, row.head_checkpoint_id)
        return state.value.messages if state.value is not None else ()

    return _MESSAGES.get_or_compute(
        (str(reader.locations.main), row.thread_id, row.head_checkpoint_id), decode
    )


def cached_side(
    reader: MycelReader,
    row: ThreadRow,
    messages: Sequence[Message],
    settings: MemorySettings,
    summary_chars: int,
) -> ThreadSide:
    key = (str(reader.locations.main), row.thread_id, row.head_checkpoint_id, settings, summary_chars)
    return _SIDES.get_or_compute(
        key, lambda: thread_side(messages, settings=settings, summary_chars=summary_chars)
    )


def clear_caches() -> None:
    _MESSAGES.clear()
    _SIDES.clear()


@dataclass(frozen=True, slots=True)
class ThreadChoice:
    row: ThreadRow
    label: str


@dataclass(frozen=True, slots=True)
class ChosenThread:
    row: ThreadRow
    whatif: ThreadWhatIf
    figure: dict[str, Any] | None
    message_count: int

    @property
    def badge_rows(self) -> list[tuple[BadgeChange, str, str]]:
        """The changed results with their badge labels, as the Thread screen words them."""
        return [(c, BADGE_LABELS[c.before], BADGE_LABELS[c.after]) for c in self.whatif.badge_changes]


@dataclass(frozen=True, slots=True)
class WhatIf:
    chosen: ChosenThread | None
    fleet: FleetWhatIf
    fleet_threads: int  # threads covered
    all_threads: int
    elapsed_ms: float
    thread_ms: float  # the chosen thread alone
    problems: tuple[str, ...] = ()


def fleet_rows(threads: Sequence[ThreadRow]) -> list[ThreadRow]:
    """The threads the fleet what-if covers: ones with messages, most recently active first."""
    with_messages = [t for t in threads if t.head_checkpoint_id and t.messages]
    with_messages.sort(key=lambda t: (t.updated_at is not None, t.updated_at), reverse=True)
    return with_messages[:FLEET_LIMIT]


def default_thread(threads: Sequence[ThreadRow]) -> str | None:
    """The thread shown when none is chosen: the longest one (the most for a what-if to show)."""
    candidates = [t for t in threads if t.head_checkpoint_id and t.messages]
    return max(candidates, key=lambda t: t.messages).thread_id if candidates else None


def compute_whatif(
    reader: MycelReader,
    threads: Sequence[ThreadRow],
    resolver: SettingsResolver,
    *,
    chosen_id: str | None,
    summary_chars: int = DEFAULT_SUMMARY_CHARS,
    thread_url: Callable[[str, int], str],
) -> WhatIf:
    """The chosen thread's what-if (with its chart) and the fleet totals, under current vs proposed."""
    started = time.perf_counter()
    problems: list[str] = []
    chosen: ChosenThread | None = None
    thread_ms = 0.0
    covered = fleet_rows(threads)
    by_id = {t.thread_id: t for t in threads}
    targets = list(covered)
    if chosen_id in by_id and by_id[chosen_id] not in covered:
        targets.append(by_id[chosen_id])
    items: list[FleetThread] = []
    for row in targets:
        thread_started = time.perf_counter()
        try:
            messages = cached_messages(reader, row)
            current, proposed = resolver.pair(row)
            chars = summary_chars if row.thread_id == chosen_id else DEFAULT_SUMMARY_CHARS
            now = cached_side(reader, row, messages, current, chars)
            then = now if proposed == current else cached_side(reader, row, messages, proposed, chars)
            whatif = compare_sides(messages, now, then)
        except Exception as exc:  # noqa: BLE001 - one unreadable thread must not take the page down
            problems.append(f"{row.thread_id}: could not compute the what-if ({type(exc).__name__}: {exc})")
            continue
        if row in covered:
            items.append(FleetThread(thread_id=row.thread_id, whatif=whatif))
        if row.thread_id == chosen_id:
            chosen = ChosenThread(
                row=row,
                whatif=whatif,
                figure=whatif_figure(whatif, lambda index, tid=row.thread_id: thread_url(tid, index)),
                message_count=len(messages),
            )
            thread_ms = (time.perf_counter() - thread_started) * 1000
    fleet = fleet_whatif(items)
    return WhatIf(
        chosen=chosen,
        fleet=fleet,
        fleet_threads=len(items),
        all_threads=len(threads),
        elapsed_ms=(time.perf_counter() - started) * 1000,
        thread_ms=thread_ms,
        problems=tuple(problems),
    )


def _points(side: ThreadSide, url: Callable[[int], str]) -> list[CallPoint]:
    return [
        CallPoint(
            call=number,
            message_index=call.index,
            stored=call.stored_tokens,
            after_pruning=call.pruned_tokens,
            sent=call.sent_tokens,
            tiktoken=None,
            input_tokens=call.provider_input_tokens,
            compacted=call.compacted,
            pruned=bool(call.soft_trimmed or call.hard_cleared),
            url=url(call.index),
        )
        for number, call in enumerate(side.calls, start=1)
    ]


def whatif_figure(whatif: ThreadWhatIf, url: Callable[[int], str]) -> dict[str, Any] | None:
    """The thread's context-fill chart under the current config, with the proposal's traces overlaid."""
    current, proposed = whatif.current, whatif.proposed
    if not current.calls:
        return None
    figure = context_fill_figure(
        _points(current, url),
        trigger_tokens=current.settings.trigger_tokens,
        context_limit=current.settings.context_limit,
    )
    if proposed.settings == current.settings:
        return figure
    x = list(range(1, len(proposed.calls) + 1))
    hover = "call %{x}<br>%{fullData.name}: %{y:,} tokens<extra></extra>"
    figure["data"].extend(
        [
            {
                "type": "scatter",
                "mode": "lines",
                "name": "proposed: after pruning",
                "x": x,
                "y": [c.pruned_tokens for c in proposed.calls],
                "line": {"width": 1.5, "dash": "dashdot"},
                "hovertemplate": hover,
                "meta": "proposed",
            },
            {
                "type": "scatter",
                "mode": "lines",
                "name": "proposed: sent to the model",
                "x": x,
                "y": [c.sent_tokens for c in proposed.calls],
                "line": {"width": 3, "dash": "dash"},
                "hovertemplate": hover,
                "meta": "proposed",
            },
        ]
    )
    compacted = [(n, c) for n, c in enumerate(proposed.calls, start=1) if c.compacted]
    if compacted:
        figure["data"].append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": "proposed: compaction ran",
                "x": [n for n, _ in compacted],
                "y": [c.sent_tokens for _, c in compacted],
                "marker": {"symbol": "star-open", "size": 12},
                "hovertemplate": "call %{x}: compaction would run<extra></extra>",
                "meta": "proposed",
            }
        )
    layout = figure["layout"]
    if proposed.settings.trigger_tokens != current.settings.trigger_tokens:
        layout["shapes"].append(_proposed_line(proposed.settings.trigger_tokens, "trigger"))
        layout["annotations"].append(
            _proposed_label(len(x), proposed.settings.trigger_tokens, "proposed trigger")
        )
    if proposed.settings.context_limit != current.settings.context_limit:
        layout["shapes"].append(_proposed_line(proposed.settings.context_limit, "limit"))
        layout["annotations"].append(
            _proposed_label(len(x), proposed.settings.context_limit, "proposed limit")
        )
    return figure


def _proposed_line(y: int, role: str) -> dict[str, Any]:
    return {
        "type": "line",
        "xref": "paper",
        "x0": 0,
        "x1": 1,
        "y0": y,
        "y1": y,
        "line": {"dash": "dot", "width": 1},
        "name": role,
    }


def _proposed_label(x: int, y: int, text: str) -> dict[str, Any]:
    return {
        "x": x,
        "y": y,
        "text": f"{text} ({y:,})",
        "showarrow": False,
        "xanchor": "left",
        "yanchor": "top",
    }


BADGE_LABELS: Mapping[PruneAction, str] = {
    PruneAction.UNCHANGED: "unchanged",
    PruneAction.PROTECTED: "protected",
    PruneAction.SOFT_TRIMMED: "soft-trimmed",
    PruneAction.HARD_CLEARED: "hard-cleared",
}


# -- saving --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SavePreview:
    """What saving the proposal into one layer file would change, and what the file held when read."""

    layer: LayerFile
    document: Mapping[str, Any]  # the new document (nested form, every other key kept)
    changes: tuple[KeyChange, ...]
    shadowed: tuple[str, ...]  # keys a higher layer sets, so this save would not change what Mycel runs
    problems: tuple[ConfigProblem, ...]  # findings about the new file

    @property
    def sha256(self) -> str:
        return self.layer.file.sha256 or ""


def layer_file(
    locations: MycelLocations, name: ConfigLayerName, *, project_dir: Path | None
) -> LayerFile | None:
    """One layer file as read now (None when the project layer has no known folder)."""
    return next((f for f in list_layer_files(locations, project_dir=project_dir) if f.name is name), None)


def save_preview(layer: LayerFile, changes: Mapping[str, Any], effective: EffectiveConfig) -> SavePreview:
    """The new document for `layer` with `changes` applied. Raises ValueError for a value Mycel would refuse."""
    document: dict[str, Any] = dict(layer.file.document)
    for key, value in changes.items():
        document = apply_change(document, key, value)
    shadowed = tuple(
        key
        for key in changes
        if key in effective.values
        and layer.name is ConfigLayerName.USER
        and effective.layer_of(key) in (ConfigLayerName.PROJECT, ConfigLayerName.OVERRIDE)
    )
    problems = tuple(
        p
        for p in layer_problems(ConfigLayer(name=layer.name, document=document))
        if p.severity is not Severity.INFO
    )
    return SavePreview(
        layer=layer,
        document=document,
        # An empty file shows up as one leaf with an empty path: not a change to show.
        changes=document_changes(layer.file.document, document),
        shadowed=shadowed,
        problems=problems,
    )


@dataclass(frozen=True, slots=True)
class LayerHistory:
    layer: LayerFile
    entries: tuple[HistoryEntry, ...]


def layer_histories(layers: Sequence[LayerFile]) -> tuple[LayerHistory, ...]:
    return tuple(LayerHistory(layer=layer, entries=list_history(layer.path)) for layer in layers)
