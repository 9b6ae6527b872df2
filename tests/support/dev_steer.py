"""A thread in Mycel dev's layout whose owner steered a running run, for the tests of dev's steer note
(tests/postgres/test_pg_request_time.py, tests/browser/test_steer_note_journey.py)."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from memory_core.demo.dev_layout import DevRun, DevThread

THREAD = "m_devSteer0001-1"
# What SteeringMiddleware.before_model stores for an owner's item queued while the run was active.
STEER_METADATA = {
    "source": "owner",
    "notification_type": "steer",
    "sender_name": "Ada",
    "sender_avatar_url": None,
    "sender_id": "u_devSteerOwner",
    "is_steer": True,
}


def steered_dev_thread() -> DevThread:
    """Run 1: the owner asks, the agent runs a tool, the owner steers while it runs, the agent answers.
    Run 2: a question answered after it. Stored: [h0, a1, t2, steer 3, a4, h5, a6]."""
    call = {"name": "Bash", "args": {"command": "ls pond"}, "id": "call_steer_1"}
    return DevThread(
        THREAD,
        "m_devSteer0001",
        "Toad",
        "gpt-4o-mini",
        runs=(
            DevRun(
                "List the files in the pond folder.",
                (
                    AIMessage("", id="a1", tool_calls=[call]),
                    ToolMessage("tadpole.txt\n" * 50, tool_call_id="call_steer_1", name="Bash"),
                    HumanMessage("Stop listing; count them instead.", metadata=STEER_METADATA),
                    AIMessage("There are 50 files.", id="a4"),
                ),
            ),
            DevRun("Which is the biggest?", (AIMessage("tadpole.txt", id="a6"),)),
        ),
    )
