"""Write a complete demo Mycel data home: every store Mycel keeps, filled consistently from one seed."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from memory_core.demo import scripts
from memory_core.demo.determinism import DemoClock, SeededIds
from memory_core.demo.graph import FAKE_API_KEY, BuiltThread, RunEventsTableRow, build_thread
from memory_core.demo.memory import SettingsSegment
from memory_core.demo.subagents import write_subagents
from memory_core.demo.tables import (
    MemberRow,
    MessageQueueTableRow,
    SandboxRecord,
    SummaryEntry,
    ThreadsTableRow,
    write_file_operations,
    write_json,
    write_models_json,
    write_queue,
    write_run_events,
    write_runtime_json,
    write_sandbox,
    write_summaries,
    write_threads_table,
)
from memory_core.demo.tools import FileOperationsTableRow

OWNER_ID = "dev-user"
# The built-in scenarios (`_scenarios`); more threads are fillers.
BUILT_IN_THREADS = 10
DB_FILES = ("leon.db", "summary.db", "file_ops.db", "events.db", "queue.db", "sandbox.db")
_COMMAND_TOOLS = {"Bash"}


@dataclass(frozen=True, slots=True)
class DemoThread:
    """One thread of the demo home and what it demonstrates.

    The memory facts are recorded while the thread was written, not recomputed: `settings_segments`
    are the settings Mycel's middleware held from each model call on (calls numbered from 1 in the
    order they ran; `effective_keep_recent_tokens` is what it applied), `compacted_at` the message
    count of every compaction, and `summaries_not_stored` those whose summary row was never written.
    A `standalone` thread has no `threads` row (and no member); its summaries are in leon.db.
    """

    thread_id: str
    key: str
    title: str
    member_id: str | None
    threads_model: str | None
    message_count: int
    run_ids: tuple[str, ...]
    summaries: int
    file_operations: int
    spill_files: tuple[Path, ...]
    fork_checkpoint_id: str | None
    fork_parent_checkpoint_id: str | None
    failed: bool
    has_checkpoints: bool
    standalone: bool = False
    model_calls: int = 0
    settings_segments: tuple[SettingsSegment, ...] = ()
    compacted_at: tuple[int, ...] = ()
    summaries_not_stored: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class DemoManifest:
    """What `write_demo_home` wrote: the folder, the seed, every thread, and the files."""

    folder: Path
    seed: int
    api_key: str
    threads: tuple[DemoThread, ...]
    queued_thread_ids: tuple[str, ...]
    files: tuple[Path, ...]

    def thread(self, key: str) -> DemoThread:
        """The thread built from scenario `key` (e.g. `lab`, `compaction`, `chat`, `steer`)."""
        return next(t for t in self.threads if t.key == key)


def _scenarios(folder: Path, chat_id: str, count: int) -> list[scripts.Scenario]:
    ws = folder / "workspaces"
    built_in = [
        scripts.morel_lab(str(ws / "morel-lab")),
        scripts.toad_compaction(str(ws / "toad-greenhouse")),
        scripts.morel_chat(chat_id),
        scripts.toad_steer(),
        scripts.morel_glossary(str(ws / "morel-glossary")),
        scripts.toad_qa(),
        # Issue 11's evidence cases; all morel's or standalone, so toad's idle thread keeps its id.
        scripts.interactive_chat(str(ws / "interactive-chat")),
        scripts.morel_model_switch(),
        scripts.morel_unsaved_summary(),
        scripts.morel_large_window(str(ws / "morel-oncall")),
    ]
    chosen = built_in[:count]
    chosen.extend(scripts.filler(n) for n in range(1, count - len(built_in) + 1))
    return chosen


def _clear(folder: Path) -> None:
    for name in DB_FILES:
        for suffix in ("", "-wal", "-shm"):
            (folder / f"{name}{suffix}").unlink(missing_ok=True)
    for name in ("runtime.json", "models.json"):
        (folder / name).unlink(missing_ok=True)
    for name in ("workspaces", "members"):
        shutil.rmtree(folder / name, ignore_errors=True)


def _members(ids: SeededIds, clock: DemoClock, folder: Path) -> dict[str, MemberRow]:
    created = round(clock.now_epoch(), 5)
    human = MemberRow(OWNER_ID, "Dev", "human", None, None, None, None, created, None, 0)
    agents = {}
    for key, name, about in (
        ("morel", "Morel", "Thoughtful senior analyst"),
        ("toad", "Toad", "Curious and energetic assistant"),
    ):
        member_id = ids.member_id()
        agents[key] = MemberRow(
            member_id,
            name,
            "mycel_agent",
            None,
            about,
            str(folder / "members" / member_id),
            OWNER_ID,
            created,
            created,
            0,
        )
    return {"owner": human, **agents}


def _sandbox_record(
    ids: SeededIds, clock: DemoClock, thread_id: str, cwd: str, ran_commands: bool
) -> SandboxRecord:
    created = clock.local_iso()
    volume_id = ids.uuid4()
    lease_hex = ids.hex(12)
    return SandboxRecord(
        thread_id=thread_id,
        volume_id=volume_id,
        volume_path=f"{cwd.rsplit('/workspaces', 1)[0]}/volumes/{volume_id}",
        lease_id=f"lease-{lease_hex}",
        instance_id=f"leon-lease-{lease_hex}" if ran_commands else None,
        terminal_id=f"term-{ids.hex(12)}",
        cwd=cwd,
        session_id=f"sess-{ids.hex(12)}" if ran_commands else None,
        runtime_id=f"runtime-{ids.hex(12)}" if ran_commands else None,
        lease_event_id=f"evt-{ids.hex(32)}",
        created_at=created,
        active_at=clock.local_iso(),
        snapshot_at=clock.iso_z(),
    )


def _summary_entries(ids: SeededIds, built: BuiltThread) -> list[SummaryEntry]:
    last = len(built.summaries) - 1
    return [
        SummaryEntry(
            summary_id=f"{built.thread_id}_{ids.hex(12)}",
            thread_id=built.thread_id,
            summary_text=row.summary_text,
            compact_up_to_index=row.compact_up_to_index,
            compacted_at=row.compacted_at,
            is_split_turn=row.is_split_turn,
            split_turn_prefix=row.split_turn_prefix,
            is_active=i == last,
            created_at=built.summary_times[i],
        )
        for i, row in enumerate(built.summaries)
    ]


def _ran_commands(scenario: scripts.Scenario) -> bool:
    turns = list(scenario.script.turns) + list(scenario.script.fork.turns if scenario.script.fork else ())
    return any(
        use.name in _COMMAND_TOOLS for turn in turns for reply in turn.replies for use in reply.tool_uses
    )


def write_demo_home(
    folder: Path,
    *,
    seed: int = 7,
    threads: int = BUILT_IN_THREADS,
    long_turns: int = 0,
    overwrite: bool = False,
) -> DemoManifest:
    """Write a complete Mycel data home into `folder` and describe it.

    leon.db is written by LangGraph's AsyncSqliteSaver driving a real graph; the other stores use
    Mycel's table layouts. Identical output for the same arguments. Refuses to replace an existing
    leon.db unless `overwrite`.
    """
    folder = Path(folder)
    if (folder / "leon.db").exists():
        if not overwrite:
            raise FileExistsError(f"{folder / 'leon.db'} already exists")
        _clear(folder)
    folder.mkdir(parents=True, exist_ok=True)
    ids = SeededIds(seed, namespace="home")
    clock = DemoClock(seed=seed)
    members = _members(ids, clock, folder)
    chat_id = ids.uuid4()
    scenarios = _scenarios(folder, chat_id, threads)
    if long_turns > 0:
        scenarios.append(scripts.long_thread(long_turns))

    seq = {"morel": 0, "toad": 0}
    thread_rows: list[ThreadsTableRow] = []
    summaries: list[SummaryEntry] = []
    operations: list[FileOperationsTableRow] = []
    # Standalone threads' summaries and file operations go to leon.db (reference §1.4).
    leon_summaries: list[SummaryEntry] = []
    leon_operations: list[FileOperationsTableRow] = []
    events: list[RunEventsTableRow] = []
    sandboxes: list[SandboxRecord] = []
    described: list[DemoThread] = []

    def new_thread(member: str, model: str | None, cwd: str | None) -> ThreadsTableRow:
        member_id = members[member].id
        seq[member] += 1
        row = ThreadsTableRow(
            id=f"{member_id}-{seq[member]}",
            member_id=member_id,
            sandbox_type="local",
            model=model,
            cwd=cwd,
            observation_provider=None,
            agent=None,
            is_main=int(seq[member] == 1),
            branch_index=seq[member] - 1,
            created_at=round(clock.now_epoch(), 5),
        )
        thread_rows.append(row)
        return row

    for scenario in scenarios:
        workspace = Path(scenario.workspace) if scenario.workspace else None
        if scenario.thread_id is not None:
            thread_id, member_id = scenario.thread_id, None
        else:
            assert scenario.member is not None  # a web thread belongs to a member
            row = new_thread(scenario.member, scenario.threads_model, scenario.workspace)
            thread_id, member_id = row.id, row.member_id
            ran = _ran_commands(scenario)
            sandboxes.append(
                _sandbox_record(ids, clock, row.id, scenario.workspace or str(folder / "workspaces"), ran)
            )
        built = build_thread(
            folder / "leon.db", thread_id, scenario.script, seed=seed, workspace=workspace, clock=clock
        )
        if scenario.standalone:
            leon_summaries.extend(_summary_entries(ids, built))
            leon_operations.extend(built.file_operations)
        else:
            summaries.extend(_summary_entries(ids, built))
            operations.extend(built.file_operations)
            # Mycel keeps only each thread's latest run in events.db (cleanup_old_runs, keep_latest=1).
            events.extend(built.runs[-1].events)
        described.append(
            DemoThread(
                thread_id=thread_id,
                key=scenario.key,
                title=scenario.title,
                member_id=member_id,
                threads_model=scenario.threads_model,
                message_count=built.head_message_count,
                run_ids=tuple(r.run_id for r in built.runs),
                summaries=len(built.summaries),
                file_operations=len(built.file_operations),
                spill_files=built.spill_files,
                fork_checkpoint_id=built.fork_checkpoint_id,
                fork_parent_checkpoint_id=built.fork_parent_checkpoint_id,
                failed=any(r.error for r in built.runs),
                has_checkpoints=True,
                standalone=scenario.standalone,
                model_calls=built.model_calls,
                settings_segments=built.settings_segments,
                compacted_at=built.compacted_at,
                summaries_not_stored=built.summaries_not_stored,
            )
        )

    # A branch created in the UI but never run: a threads row, sandbox resources, a queued message.
    idle = new_thread("toad", "leon:mini", None)
    sandboxes.append(_sandbox_record(ids, clock, idle.id, str(folder / "workspaces"), False))
    described.append(
        DemoThread(idle.id, "idle", "created, never run; one queued message", idle.member_id, idle.model,
                   0, (), 0, 0, (), None, None, False, False)
    )  # fmt: skip
    queue = [
        MessageQueueTableRow(
            idle.id, "Draft the on-call handover notes.", "steer", None, None, None, clock.sqlite_utc()
        )
    ]
    steer_thread = next((t for t in described if t.key == "steer"), None)
    if steer_thread is not None:
        queue.insert(
            0,
            MessageQueueTableRow(
                steer_thread.thread_id,
                "And archive last week's index snapshot.",
                "steer",
                "owner",
                OWNER_ID,
                "Dev",
                clock.sqlite_utc(),
            ),
        )

    members = {k: m if k == "owner" else replace(m, next_entity_seq=seq[k]) for k, m in members.items()}
    write_threads_table(folder / "leon.db", thread_rows, members.values())
    write_summaries(folder / "summary.db", summaries)
    write_file_operations(folder / "file_ops.db", operations)
    if leon_summaries or leon_operations:
        write_summaries(folder / "leon.db", leon_summaries)
        write_file_operations(folder / "leon.db", leon_operations)
    write_run_events(folder / "events.db", events)
    write_queue(folder / "queue.db", queue)
    write_sandbox(folder / "sandbox.db", sandboxes)
    write_runtime_json(folder / "runtime.json")
    write_models_json(folder / "models.json", virtual=scripts.VIRTUAL_MODELS)
    for name in ("runtime.json", "models.json"):  # the config the agents ran under: written before them
        os.utime(folder / name, (clock.start_epoch, clock.start_epoch))
    for member in members.values():
        if member.config_dir:
            write_json(
                Path(member.config_dir) / "meta.json",
                {"name": member.name, "description": member.description},
            )
            (Path(member.config_dir) / "agent.md").write_text(f"# {member.name}\n\n{member.description}.\n")
    write_subagents(
        folder, next((t.thread_id for t in described if t.has_checkpoints), None), seed=seed, clock=clock
    )
    files = tuple(sorted(p for p in folder.rglob("*") if p.is_file()))
    return DemoManifest(
        folder, seed, FAKE_API_KEY, tuple(described), tuple(q.thread_id for q in queue), files
    )


def thread_ids(manifest: DemoManifest) -> Sequence[str]:
    """Every thread id in the demo home, in creation order."""
    return [t.thread_id for t in manifest.threads]
