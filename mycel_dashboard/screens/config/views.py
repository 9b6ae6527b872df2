"""Screen 5: Mycel's memory config — effective values with layers, editor, live what-if, save, history.

Every write reports itself with its way back: a save links to restoring the version it replaced, a restore
to the version it replaced in turn; a restore is previewed (a diff) and confirmed, as a save is. After a
write the page is read again, so the editor's layers and "now" values are the files' new ones."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpRequest, HttpResponse, QueryDict
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from memory_core.app.audit import AuditUnavailable, audited_write
from memory_core.app.thread_settings import project_folder
from memory_core.config import ConfigLayerName, Severity, changes_words
from memory_core.records import ThreadRow
from memory_core.stores.locations import MycelLocations
from memory_core.stores.postgres.agent_configs import DevConfigView, get_dev_config
from memory_core.stores.reader import MycelReader
from memory_core.stores.runtime_config import (
    ABSENT_SUFFIX,
    ConfigFileError,
    LoadedConfig,
    SavedLayer,
    get_loaded_config,
    list_layer_files,
)
from memory_core.stores.write.agent_config_writer import CompactJsonRefused, apply_compact_json
from memory_core.stores.write.config_files import apply_layer, apply_restore
from mycel_dashboard.models import AuditEntry
from mycel_dashboard.screens.config.dev import dev_context, dev_proposal
from mycel_dashboard.screens.config.editor import DOC_VS_CODE, Proposal, editor_keys, editor_sections
from mycel_dashboard.screens.config.fleet import ConfigThreads, config_threads
from mycel_dashboard.screens.config.forms import ConfigForm, DevConfigForm, RestoreForm
from mycel_dashboard.screens.config.resolver import model_limits
from mycel_dashboard.screens.config.save import (
    SavePreview,
    layer_file,
    layer_histories,
    override_document,
    project_folder_problem,
    restore_preview,
    save_preview,
)
from mycel_dashboard.screens.config.whatif import compute_whatif
from mycel_dashboard.screens.shared.forms import RULES_CHOICES, RulesForm
from mycel_dashboard.screens.shared.memory import SettingsResolver, problem_text
from mycel_dashboard.web.audit import AuditTrail
from mycel_dashboard.web.fleet_index import DashboardFleetIndex
from mycel_dashboard.web.fleet_models import indexed_model_counts
from mycel_dashboard.web.forms import error_text
from mycel_dashboard.web.links import timeline_urls
from mycel_dashboard.web.permissions import operator_required
from mycel_dashboard.web.render import render_screen, requested_partial, wants_partial
from mycel_dashboard.web.source import DataSource, open_source

TEMPLATE = "config.html"
# Parts of the page an htmx request may ask for by target id (everything else gets the what-if).
_PARTS = {"whatif", "effective", "history", "save-panel"}
SAVED_EVENT = "config-saved"
RESTART_NOTE = (
    "Mycel reads runtime.json only when it builds an agent: restart Mycel's backend (or delete the "
    "thread's agent) before the new memory settings apply."
)


@dataclass
class _State:
    """What every config request reads first: the data home, the threads, the files and the proposal."""

    source: DataSource
    reader: MycelReader
    threads: list[ThreadRow]
    fleet: ConfigThreads  # how the threads were chosen: every one, or the newest of a fleet
    chosen: ThreadRow | None
    project_dir: Path | None
    loaded: LoadedConfig  # the files as Mycel would merge them now (no model: Mycel's web default)
    form: ConfigForm
    proposal: Proposal
    changes: dict[str, Any]
    problems: list[str]
    dev: (
        DevConfigView | None
    )  # a Mycel dev agent (?agent=, or a dev thread): its own config, not runtime.json

    @property
    def locations(self) -> MycelLocations:
        return self.source.locations


def _state(data: QueryDict) -> _State:
    source, reader = open_source()
    # The thread picks the project folder, which picks the files, which pick the editor's keys.
    first = ConfigForm(data, keys=())
    fleet = config_threads(
        reader,
        first.chosen_thread,
        index=DashboardFleetIndex(),
        index_from=settings.DASHBOARD_FLEET_INDEX_FROM,
        model_counts=indexed_model_counts,
    )
    problems = [problem_text(p) for p in fleet.problems]
    threads = fleet.threads
    chosen_id = first.chosen_thread or fleet.longest
    chosen = next((t for t in threads if t.thread_id == chosen_id), None)
    project_dir = project_folder(source.locations, chosen)
    loaded = get_loaded_config(source.locations, project_dir=project_dir)
    form = ConfigForm(data, keys=editor_keys(loaded.effective))
    proposal = form.proposal()
    return _State(
        source=source,
        reader=reader,
        threads=threads,
        fleet=fleet,
        chosen=chosen,
        project_dir=project_dir,
        loaded=loaded,
        form=form,
        proposal=proposal,
        changes=proposal.changes(loaded.effective),
        problems=problems,
        dev=_dev_view(data, source.locations, chosen, project_dir),
    )


def _dev_view(
    data: QueryDict, locations: MycelLocations, chosen: ThreadRow | None, project_dir: Path | None
) -> DevConfigView | None:
    form = DevConfigForm(data)
    form.is_valid()
    agent_id = form.cleaned_data.get("agent") or None
    dev_thread = chosen.thread_id if chosen is not None and chosen.layout == "dev" else None
    if agent_id is None and dev_thread is None:
        return None
    return get_dev_config(
        locations,
        agent_id=agent_id,
        thread_id=None if agent_id else dev_thread,
        project_dir=project_dir,
        timeout_s=settings.DASHBOARD_STORE_TIMEOUT_MS / 1000,
    )


def _part(request: HttpRequest) -> str | None:
    return requested_partial(request, _PARTS, default="whatif")


def _context(request: HttpRequest, state: _State, part: str | None) -> dict[str, Any]:
    overrides = override_document(state.changes)
    resolver = SettingsResolver(state.locations, overrides)
    proposed = get_loaded_config(state.locations, project_dir=state.project_dir, overrides=overrides or None)
    chosen_id = state.chosen.thread_id if state.chosen else None

    whatif = None
    rules, trigger_tokens, rules_notes = RulesForm(request.GET).choice()
    if part in (None, "whatif"):
        whatif = compute_whatif(
            state.reader,
            state.threads,
            resolver,
            chosen_id=chosen_id,
            thread_urls=timeline_urls,
            rules=rules,
            trigger_tokens=trigger_tokens,
            all_threads=state.fleet.all_threads,
        )
    effective = state.loaded.effective
    project_problem = project_folder_problem(state.locations, state.project_dir)
    return {
        "source": state.source,
        "problems": state.problems,
        # The full page shows store problems at its top; the what-if partial alone must say them itself.
        "partial_problems": state.problems if part == "whatif" else [],
        "loaded": state.loaded,
        "effective": effective,
        "file_problems": [p for p in state.loaded.problems if p.severity is not Severity.INFO],
        "sections": editor_sections(effective, state.proposal, state.form.data),
        "proposal": state.proposal,
        "changes": [
            (k, effective.values[k].value if k in effective.values else None, v)
            for k, v in state.changes.items()
        ],
        # Only what the proposal brings: findings on a proposed key, or combinations it decides.
        "proposed_problems": [
            p
            for p in proposed.effective.problems
            if p.severity is not Severity.INFO
            and (p.key_path in state.changes or p.layer is ConfigLayerName.OVERRIDE)
        ],
        "model_limits": (
            model_limits(state.threads, resolver, counts=state.fleet.model_counts) if part is None else ()
        ),
        "fleet": state.fleet,
        "whatif": whatif,
        "whatif_rules": rules.value if rules else "",
        "whatif_notes": rules_notes,
        "rules_choices": RULES_CHOICES,
        "threads": [t for t in state.threads if t.head_checkpoint_id and t.messages],
        "chosen": state.chosen,
        "layers": state.loaded.layers,
        "project_dir": state.project_dir,
        "project_problem": project_problem,
        # The project radio is off when its folder is not here: the user layer is then the one checked.
        "chosen_layer": ConfigLayerName.USER.value if project_problem else state.form.chosen_layer.value,
        "histories": layer_histories(state.loaded.layers) if part in (None, "history") else (),
        "doc_vs_code": DOC_VS_CODE,
        "restart_note": RESTART_NOTE,
        "dev": dev_context(state.dev) if state.dev is not None else None,
    }


@require_GET
def config_page(request: HttpRequest) -> HttpResponse:
    state = _state(request.GET)
    part = _part(request)
    if part == "save-panel":
        part = "whatif"
    return render_screen(request, TEMPLATE, part, _context(request, state, part))


def _preview(state: _State) -> tuple[SavePreview | None, str | None]:
    if state.dev is not None:
        return None, (
            "Mycel dev does not read runtime.json: this agent's memory config is its compact_json "
            "(save it in the Mycel dev card)."
        )
    layer = layer_file(state.locations, state.form.chosen_layer, project_dir=state.project_dir)
    if layer is None:
        return None, "There is no project folder: set MYCEL_PROJECT_DIR or choose a thread with a workspace."
    if layer.name is ConfigLayerName.PROJECT and (
        missing := project_folder_problem(state.locations, state.project_dir)
    ):
        return None, missing
    if state.proposal.errors:
        key, rule = next(iter(state.proposal.errors.items()))
        return None, f"{key}: {rule}"
    if not state.changes:
        return None, "Nothing to save: every value is what Mycel already runs with."
    try:
        return save_preview(layer, state.changes, state.loaded.effective), None
    except ValueError as exc:
        return None, str(exc)


def _panel(
    request: HttpRequest, state: _State, extra: dict[str, Any], *, status: int = 200, wrote: bool = False
) -> HttpResponse:
    """The save panel (htmx) or the whole page. After a write (`wrote`, with `state` read after it) the
    panel brings the editor too, swapped out of band: its layer badges and "now" values are the new ones."""
    if wants_partial(request):
        context = {
            "source": state.source,
            "restart_note": RESTART_NOTE,
            "chosen": state.chosen,
            "layers": state.loaded.layers,
            "dev": state.dev,  # a Mycel dev agent: its runtime.json is never saved
            **(_context(request, state, "save-panel") if wrote else {}),
            "editor_oob": wrote,
            **extra,
        }
        return render_screen(request, TEMPLATE, "save-panel", context, status=status)
    context = {**_context(request, state, None), **extra}
    return render_screen(request, TEMPLATE, None, context, status=status)


@require_GET
def config_preview(request: HttpRequest) -> HttpResponse:
    """The diff that saving the proposal into the chosen layer would write (read-only, anyone may look)."""
    state = _state(request.GET)
    preview, refusal = _preview(state)
    return _panel(request, state, {"preview": preview, "refusal": refusal, "changed": state.changes})


@require_GET
def config_restore_preview(request: HttpRequest) -> HttpResponse:
    """What restoring a kept version would change, with the button that does it (read-only to look at)."""
    form = RestoreForm(request.GET)
    state = _state(_thread_only(request.GET))
    if not form.is_valid():
        errors = "; ".join(f"{name}: {error_text(msgs)}" for name, msgs in form.errors.items())
        return _panel(request, state, {"refusal": f"Cannot restore: {errors}"}, status=400)
    layer = layer_file(
        state.locations, ConfigLayerName(form.cleaned_data["layer"]), project_dir=state.project_dir
    )
    if layer is None:
        return _panel(request, state, {"refusal": "There is no project folder to restore into."})
    preview = restore_preview(layer, form.cleaned_data["version"])
    if isinstance(preview, str):
        return _panel(request, state, {"refusal": preview})
    return _panel(request, state, {"restore_preview": preview})


def _thread_only(data: QueryDict) -> QueryDict:
    """A restore reads the layers as the page does for its thread, with no proposal of values."""
    chosen = QueryDict(mutable=True)
    chosen["thread"] = data.get("thread", "")
    return chosen


def _saved_state(document: Any, saved: SavedLayer) -> dict[str, Any]:
    """What the audit row keeps after a save or a restore: the document, the file's hash, its backup."""
    return {
        "document": document,
        "sha256": saved.sha256,
        "backup": str(saved.backup) if saved.backup else None,
    }


