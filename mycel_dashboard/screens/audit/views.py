"""Screen 6: the audit log — who did what, when, with what result; filterable, exportable as CSV; the sign-in
pauses in force, which an operator lifts here (an audited POST)."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Any

from axes.utils import reset as reset_attempts
from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, StreamingHttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from mycel_dashboard.models import AuditEntry
from mycel_dashboard.screens.audit.forms import AuditFilterForm, UnlockForm
from mycel_dashboard.screens.audit.presenter import outcome_check
from mycel_dashboard.web.audit import AuditTrail
from mycel_dashboard.web.login_throttle import current_lockouts
from mycel_dashboard.web.permissions import operator_required
from mycel_dashboard.web.render import render_screen

PAGE_SIZE = 50
# A cell starting with one of these is a formula to a spreadsheet; tool output may put anything there.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _filtered(values: dict[str, Any]) -> QuerySet[AuditEntry]:
    entries = AuditEntry.objects.all()
    if values["action"]:
        entries = entries.filter(action=values["action"])
    if values["result"]:
        entries = entries.filter(result=values["result"])
    if values["thread"]:
        entries = entries.filter(thread_id__icontains=values["thread"])
    if values["actor"]:
        entries = entries.filter(actor__icontains=values["actor"])
    return entries


@require_GET
def audit_log(request: HttpRequest) -> HttpResponse:
    values = AuditFilterForm(request.GET).values()
    page = Paginator(_filtered(values), PAGE_SIZE).get_page(values["page"])
    checks = {
        entry.pk: outcome_check(entry.action, entry.target)
        for entry in page
        if entry.result == AuditEntry.Result.PENDING
    }
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "page": page,
        "values": values,
        "actions": AuditEntry.Action.choices,
        "results": AuditEntry.Result.choices,
        "query": query.urlencode(),
        "lockouts": current_lockouts(),
        "outcome_checks": checks,
    }
    return render_screen(request, "audit.html", "audit-rows", context)


@require_POST
@operator_required
def unlock(request: HttpRequest) -> HttpResponse:
    """Lift a sign-in pause for a user name (at every address) or for an address (every name)."""
    form = UnlockForm(request.POST)
    if not form.is_valid():
        return HttpResponseBadRequest("Name one user or one address to unlock.")
    username, address = form.cleaned_data["username"], form.cleaned_data["ip_address"]
    removed = reset_attempts(username=username) if username else reset_attempts(ip=address)
    what = f"user {username!r} at every address" if username else f"address {address} for every name"
    trail = AuditTrail(request, AuditEntry.Action.LOGIN_UNLOCK)
    if removed:
        trail.applied(
            target=username or address,
            message=f"Unlocked sign-in for {what}: its failure counts are cleared.",
            # axes keeps one row per name, address and browser, each with its count
            after={"failure_rows_cleared": removed},
        )
        messages.success(request, f"Unlocked sign-in for {what}.")
    else:
        trail.refused(f"Nothing to unlock for {what}: no failures on record.", target=username or address)
        messages.info(request, f"Nothing to unlock for {what}: no failures on record.")
    return redirect("audit")


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


class _Echo:
    def write(self, value: str) -> str:
        return value


@require_GET
def audit_csv(request: HttpRequest) -> StreamingHttpResponse:
    values = AuditFilterForm(request.GET).values()
    writer = csv.writer(_Echo())
    header = ["time", "actor", "action", "result", "thread_id", "target", "message", "before", "after"]

    def rows() -> Iterator[str]:
        yield writer.writerow(header)
        for entry in _filtered(values).iterator():
            yield writer.writerow(
                [
                    _cell(entry.created_at.isoformat()),
                    _cell(entry.actor),
                    _cell(entry.action),
                    _cell(entry.result),
                    _cell(entry.thread_id),
                    _cell(entry.target),
                    _cell(entry.message),
                    _cell(entry.before),
                    _cell(entry.after),
                ]
            )

    response = StreamingHttpResponse(rows(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="mycel-dashboard-audit.csv"'
    return response
