"""Screen 6: the audit log — who did what, when, with what result; filterable, exportable as CSV."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Any

from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.views.decorators.http import require_GET

from mycel_dashboard.models import AuditEntry
from mycel_dashboard.screens.audit.forms import AuditFilterForm
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
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "page": page,
        "values": values,
        "actions": AuditEntry.Action.choices,
        "results": AuditEntry.Result.choices,
        "query": query.urlencode(),
    }
    return render_screen(request, "audit.html", "audit-rows", context)


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
