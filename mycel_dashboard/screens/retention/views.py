"""The retention dry-run (GET: what a policy would free, thread by thread) and its export (POST, operators:
the plan as a SQL script download, recorded in the audit log). Nothing here deletes anything."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from memory_core.app.audit import AuditUnavailable
from memory_core.app.retention import RetentionDryRun, retention_dry_run
from memory_core.footprint.retention import (
    ALWAYS_KEPT,
    NO_WHOLE_THREADS,
    RetentionPolicy,
    export_summary,
    plan_as_dict,
)
from memory_core.footprint.script import ScriptError, retention_script
from memory_core.records import ProblemKind
from mycel_dashboard.models import AuditEntry
from mycel_dashboard.screens.retention.forms import RetentionForm
from mycel_dashboard.screens.retention.presenter import SHOWN_IDS, retention_rows
from mycel_dashboard.screens.shared.memory import problem_text
from mycel_dashboard.web.audit import AuditTrail
from mycel_dashboard.web.forms import error_text
from mycel_dashboard.web.permissions import can_act
from mycel_dashboard.web.render import render_screen
from mycel_dashboard.web.source import open_source

_ABSENT = (ProblemKind.MISSING_FILE, ProblemKind.MISSING_TABLE)


def _form_errors(form: RetentionForm) -> list[str]:
    return [error_text(errors) for errors in form.errors.values()]


def _dry_run(policy: RetentionPolicy, problems: list[str]) -> RetentionDryRun | None:
    _, reader = open_source()
    try:
        run = retention_dry_run(reader, policy)
    except Exception as exc:  # noqa: BLE001 - a store that cannot be read is a message on the page
        problems.append(f"The stores could not be read for this plan: {exc}")
        return None
    # A side store Mycel never created is normal (the CLI is quiet about it too).
    problems.extend(problem_text(p) for p in run.problems if p.kind not in _ABSENT)
    return run


def _screen(
    request: HttpRequest,
    form: RetentionForm,
    policy: RetentionPolicy | None,
    problems: list[str],
    *,
    status: int = 200,
    **extra: Any,
) -> HttpResponse:
    run = _dry_run(policy, problems) if policy is not None else None
    data = plan_as_dict(run.plan) if run is not None else None
    context: dict[str, Any] = {
        "form": form,
        "policy": policy,
        "plan_data": data,
        "rows": retention_rows(data, sort=form.sort_key()) if data is not None else [],
        "sort": form.sort_key(),
        "shown_ids": SHOWN_IDS,
        "target": run.target if run is not None else None,
        "planned_at": run.plan.planned_at if run is not None else None,
        "always_kept": ALWAYS_KEPT,
        "whole_threads": NO_WHOLE_THREADS,
        "problems": problems,
        **extra,
    }
    return render_screen(request, "retention.html", "retention-plan", context, status=status)


@require_GET
def retention_preview(request: HttpRequest) -> HttpResponse:
    form = RetentionForm(request.GET)
    asked = any(request.GET.get(name) for name in ("keep_last", "heads_only", "idle_days"))
    policy = form.policy() if asked else None
    problems = _form_errors(form) if asked else []
    return _screen(request, form, policy, problems)


@require_POST
def retention_export(request: HttpRequest) -> HttpResponse:
    form = RetentionForm(request.POST)
    trail = AuditTrail(request, AuditEntry.Action.RETENTION_EXPORT)
    if not can_act(request.user):
        # Refused and recorded: who tried to take a deletion script away matters as much as who did.
        trail.refused("Only operators may export a retention script.", after={"asked": _asked(form)})
        raise PermissionDenied("Only operators may export a retention script.")
    policy = form.policy()
    if policy is None:
        reasons = _form_errors(form)
        trail.refused("; ".join(reasons), after={"asked": _asked(form)})
        return _screen(request, form, None, reasons, status=400)
    problems: list[str] = []
    run = _dry_run(policy, problems)
    if run is None:
        trail.failed("; ".join(problems), after={"policy": policy.as_dict()})
        return _screen(request, form, None, problems, status=409)
    summary = export_summary(run.plan, engine=run.target.engine, location=run.target.location)
    try:
        script = retention_script(run.plan, run.target)
    except ScriptError as exc:
        trail.failed(str(exc), after=summary)
        return _screen(request, form, policy, [str(exc)], status=409)
    name = f"mycel-retention-{timezone.now():%Y%m%d-%H%M%S}.sql"
    try:  # recorded before anything leaves: an export the log cannot record is not served
        trail.applied(
            target=name,
            message=f"retention script exported: {run.plan.drops:,} checkpoints to drop, {run.plan.frees_bytes:,} bytes",
            after=summary,
        )
    except AuditUnavailable as exc:
        return _screen(request, form, policy, [f"Not exported: {exc}"], status=503)
    response = HttpResponse(script, content_type="application/sql; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    response["HX-Trigger"] = "audit-changed"
    return response


def _asked(form: RetentionForm) -> dict[str, str]:
    # What the request carried, cut short: the audit log keeps the attempt, not arbitrary payloads.
    return {name: str(form.data.get(name, ""))[:80] for name in ("keep_last", "heads_only", "idle_days")}
