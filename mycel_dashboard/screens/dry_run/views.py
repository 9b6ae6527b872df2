"""Screen 4: compaction dry-run — what Mycel would summarise and keep, under the current or proposed config."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET, require_POST

from memory_core.app.calls import dev_next_call
from memory_core.app.thread_settings import thread_memory_settings
from memory_core.compaction import CompactionPlan, plan_compaction
from memory_core.rules.profile import RulesProfile, rules_for
from memory_core.rules.summariser import planned_requests
from mycel_dashboard.models import AuditEntry
from mycel_dashboard.screens.dry_run.forms import DryRunForm
from mycel_dashboard.screens.dry_run.summariser import configured_endpoint, generate_summary, summary_prompt
from mycel_dashboard.screens.shared.charts import rules_words
from mycel_dashboard.screens.shared.forms import RULES_CHOICES, RulesForm
from mycel_dashboard.screens.shared.memory import guarded, problem_text
from mycel_dashboard.screens.shared.replays import thread_record
from mycel_dashboard.web.audit import AuditTrail
from mycel_dashboard.web.forms import error_text
from mycel_dashboard.web.lookups import thread_or_404
from mycel_dashboard.web.permissions import can_act
from mycel_dashboard.web.render import render_screen
from mycel_dashboard.web.source import open_source


def _plans(request_data: Any, thread_id: str) -> dict[str, Any]:
    form = DryRunForm(request_data)
    source, reader = open_source()
    problems: list[str] = []
    row = thread_or_404(reader, thread_id, problems)
    if not form.is_valid():
        problems.extend(f"{name}: {error_text(errors)}" for name, errors in form.errors.items())
    checkpoint_id = form.cleaned_data.get("checkpoint") if form.is_valid() else None
    state_result = reader.get_state(thread_id, checkpoint_id or None)
    problems.extend(problem_text(p) for p in state_result.problems)
    state = state_result.value
    context: dict[str, Any] = {"thread_id": thread_id, "thread": row, "form": form, "problems": problems}
    if row is None or state is None:
        problems.append("There is no readable checkpoint to plan from.")
        return context
    resolved = thread_memory_settings(source.locations, row)
    current, limit = resolved.settings, resolved.limit
    overrides = form.overrides()
    rules, trigger_tokens, rules_notes = RulesForm(request_data).choice()
    problems.extend(rules_notes)
    profile = rules or rules_for(row.layout)
    proposed = replace(current, **overrides)
    if profile is RulesProfile.DEV and trigger_tokens is not None:
        proposed = replace(proposed, fixed_trigger_tokens=trigger_tokens)
    prompt = summary_prompt()
    dev_split = profile is RulesProfile.DEV  # dev always keeps the newest message
    plan = guarded(
        "the compaction plan",
        lambda: plan_compaction(
            state.messages, settings=proposed, summary_prompt=prompt, keep_newest=dev_split
        ),
        problems,
    )
    baseline: CompactionPlan | None = None
    if overrides:
        baseline = guarded(
            "the current plan",
            lambda: plan_compaction(state.messages, settings=current, keep_newest=dev_split),
            problems,
        )
    dev_plan = None
    if profile is RulesProfile.DEV:
        dev_plan = guarded(
            "Mycel dev's decision", lambda: dev_next_call(reader, row, state.messages, proposed), problems
        )
    # The limit Mycel's record says the thread last ran under (the Thread page's), when this plan's differs.
    record = guarded(
        "the thread's record",
        lambda: thread_record(reader, row, rules=rules),
        problems,
    )
    summariser = planned_requests(plan, rules=profile) if plan is not None else ()
    ran_under = record.calls[-1].context_limit if record is not None and record.calls else None
    context.update(
        record_limit=ran_under if ran_under not in (None, proposed.context_limit) else None,
        rules=profile.value,
        rules_override=rules.value if rules else "",
        rules_words=rules_words(profile, "chosen here" if rules else f"{row.layout} layout"),
        rules_choices=RULES_CHOICES,
        trigger_tokens=trigger_tokens,
        dev_plan=dev_plan,
        state=state,
        settings=proposed,
        current_settings=current,
        limit=limit,
        overrides=overrides,
        plan=plan,
        baseline=baseline,
        summarised=plan.to_summarize if plan else (),
        summariser=summariser,
        summariser_chars=sum(r.chars for r in summariser),
        endpoint=configured_endpoint(),
    )
    return context


@require_GET
def dry_run(request: HttpRequest, thread_id: str) -> HttpResponse:
    return render_screen(request, "dry_run.html", "dry-run-result", _plans(request.GET, thread_id))


@require_POST
def dry_run_generate(request: HttpRequest, thread_id: str) -> HttpResponse:
    """Send the summarisation request to the configured model and show both sides; nothing is written."""
    if not can_act(request.user):
        raise PermissionDenied("Only operators may call the summary model.")
    context = _plans(request.POST, thread_id)
    endpoint = context.get("endpoint")
    plan: CompactionPlan | None = context.get("plan")
    if endpoint is None:
        context["generation_error"] = (
            "No summary model is configured (set DASHBOARD_SUMMARY_URL and DASHBOARD_SUMMARY_MODEL)."
        )
        return render_screen(request, "dry_run.html", "dry-run-result", context, status=400)
    if plan is None or plan.compact_up_to_index is None:
        context["generation_error"] = "Mycel would not summarise anything here, so there is nothing to send."
        return render_screen(request, "dry_run.html", "dry-run-result", context, status=400)
    exchange = generate_summary(endpoint, prompt=summary_prompt(), conversation=plan.conversation_text)
    trail = AuditTrail(request, AuditEntry.Action.SUMMARY_PREVIEW, thread_id=thread_id)
    asked = {"request_chars": len(plan.conversation_text), "summarize_count": plan.summarize_count}
    if exchange.error is None:
        trail.applied(
            target=endpoint.model,
            message=f"{len(exchange.summary or '')} characters of summary",
            before=asked,
        )
    else:
        trail.failed(exchange.error, target=endpoint.model, before=asked)
    context["exchange"] = exchange
    return render_screen(request, "dry_run.html", "dry-run-result", context)
