"""The cache screen (/context/cache/, ?thread=ID): the prompt-cache cost of pruning."""

from __future__ import annotations

from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from memory_core.app.cost import pricing_of
from memory_core.app.prompt_cache import (
    KEPT,
    cache_for_page,
    fleet_json,
    thread_cache,
    thread_json,
)
from mycel_dashboard.screens.context.cache.charts import cause_figure
from mycel_dashboard.screens.context.cache.presenter import (
    caching_models,
    call_lines,
    cause_rows,
    fleet_lines,
)
from mycel_dashboard.screens.shared.fleet_budget import fleet_deadline, kept_report, progress_context
from mycel_dashboard.screens.shared.memory import guarded, problem_text
from mycel_dashboard.web.forms import LenientForm
from mycel_dashboard.web.links import call_urls
from mycel_dashboard.web.render import render_screen
from mycel_dashboard.web.source import open_source


class ThreadForm(LenientForm):
    thread = forms.CharField(required=False, max_length=500, strip=True, label="thread")


def cache_page(request: HttpRequest) -> HttpResponse:
    deadline = fleet_deadline(settings.DASHBOARD_FLEET_BUDGET_S)
    values, notes = ThreadForm(request.GET).values()
    thread_id: str | None = values["thread"] or None
    source, reader = open_source()
    problems: list[str] = []
    page_url = reverse("context_cache")
    context: dict[str, object] = {
        "source": source,
        "notes": notes,
        "problems": problems,
        "thread_id": thread_id,
    }
    pricing = guarded("the pricing cache", lambda: pricing_of(reader), problems)
    if pricing is None:
        return render_screen(request, "context_cache.html", None, context)
    context["pricing_notes"] = pricing.notes
    if thread_id is not None:
        found = reader.get_thread(thread_id)
        problems.extend(problem_text(p) for p in found.problems)
        row = found.value
        if row is None or row.head_checkpoint_id is None:
            notes.append(f"No thread {thread_id!r} with checkpoints in these stores; showing every thread.")
            context["thread_id"] = thread_id = None
        else:
            cache = guarded(
                "the thread's prompt-cache report",
                lambda: thread_cache(reader, row, book=pricing.book),
                problems,
            )
            if cache is not None:
                problems.extend(problem_text(p) for p in cache.problems)
                # The very JSON `mycel-memory cache THREAD_ID --json` prints (tests compare them).
                document = thread_json(cache, pricing)
                calls = call_lines(document, call_urls(row.thread_id))
                on, off = caching_models(calls)
                context.update(
                    thread=document,
                    calls=calls,
                    causes=cause_rows(document["totals"]["current"]),
                    caching_on=on,
                    caching_off=off,
                    config_url=f"{reverse('config')}?{urlencode({'thread': row.thread_id})}",
                    figure=cause_figure(document["totals"]["current"], str(document["unit"])),
                )
            return render_screen(request, "context_cache.html", None, context)
    fleet = guarded(
        "the fleet's prompt-cache report",
        lambda: cache_for_page(
            reader, book=pricing.book, kept=kept_report(source, reader, KEPT.name), deadline=deadline
        ),
        problems,
    )
    if fleet is not None:
        # `mycel-memory cache --all --json`'s very dict, its threads cut as a page lists them.
        document = fleet_json(fleet, pricing)
        context.update(
            fleet=document,
            threads=fleet_lines(document, lambda t: f"{page_url}?{urlencode({'thread': t})}"),
            causes=cause_rows(document["totals"]["current"]),
            figure=cause_figure(document["totals"]["current"], str(document["unit"])),
            **progress_context(fleet.progress, reload_url=request.get_full_path()),
        )
    return render_screen(request, "context_cache.html", None, context)