def _way_back(state: _State, layer: ConfigLayerName, saved: SavedLayer) -> dict[str, Any]:
    """The link a write's report carries back to the version it replaced (previewed, then confirmed)."""
    query = {
        "layer": layer.value,
        "version": saved.backup.name,
        "thread": state.chosen.thread_id if state.chosen else "",
    }
    return {
        "way_back_url": f"{reverse('config_restore_preview')}?{urlencode(query)}",
        "replaced_nothing": saved.backup.name.endswith(ABSENT_SUFFIX),
    }


@require_POST
@operator_required
def config_save(request: HttpRequest) -> HttpResponse:
    """Write the proposal into the chosen layer file, only if the file is still what the preview read."""
    if request.POST.get("profile") == "dev":
        return _dev_save(request)
    state = _state(request.POST)
    trail = AuditTrail(request, AuditEntry.Action.CONFIG_SAVE)
    layer = layer_file(state.locations, state.form.chosen_layer, project_dir=state.project_dir)
    target = str(layer.path) if layer else state.form.chosen_layer.value
    preview, refusal = _preview(state)
    if preview is None:
        trail.refused(refusal or "", target=target)
        return _panel(request, state, {"refusal": refusal}, status=400)
    intent = trail.intent(
        target=str(preview.layer.path),
        message=f"Proposed: {changes_words(preview.changes, state.loaded.effective)}",
        before={"document": preview.layer.file.document, "sha256": preview.sha256 or None},
    )
    try:
        done = audited_write(
            trail.log,
            intent,
            lambda: apply_layer(
                preview.layer.path,
                preview.document,
                expected_sha256=state.form.expected_sha256,
                locations=state.locations,
                project_dir=state.project_dir,
            ),
            outcome=lambda saved: (
                changes_words(preview.changes, state.loaded.effective),
                _saved_state(preview.document, saved),
            ),
            refusals=(ConfigFileError,),
        )
    except (ConfigFileError, AuditUnavailable) as exc:
        return _panel(request, state, {"refusal": str(exc)}, status=409)
    saved = done.value
    report = {
        "saved": saved,
        "saved_preview": preview,
        "unrecorded": done.note(),
        **_way_back(state, preview.layer.name, saved),
    }
    # Read back: the page shows what the file now holds (badges, "now" values, the what-if).
    response = _panel(request, _state(request.POST), report, wrote=True)
    response["HX-Trigger"] = json.dumps(
        {SAVED_EVENT: {"layer": preview.layer.name.value, "path": str(saved.path)}}
    )
    return response


