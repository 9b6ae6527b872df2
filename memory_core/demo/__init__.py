"""Demo Mycel data written by the real libraries: LangGraph's saver for checkpoints, Mycel's layouts for the rest.

`write_demo_home` writes a whole data home; the builders below let tests write just what they need.
"""

from memory_core.demo.determinism import DemoClock, SeededIds
from memory_core.demo.graph import (
    FAKE_API_KEY,
    BuiltThread,
    RunEventsTableRow,
    RunRecord,
    ScriptedChatModel,
    build_thread,
)
from memory_core.demo.home import DemoManifest, DemoThread, write_demo_home
from memory_core.demo.memory import SavedSummary
from memory_core.demo.scripts import (
    Fork,
    Human,
    Reply,
    ThreadScript,
    ToolUse,
    Turn,
    bash,
    chat_notification,
    owner,
    qa,
    queued_followup,
    steer,
)
from memory_core.demo.tables import (
    MemberRow,
    MessageQueueTableRow,
    SandboxRecord,
    SummaryEntry,
    ThreadsTableRow,
    write_file_operations,
    write_models_json,
    write_queue,
    write_run_events,
    write_runtime_json,
    write_sandbox,
    write_summaries,
    write_threads_table,
)
from memory_core.demo.tools import FileOperationsTableRow

__all__ = [
    "FAKE_API_KEY",
    "BuiltThread",
    "DemoClock",
    "DemoManifest",
    "DemoThread",
    "FileOperationsTableRow",
    "Fork",
    "Human",
    "MemberRow",
    "MessageQueueTableRow",
    "Reply",
    "RunEventsTableRow",
    "RunRecord",
    "SandboxRecord",
    "ScriptedChatModel",
    "SeededIds",
    "SummaryEntry",
    "SavedSummary",
    "ThreadsTableRow",
    "ThreadScript",
    "ToolUse",
    "Turn",
    "bash",
    "build_thread",
    "chat_notification",
    "owner",
    "qa",
    "queued_followup",
    "steer",
    "write_demo_home",
    "write_file_operations",
    "write_models_json",
    "write_queue",
    "write_run_events",
    "write_runtime_json",
    "write_sandbox",
    "write_summaries",
    "write_threads_table",
]
