"""The read-only JSON API: each view is the CLI's `--json` builder over the dashboard's reader, behind a
bearer token. Only a token authorises it, never the session: a browser sends its session cookie to any
page that asks, so a cookie-authorised JSON API would need CSRF defences; a bearer token is sent only by
a script that holds it. The API never writes (writes stay in the UI and the CLI, after the impact report).
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, QueryDict
from django.views.decorators.csrf import csrf_exempt

from memory_core.app import search as engine
from memory_core.app import whatif as what_if
from memory_core.app.errors import AppError, StoreUnreadable, UnknownThread
from memory_core.app.fleet import fleet_rows
from memory_core.app.fleet_storage import fleet_storage_report
from memory_core.app.inputs import parse_bounded, parse_day, parse_rules_name
from memory_core.app.search import results_json
from memory_core.app.status import refuse_unreadable, require_data
from memory_core.app.storage import DEFAULT_TURNS_AHEAD, MAX_TURNS_AHEAD, storage_as_json
from memory_core.app.thread import find_thread, thread_detail, thread_facts
from memory_core.app.whatif import Proposal
from memory_core.records import loud_messages
from memory_core.stores.reader import MycelReader
from mycel_dashboard.api.checkpoint import checkpoint_json
from mycel_dashboard.api.paging import BadPaging, page_of, paging_of
from mycel_dashboard.api.tokens import authenticate, token_from_header
from mycel_dashboard.screens.checkpoint.presenter import NoSuchCheckpoint, checkpoint_page
from mycel_dashboard.web.fleet_index import DashboardFleetIndex
from mycel_dashboard.web.source import open_source

log = logging.getLogger(__name__)

View = Callable[..., HttpResponse]

# The setting flags `whatif` takes (`--context-limit` is `context_limit` or `context-limit` here). Not
# `--runtime-config`: a path on the server is not the caller's to name.
WHATIF_FLAGS = Proposal.option_names()


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def json_response(data: Any, status: int = 200) -> HttpResponse:
    # <, > and & escaped inside strings (the JSON is the same): a body sniffed as HTML still runs nothing.
    text = json.dumps(data, indent=1, default=str)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    response = HttpResponse(text, status=status, content_type="application/json")
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "no-store"
    response["Vary"] = "Authorization"
    return response


def error(status: int, message: str) -> HttpResponse:
    return json_response({"error": message}, status)


def _authorised(request: HttpRequest) -> str | None:
    """Why the request may not read the API, or None when its bearer token is a live viewer token."""
    token = token_from_header(request.headers.get("Authorization", ""))
    if token is None:
        return "authentication required: send Authorization: Bearer <token> (manage.py api_token create USER)"
    if authenticate(token) is None:
        return "invalid or revoked API token"
    return None


def api_view(view: View) -> View:
    """GET only, a viewer token, and every failure a JSON error: never HTML, never a traceback."""

    @login_not_required
    @csrf_exempt  # no cookie authorises the API, so there is no cross-site request to forge
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method not in ("GET", "HEAD"):
            response = error(405, "the API is read-only: GET only")
            response["Allow"] = "GET, HEAD"
            return response
        refused = _authorised(request)
        if refused is not None:
            response = error(401, refused)
            response["WWW-Authenticate"] = 'Bearer realm="mycel-dashboard"'
            return response
        try:
            return view(request, *args, **kwargs)
        except ApiError as exc:
            return error(exc.status, str(exc))
        except UnknownThread as exc:
            return _unknown_thread(exc)
        except StoreUnreadable as exc:
            return error(503, str(exc))
        except (AppError, BadPaging) as exc:
            return error(400, str(exc))
        except Exception:
            log.exception("API request failed: %s", request.path)
            return error(500, "internal error (logged on the server)")

    return wrapped


def _unknown_thread(exc: UnknownThread) -> HttpResponse:
    """404, unless the stores could not be read: then the thread may well exist, and 503 says why."""
    try:
        refuse_unreadable(exc.problems)
    except StoreUnreadable as unreadable:
        return error(503, str(unreadable))
    return error(404, str(exc))


def open_reader() -> MycelReader:
    """The dashboard's reader; 503 when no Mycel store can be read at all."""
    _, reader = open_source()
    require_data(reader.locations)
    return reader


def _only(query: QueryDict, allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(query) - set(allowed))
    if unknown:
        takes = f"takes {', '.join(allowed)}" if allowed else "takes no parameter"
        raise ApiError(400, f"unknown parameter {unknown[0][:40]!r}; this endpoint {takes}")


_PAGING = ("limit", "offset", "cursor")


