"""Full texts one click away: a stored (or sent) message, and a spilled tool output's file."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse

from mycel_dashboard.screens.shared.memory import guarded, problem_text, thread_memory
from mycel_dashboard.screens.thread_detail.forms import TimelineForm
from mycel_dashboard.screens.thread_detail.parts import pruning_of
from mycel_dashboard.screens.thread_detail.presenter import View, notice_of, page_of
from mycel_dashboard.web.lookups import head_state, thread_or_404
from mycel_dashboard.web.render import render_screen
from mycel_dashboard.web.source import open_source


def message_text(request: HttpRequest, thread_id: str, index: int) -> HttpResponse:
    values, notes = TimelineForm(request.GET).values()
    view = View(values["view"])
    source, reader = open_source()
    problems: list[str] = []
    thread = thread_or_404(reader, thread_id, problems)
    state = head_state(reader, thread_id, problems)
    if state is not None and not 0 <= index < len(state.messages):
        raise Http404(f"Thread {thread_id!r} has no message #{index}.")
    text = None
    notice = None
    if state is not None:
        message = state.messages[index]
        text = message.text
        notice = notice_of(message)
        if view is View.SENT:
            memory = thread_memory(thread, override=values["limit"], locations=source.locations)
            head = state.checkpoint.checkpoint_id
            pruning = guarded(
                "Mycel's pruning",
                lambda: pruning_of(reader.store_key, thread_id, head, state.messages, memory.settings),
                problems,
            )
            if pruning is not None:
                text = pruning.decisions[index].message.text
    context = {
        "thread_id": thread_id,
        "index": index,
        "crumb": f"message #{index}",
        "view": view,
        "text": text,
        "notice": notice,
        "page": page_of(index),
        "problems": problems + notes,
    }
    return render_screen(request, "message.html", "message-text", context)


def spill(request: HttpRequest, thread_id: str, tool_call_id: str) -> HttpResponse:
    _, reader = open_source()
    problems: list[str] = []
    thread_or_404(reader, thread_id, problems)
    result = reader.get_spill_file(thread_id, tool_call_id)
    problems.extend(problem_text(p) for p in result.problems)
    if result.value is None and not problems:
        raise Http404(f"No spill file for tool call {tool_call_id!r}.")
    context = {
        "thread_id": thread_id,
        "tool_call_id": tool_call_id,
        "spill": result.value,
        "problems": problems,
    }
    return render_screen(request, "spill.html", None, context)
