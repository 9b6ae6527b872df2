"""The calibration screen (/context/calibration/): Mycel's estimate against tiktoken and the provider."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import NoReverseMatch, reverse

from memory_core.app.calibration import KEPT, calibration_for_page
from mycel_dashboard.screens.context.calibration.charts import calibration_figure
from mycel_dashboard.screens.context.calibration.presenter import model_sections, thread_rows
from mycel_dashboard.screens.shared.fleet_budget import fleet_deadline, kept_report, progress_context
from mycel_dashboard.screens.shared.memory import guarded, problem_text
from mycel_dashboard.web.forms import LenientForm
from mycel_dashboard.web.links import call_urls
from mycel_dashboard.web.render import render_screen
from mycel_dashboard.web.source import open_source


class ModelForm(LenientForm):
    model = forms.CharField(required=False, max_length=500, strip=True, label="model")


def _reversed(name: str, *args: str) -> str:
    try:
        return reverse(name, args=list(args))
    except NoReverseMatch:
        return ""


def calibration_page(request: HttpRequest) -> HttpResponse:
    deadline = fleet_deadline(settings.DASHBOARD_FLEET_BUDGET_S)
    values, notes = ModelForm(request.GET).values()
    model: str | None = values["model"] or None
    source, reader = open_source()
    problems: list[str] = []
    found = guarded(
        "the calibration report",
        lambda: calibration_for_page(
            reader, model=model, kept=kept_report(source, reader, KEPT.name), deadline=deadline
        ),
        problems,
    )
    context: dict[str, object] = {
        "source": source,
        "model": model,
        "notes": notes,
        "problems": problems,
        "calibration": None,
    }
    if found is not None:
        problems.extend(problem_text(p) for p in found.problems)
        if model is not None and found.model is None:
            notes.append(f"No model call used the model {model!r}; showing every model.")
        # `mycel-memory calibration --json`'s very dict, its long lists cut as a page shows them.
        report = found.document
        threads, all_threads = thread_rows(
            report, thread_url=lambda thread_id: _reversed("thread", thread_id)
        )
        context.update(
            model=found.model,
            models=found.models,
            calibration=report,
            sections=model_sections(
                report,
                call_url=lambda thread_id, number: call_urls(thread_id)(number),
                config_url=reverse("config"),
            ),
            figure=calibration_figure(report),
            thread_rows=threads,
            all_thread_rows=all_threads,
            **progress_context(found.progress, reload_url=request.get_full_path()),
        )
    return render_screen(request, "context_calibration.html", None, context)