@require_POST
@operator_required
def config_restore(request: HttpRequest) -> HttpResponse:
    """Put an earlier version of a layer file back (the current one is kept in the history first)."""
    form = RestoreForm(request.POST)
    chosen = _thread_only(request.POST)
    state = _state(chosen)
    trail = AuditTrail(request, AuditEntry.Action.CONFIG_RESTORE)
    if not form.is_valid():
        errors = "; ".join(f"{name}: {error_text(msgs)}" for name, msgs in form.errors.items())
        return _panel(request, state, {"refusal": f"Cannot restore: {errors}"}, status=400)
    name = ConfigLayerName(form.cleaned_data["layer"])
    layers = {f.name: f for f in list_layer_files(state.locations, project_dir=state.project_dir)}
    if name not in layers:
        return _panel(request, state, {"refusal": "There is no project folder to restore into."}, status=400)
    layer = layers[name]
    version = form.cleaned_data["version"]
    preview = restore_preview(layer, version)  # what it changes, for the report (it is re-checked below)
    intent = trail.intent(
        target=str(layer.path),
        message=f"restore {version}",
        before={"document": layer.file.document, "sha256": layer.file.sha256},
    )

    def restored_state(saved: SavedLayer) -> tuple[str, dict[str, Any]]:
        restored = layer_file(state.locations, name, project_dir=state.project_dir)
        what = "back to no file: removed the file" if saved.sha256 is None else "the whole file"
        changes = "" if isinstance(preview, str) else f"; {changes_words(preview.row.changes, None)}"
        return (
            f"restored {version} ({what}){changes}",
            _saved_state(restored.file.document if restored else {}, saved),
        )

    try:
        done = audited_write(
            trail.log,
            intent,
            lambda: apply_restore(
                layer.path,
                version,
                expected_sha256=form.cleaned_data["sha256"] or None,
                locations=state.locations,
                project_dir=state.project_dir,
            ),
            outcome=restored_state,
            refusals=(ConfigFileError,),
        )
    except (ConfigFileError, AuditUnavailable) as exc:
        return _panel(request, state, {"refusal": str(exc)}, status=409)
    saved = done.value
    report = {
        "restored": version,
        "restored_row": None if isinstance(preview, str) else preview.row,
        "saved": saved,
        "unrecorded": done.note(),
        **_way_back(state, name, saved),
    }
    response = _panel(request, _state(chosen), report, wrote=True)
    response["HX-Trigger"] = json.dumps({SAVED_EVENT: {"layer": name.value, "path": str(saved.path)}})
    return response