def _paged(request: HttpRequest, items: list[Any], key: Callable[[Any], Any], **extra: Any) -> HttpResponse:
    page = page_of(items, paging_of(request.GET), key)
    following = None
    if page.next_cursor is not None:
        query = request.GET.copy()
        query.pop("offset", None)
        query["cursor"] = page.next_cursor
        following = request.build_absolute_uri(f"{request.path}?{query.urlencode()}")
    return json_response({"count": page.count, "next": following, **extra, "results": page.items})


@api_view
def threads(request: HttpRequest) -> HttpResponse:
    _only(request.GET, _PAGING)
    rows, problems = fleet_rows(open_reader())
    refuse_unreadable(problems)  # threads other stores know are no answer when the checkpoints fail
    return _paged(request, rows, key=lambda row: row["thread_id"], warnings=loud_messages(problems))


@api_view
def thread(request: HttpRequest, thread_id: str) -> HttpResponse:
    _only(request.GET, ("rules",))
    rules = parse_rules_name(request.GET.get("rules"))
    return json_response(thread_detail(open_reader(), thread_id, rules=rules).answer())


@api_view
def calls(request: HttpRequest, thread_id: str) -> HttpResponse:
    _only(request.GET, ("rules", *_PAGING))
    rules = parse_rules_name(request.GET.get("rules"))
    reader = open_reader()
    facts = thread_facts(reader, find_thread(reader, thread_id), rules=rules)
    return _paged(
        request, facts["memory"]["calls"], key=lambda call: call["call"], warnings=facts["warnings"]
    )


@api_view
def checkpoint(request: HttpRequest, thread_id: str, checkpoint_id: str) -> HttpResponse:
    _only(request.GET, ())
    reader = open_reader()
    row = find_thread(reader, thread_id)
    try:
        page = checkpoint_page(
            reader,
            thread_id,
            checkpoint_id,
            against=None,
            diff_alone=False,
            lineage_from_order=row.layout == "dev",
        )
    except NoSuchCheckpoint as exc:
        raise ApiError(404, str(exc)) from None
    return json_response(checkpoint_json(thread_id, page))


@api_view
def whatif(request: HttpRequest, thread_id: str) -> HttpResponse:
    flags = {name.replace("-", "_"): request.GET.get(name) for name in request.GET}
    unknown = sorted(set(flags) - set(WHATIF_FLAGS))
    if unknown:
        raise ApiError(400, f"unknown setting {unknown[0][:40]!r}; whatif takes {', '.join(WHATIF_FLAGS)}")
    proposal = Proposal.from_text(flags)
    reader = open_reader()
    row = find_thread(reader, thread_id)
    facts = thread_facts(reader, row, rules=proposal.rules)
    return json_response(what_if.whatif(reader, row, facts, proposal))


@api_view
def search(request: HttpRequest) -> HttpResponse:
    _only(request.GET, ("q", "tool", "thread", "since", "until", *_PAGING))
    query = request.GET
    since, until = parse_day(query.get("since"), "since"), parse_day(query.get("until"), "until")
    if since and until and since > until:
        raise ApiError(400, f"since {since} is after until {until}")
    paging_of(query)  # a bad paging value is refused before the index is read
    reader = open_reader()
    try:
        # The engine's most matches, paged here: a cursor needs the whole ordered list.
        results = engine.search(
            reader,
            query.get("q", ""),
            tool=query.get("tool") or None,
            thread=query.get("thread") or None,
            since=engine.day_start(since) if since else None,
            until=engine.day_after(until) if until else None,
            limit=engine.MAX_LIMIT,
        )
    except engine.QueryError as exc:
        raise ApiError(400, str(exc)) from None
    except engine.SearchIndexError as exc:
        raise ApiError(503, str(exc)) from None
    if not results.hits:
        refuse_unreadable(results.problems)
    return _paged(
        request,
        results_json(results),
        key=lambda hit: [hit["thread_id"], hit["index"], hit["kind"], hit["tool"], hit["snippet"]],
        more=results.more,
        newest_only=results.newest_only,  # a very common query: the best of the newest N matches
        notice=results.notice,
        indexed=dataclasses.asdict(results.refresh),  # what this search added to the index first
        warnings=loud_messages(results.problems),
    )


@api_view
def storage(request: HttpRequest) -> HttpResponse:
    _only(request.GET, ("turns",))
    turns = parse_bounded(
        request.GET.get("turns"), "turns", low=0, high=MAX_TURNS_AHEAD, default=DEFAULT_TURNS_AHEAD
    )
    # Every thread, from the fleet index when it can answer (as the Storage page), else by walking the fleet.
    result = fleet_storage_report(open_reader(), DashboardFleetIndex(), turns_ahead=turns)
    refuse_unreadable(result.problems)
    return json_response(storage_as_json(result))


@api_view
def not_found(request: HttpRequest, rest: str = "") -> HttpResponse:
    return error(404, "no such API endpoint (see the README's JSON API section)")
