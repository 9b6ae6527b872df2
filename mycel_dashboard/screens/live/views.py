"""The live partials the Thread page and the Threads list poll (static/dashboard/live.js).

Polling against a cheap version check, not SSE (why: live/pulse.py). Each answer carries an ETag; a poll
that sends it back in If-None-Match while nothing changed gets 304 with no body.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified
from django.template.response import TemplateResponse
from django.utils.cache import patch_vary_headers

from memory_core.records import StoreProblem
from mycel_dashboard.screens.live.forms import ListPollForm
from mycel_dashboard.screens.live.pulse import (
    POLL_INTERVAL_MS,
    fleet_changes,
    list_changes,
    list_tag,
    newest_activity,
    thread_pulse,
)
from mycel_dashboard.screens.shared.memory import guarded, problem_text
from mycel_dashboard.web.source import open_source


def thread_live(request: HttpRequest, thread_id: str) -> HttpResponse:
    _, reader = open_source()
    problems: list[str] = []
    pulse = guarded(
        "the thread's live state", lambda: thread_pulse(reader, thread_id, now=datetime.now(UTC)), problems
    )
    if pulse is None:
        return _answer(request, "_live_thread.html", {"thread_id": thread_id, "problems": problems}, None)
    problems.extend(pulse.facts.problems)
    context = {
        "thread_id": thread_id,
        "pulse": pulse,
        "problems": problems,
        "interval_ms": POLL_INTERVAL_MS,
    }
    status = 200 if pulse.facts.known else 404
    return _answer(request, "_live_thread.html", context, pulse.etag, status=status)


def threads_live(request: HttpRequest) -> HttpResponse:
    since, known = ListPollForm(request.GET).poll()
    _, reader = open_source()
    problems: list[str] = []
    tag = guarded("the stores' version", lambda: list_tag(reader, request.GET.urlencode()), problems)
    if tag is not None and _unchanged(request, tag):
        return _not_modified(tag)
    asked: list[StoreProblem] = []
    changes = fleet_changes(
        reader, since, known, index_from=settings.DASHBOARD_FLEET_INDEX_FROM, problems=asked
    )
    if changes is None:  # a fleet small enough to list in memory, as its page does
        found = reader.list_threads()
        asked.extend(found.problems)
        rows = found.value
        changes = list_changes(
            rows, since if since is not None else newest_activity(rows), known or len(rows)
        )
    problems.extend(problem_text(p) for p in asked if not p.expected_absence)
    context = {
        "changes": changes,
        "problems": problems,
        "interval_ms": POLL_INTERVAL_MS,
    }
    return _answer(request, "_live_threads.html", context, tag)


def _answer(
    request: HttpRequest, template: str, context: dict[str, object], etag: str | None, *, status: int = 200
) -> HttpResponse:
    if etag is not None and _unchanged(request, etag):
        return _not_modified(etag)
    response = TemplateResponse(request, template, context, status=status)
    _headers(response, etag)
    return response


def _unchanged(request: HttpRequest, etag: str) -> bool:
    sent = request.headers.get("If-None-Match", "")
    return any(part.strip().removeprefix("W/") == f'"{etag}"' for part in sent.split(","))


def _not_modified(etag: str) -> HttpResponse:
    response = HttpResponseNotModified()
    _headers(response, etag)
    return response


def _headers(response: HttpResponse, etag: str | None) -> None:
    if etag is not None:
        response["ETag"] = f'"{etag}"'
    # Always revalidated, never shared: a proxy may keep it, but must ask every time (and per user).
    response["Cache-Control"] = "private, no-cache"
    patch_vary_headers(response, ("HX-Request", "Cookie"))