def _dev_panel(request: HttpRequest, state: _State, extra: dict[str, Any], *, status: int) -> HttpResponse:
    context = {**_context(request, state, None), **extra}
    return render_screen(request, TEMPLATE, None, context, status=status)


def _dev_save(request: HttpRequest) -> HttpResponse:
    """Write a dev agent's compact_json (one audited transaction), or offer the exact JSON where the
    database cannot take it. Never a runtime.json: dev does not read one."""
    state = _state(request.POST)
    form = DevConfigForm(request.POST)
    view = state.dev
    trail = AuditTrail(request, AuditEntry.Action.CONFIG_SAVE, thread_id=form.data.get("thread", "") or "")
    if view is None or view.agent.agent_id is None:
        message = "No Mycel dev agent was chosen (or it could not be read)."
        trail.refused(message, target="agent.agent_configs.compact_json")
        return _dev_panel(request, state, {"dev_refusal": message}, status=400)
    target = f"agent.agent_configs.compact_json for agent {view.agent.agent_id}"
    proposal = dev_proposal(view.agent.compact_json, form.changes(), drop_unknown=form.drops_unknown)
    if proposal.errors:
        message = proposal.errors[0].message
        trail.refused(message, target=target, after={"compact_json": dict(proposal.document)})
        return _dev_panel(request, state, {"dev_refusal": message, "dev_proposal": proposal}, status=400)
    url = state.locations.postgres_url
    if not view.agent.writable or view.agent.config_id is None or url is None:
        message = (
            "; ".join(view.agent.notes or view.agent.problems)
            or "The role may not write agent.agent_configs."
        )
        if view.agent.table_ready and not view.agent.can_update:
            message = "The dashboard's role may not UPDATE agent.agent_configs.compact_json."
        trail.refused(
            f"{message} JSON offered.", target=target, after={"compact_json": dict(proposal.document)}
        )
        return _dev_panel(request, state, {"dev_offer": proposal, "dev_refusal": message}, status=409)
    config_id, database = view.agent.config_id, url  # narrowed above; the write runs in a closure
    intent = trail.intent(
        target=f"{target} (row {config_id})",
        message=f"Proposed: {proposal.text}",
        before={"compact_json": dict(view.agent.compact_json or {})},
    )
    try:
        done = audited_write(
            trail.log,
            intent,
            lambda: apply_compact_json(
                database,
                config_id=config_id,
                expected_sha256=form.expected,
                document=proposal.document,
                timeout_s=settings.DASHBOARD_STORE_TIMEOUT_MS / 1000,
            ),
            outcome=lambda saved: (proposal.text, {"compact_json": dict(saved.after)}),
            refusals=(CompactJsonRefused,),
        )
    except CompactJsonRefused as exc:
        extra: dict[str, Any] = {"dev_refusal": str(exc)}
        if exc.offer_json:
            extra["dev_offer"] = proposal
        return _dev_panel(request, state, extra, status=409)
    except AuditUnavailable as exc:
        return _dev_panel(request, state, {"dev_refusal": str(exc)}, status=409)
    saved = done.value
    state = _state(request.POST)  # read back: the page shows what the database now holds
    response = _dev_panel(request, state, {"dev_saved": saved}, status=200)
    response["HX-Trigger"] = json.dumps({SAVED_EVENT: {"layer": "agent", "path": target}})
    return response
