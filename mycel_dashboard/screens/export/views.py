"""A thread (or one checkpoint) downloaded as the redacted JSON bundle or the Markdown transcript: the same
file `mycel-memory export` writes. Read-only, so a viewer may export; every export is audited."""

from __future__ import annotations

from datetime import UTC, datetime

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_POST

from memory_core.app.audit import AuditUnavailable
from memory_core.app.export import ExportError, export_bundle, export_filename, export_summary, export_text
from mycel_dashboard.models import AuditEntry
from mycel_dashboard.screens.export.forms import ExportForm
from mycel_dashboard.web.audit import AuditTrail
from mycel_dashboard.web.forms import error_text
from mycel_dashboard.web.source import open_source

_CONTENT_TYPES = {"json": "application/json; charset=utf-8", "md": "text/markdown; charset=utf-8"}


def _said(message: str, status: int) -> HttpResponse:
    # Plain text (never HTML): the message may quote an id, and ids are arbitrary text.
    return HttpResponse(message + "\n", status=status, content_type="text/plain; charset=utf-8")


@require_POST
def thread_export(request: HttpRequest, thread_id: str) -> HttpResponse:
    form = ExportForm(request.POST)
    trail = AuditTrail(request, AuditEntry.Action.EXPORT, thread_id=thread_id)
    if not form.is_valid():
        reason = "; ".join(f"{name}: {error_text(errors)}" for name, errors in form.errors.items())
        trail.refused(reason)
        return _said(f"Not exported: {reason}", 400)
    fmt = form.cleaned_data["format"]
    checkpoint = form.cleaned_data["checkpoint"] or None
    _, reader = open_source()
    try:
        bundle = export_bundle(reader, thread_id, checkpoint_id=checkpoint, exported_at=datetime.now(UTC))
    except ExportError as exc:
        trail.refused(str(exc), target=checkpoint or "")
        return _said(f"Not exported: {exc}", 404)
    except Exception as exc:  # noqa: BLE001 - a store that cannot be read is a message, not a 500
        trail.failed(f"the stores could not be read: {exc}", target=checkpoint or "")
        return _said(f"Not exported: the stores could not be read ({exc})", 409)
    name = export_filename(thread_id, fmt, checkpoint)
    summary = export_summary(bundle, fmt)
    try:  # recorded before anything leaves: an export the log cannot record is not served
        trail.applied(
            target=bundle["checkpoint_id"],
            message=f"thread exported as {fmt} ({name}): {summary['messages']} messages",
            after=summary,
        )
    except AuditUnavailable as exc:
        return _said(f"Not exported: {exc}", 503)
    response = HttpResponse(export_text(bundle, fmt), content_type=_CONTENT_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    response["HX-Trigger"] = "audit-changed"
    return response
