"""Roll back to a checkpoint, and undo: impact report (GET), then an audited, fingerprint-checked write (POST)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.html import format_html
from django.views.decorators.http import require_GET, require_POST

from memory_core.app.audit import AuditUnavailable, audited_write
from memory_core.app.errors import UnknownThread
from memory_core.app.rollback import (
    CheckpointsUnreadable,
    UnknownCheckpoint,
    applied_as_dict,
    apply_rollback,
    impact_as_dict,
    preview_rollback,
    preview_undo,
)
from memory_core.rollback import RollbackApplied, RollbackImpact, RollbackRefused
from memory_core.stores.reader import MycelReader
from mycel_dashboard.models import AuditEntry
from mycel_dashboard.screens.rollback.forms import ConfirmRollbackForm
from mycel_dashboard.web.audit import AuditTrail
from mycel_dashboard.web.permissions import can_act
from mycel_dashboard.web.render import render_screen
from mycel_dashboard.web.source import open_source


def _applied_report(applied: RollbackApplied, *, undo: bool) -> str:
    """The success banner, with its way back where it is read: a rollback's Undo, an undo's Redo (a rollback
    to the checkpoint the undo replaced). Each opens the impact report to confirm, as the first write did."""
    thread = applied.thread_id
    if undo:
        back = reverse("rollback_preview", args=[thread, applied.previous_head_checkpoint_id])
        words = ("Undone", "Redo the rollback…")
    else:
        back = reverse("undo_preview", args=[thread])
        words = ("Rolled back", "Undo…")
    return format_html(
        '{}: the active checkpoint is now {} (was {}). Nothing was deleted. <a class="way-back" href="{}">{}</a>',
        words[0],
        applied.new_head_checkpoint_id,
        applied.previous_head_checkpoint_id,
        back,
        words[1],
    )


def _impact_or_404(reader: MycelReader, thread_id: str, checkpoint_id: str | None) -> RollbackImpact:
    try:
        if checkpoint_id is None:
            return preview_undo(reader, thread_id)
        return preview_rollback(reader, thread_id, checkpoint_id)
    except CheckpointsUnreadable:
        raise  # not an unknown id: the page says which file cannot be read
    except (UnknownThread, UnknownCheckpoint) as exc:
        raise Http404(str(exc)) from exc


def _screen(request: HttpRequest, impact: RollbackImpact | None, **extra: Any) -> HttpResponse:
    status = extra.pop("status", 200)
    context = {"impact": impact, "form": ConfirmRollbackForm(), **extra}
    return render_screen(request, "rollback.html", "rollback-report", context, status=status)


@require_GET
def rollback_preview(request: HttpRequest, thread_id: str, checkpoint_id: str) -> HttpResponse:
    _, reader = open_source()
    try:
        impact = _impact_or_404(reader, thread_id, checkpoint_id)
    except CheckpointsUnreadable as exc:
        return _screen(request, None, thread_id=thread_id, unreadable=str(exc))
    return _screen(request, impact, thread_id=thread_id)


@require_GET
def undo_preview(request: HttpRequest, thread_id: str) -> HttpResponse:
    _, reader = open_source()
    try:
        impact = _impact_or_404(reader, thread_id, None)
    except CheckpointsUnreadable as exc:
        return _screen(request, None, thread_id=thread_id, unreadable=str(exc))
    except RollbackRefused as exc:
        return _screen(request, None, thread_id=thread_id, nothing_to_undo=str(exc))
    return _screen(request, impact, thread_id=thread_id)


@require_POST
def rollback_apply(request: HttpRequest, thread_id: str, checkpoint_id: str) -> HttpResponse:
    return _apply(request, thread_id, checkpoint_id)


@require_POST
def undo_apply(request: HttpRequest, thread_id: str) -> HttpResponse:
    return _apply(request, thread_id, None)


def _apply(request: HttpRequest, thread_id: str, checkpoint_id: str | None) -> HttpResponse:
    if not can_act(request.user):
        raise PermissionDenied("Only operators may roll a thread back.")
    source, reader = open_source()
    action = AuditEntry.Action.UNDO if checkpoint_id is None else AuditEntry.Action.ROLLBACK
    trail = AuditTrail(request, action, thread_id=thread_id)
    try:
        impact = _impact_or_404(reader, thread_id, checkpoint_id)
    except CheckpointsUnreadable as exc:
        trail.refused(str(exc))
        return _screen(request, None, thread_id=thread_id, unreadable=str(exc), status=409)
    except RollbackRefused as exc:
        trail.refused(str(exc))
        return _screen(request, None, thread_id=thread_id, nothing_to_undo=str(exc), status=409)
    form = ConfirmRollbackForm(request.POST)
    if not form.is_valid():
        return _screen(
            request, impact, thread_id=thread_id, refused="The confirmation was malformed.", status=400
        )
    intent = trail.intent(target=impact.target_checkpoint_id, before=impact_as_dict(impact))
    try:
        done = audited_write(
            trail.log,
            intent,
            lambda: apply_rollback(
                source.locations,
                impact,
                actor=request.user.get_username(),
                force=form.cleaned_data["force"],
                reader=reader,
                confirmed_fingerprint=form.cleaned_data["fingerprint"],
            ),
            outcome=lambda applied: (f"new head {applied.new_head_checkpoint_id}", applied_as_dict(applied)),
            refusals=(RollbackRefused,),
        )
    except (RollbackRefused, AuditUnavailable) as exc:
        return _screen(request, impact, thread_id=thread_id, refused=str(exc), status=409)
    applied = done.value
    if done.note():
        messages.warning(request, str(done.note()))
    messages.success(request, _applied_report(applied, undo=checkpoint_id is None))
    target = redirect("thread", thread_id=thread_id)
    if not getattr(request, "htmx", False):
        return target
    # htmx: let the client navigate, and tell listening panels the thread changed.
    response = HttpResponse(status=204)
    response["HX-Redirect"] = target.url
    response["HX-Trigger"] = "thread-changed"
    return response
