"""The Search screen: full-text search over every thread (memory_core/app/search.py, the very function
`mycel-memory search --json` and /api/search call)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import NoReverseMatch, reverse

from memory_core.app.search import QueryError, SearchIndexError, day_after, day_start, search
from mycel_dashboard.screens.search.forms import SearchForm
from mycel_dashboard.screens.search.presenter import hit_rows
from mycel_dashboard.screens.shared.memory import guarded, problem_text
from mycel_dashboard.web.forms import error_text
from mycel_dashboard.web.render import render_screen
from mycel_dashboard.web.source import open_source


def _thread_url(thread_id: str) -> str:
    try:
        return reverse("thread", args=[thread_id])
    except NoReverseMatch:
        return ""


def search_page(request: HttpRequest) -> HttpResponse:
    form = SearchForm(request.GET)
    form.is_valid()
    values = form.cleaned_data
    notes = [
        f"Ignored {form.fields[name].label if name in form.fields else name}: {error_text(errors)}"
        for name, errors in form.errors.items()
    ]
    query = values.get("q") or ""
    source, reader = open_source()
    problems: list[str] = []
    context: dict[str, Any] = {
        "source": source,
        "form_values": {name: form.data.get(name, "") for name in form.fields},
        "notes": notes,
        "query": query,
        "results": None,
    }
    if query.strip() and "q" not in form.errors:
        since, until = values.get("since"), values.get("until")

        def run() -> Any:
            try:
                return search(
                    reader,
                    query,
                    tool=values.get("tool") or None,
                    thread=values.get("thread") or None,
                    since=day_start(since) if since else None,
                    until=day_after(until) if until and "until" not in form.errors else None,
                    # The first search over a big fleet indexes what it can in the page budget.
                    budget_s=settings.DASHBOARD_FLEET_BUDGET_S,
                )
            except (QueryError, SearchIndexError) as exc:
                problems.append(str(exc)[:1_000])
                return None

        results = guarded("the search", run, problems)
        if results is not None:
            problems.extend(
                problem_text(p) for p in dict.fromkeys(results.problems) if not p.expected_absence
            )
            context.update(results=results, hits=hit_rows(results.hits, _thread_url))
    context["problems"] = problems
    return render_screen(request, "search.html", "search-results", context)
