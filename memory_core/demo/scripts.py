"""Deterministic conversation scripts: what the owner says and what the fake model answers.

A `ThreadScript` is plain data; `graph.build_thread` plays it through a real LangGraph graph. Tool
outputs are produced by the demo's real tools (`tools.py`) unless a `ToolUse` fixes its `output`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from memory_core.memory_settings import MemorySettings

Style = Literal["anthropic", "openai"]


@dataclass(frozen=True, slots=True)
class Human:
    """A HumanMessage as Mycel stores it: text plus Mycel's non-standard `metadata` dict."""

    text: str
    metadata: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ToolUse:
    """One tool call; `output=None` lets the demo's real tool compute the result."""

    name: str
    args: Mapping[str, Any]
    output: str | None = None


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted model answer: text, tool calls (several = parallel), or a provider error."""

    text: str = ""
    tool_uses: tuple[ToolUse, ...] = ()
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ModelSwitch:
    """The owner switched the thread's model (`POST /api/settings/config`, reference §8.2): Mycel hot-swaps
    the model and hands the memory middleware the new model's context limit (§3.5, §3.12)."""

    threads_model: str  # what `threads.model` says from then on
    model: str  # the concrete model it resolves to (checkpoint metadata `model`)
    context_limit: int


@dataclass(frozen=True, slots=True)
class Turn:
    """One run: the message that starts it and the model's answers, in order.

    `steers[i]` are messages Mycel's SteeringMiddleware injects just before model call `i` (0-based);
    `switch_model` is a model switch made before the run starts.
    """

    message: Human
    replies: tuple[Reply, ...]
    steers: Mapping[int, tuple[Human, ...]] = field(default_factory=dict)
    pause_seconds: float = 25.0
    switch_model: ModelSwitch | None = None


@dataclass(frozen=True, slots=True)
class Fork:
    """Fork the thread at the checkpoint that ended turn `after_turn` (1-based), then play `turns` on it."""

    after_turn: int
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class ThreadScript:
    """Everything needed to write one thread's checkpoints."""

    style: Style
    model: str
    model_provider: str
    turns: tuple[Turn, ...]
    fork: Fork | None = None
    memory: MemorySettings = field(default_factory=MemorySettings)
    web_run: bool = True
    base_url: str | None = None
    # 1-based ordinals of compactions whose summary save fails silently (reference §3.10).
    unsaved_compactions: frozenset[int] = frozenset()
    # A leonai TUI session: file operations are recorded under `{thread_id}-{8 hex}` per interaction.
    tui_session: bool = False


def owner(text: str, **extra: Any) -> Human:
    """A message the owner typed in the web UI (`source: owner`)."""
    return Human(text, {"source": "owner", "sender_name": None, "sender_avatar_url": None, **extra})


def typed(text: str) -> Human:
    """A message typed into leonai's TUI or a script: a plain HumanMessage, none of the web's metadata."""
    return Human(text, {})


def steer(text: str) -> Human:
    """An owner message sent while the agent was running, injected before the next model call."""
    return Human(
        text,
        {
            "source": "owner",
            "notification_type": "steer",
            "sender_name": None,
            "sender_avatar_url": None,
            "sender_id": None,
            "is_steer": True,
        },
    )


def queued_followup(text: str) -> Human:
    """A `POST /queue` item consumed after the run ended (source NULL becomes `system`)."""
    return Human(
        text,
        {
            "source": "system",
            "notification_type": "steer",
            "sender_name": None,
            "sender_avatar_url": None,
            "is_steer": False,
        },
    )


def chat_notification(sender: str, chat_id: str) -> Human:
    """The `<system-reminder>` a chat message wakes the agent with (`source: external`)."""
    return Human(
        f"<system-reminder>\nNew message from {sender} in chat {chat_id} (1 unread).\n</system-reminder>",
        {
            "source": "external",
            "notification_type": "chat",
            "sender_name": sender,
            "sender_avatar_url": None,
            "is_steer": False,
        },
    )


def qa(question: str, answer: str) -> Turn:
    """A plain question and answer."""
    return Turn(owner(question), (Reply(answer),))


def bash(command: str, description: str, output: str | None = None) -> ToolUse:
    return ToolUse("Bash", {"command": command, "description": description}, output)


# ---------------------------------------------------------------- the demo home's scenarios

# The limits Mycel resolves for the demo's models (reference §3.12; runtime.json says 0, so auto-detect):
# leon:large and leon:medium → 1,000,000, leon:mini → 200,000, gpt-4o-mini → 128,000 (the default).
LARGE = MemorySettings(context_limit=1_000_000)
MINI = MemorySettings(context_limit=200_000)
SNUG = MemorySettings(context_limit=5500)
SMALL = MemorySettings(context_limit=9000)
# What a leonai TUI user with a small local model ran under (a models.json entry since removed).
TUI_WINDOW = MemorySettings(context_limit=6000)
STANDALONE_THREAD_ID = "interactive-chat"
# The compaction of `morel_unsaved_summary` whose save fails: the last one before the estimate drops.
UNSAVED_COMPACTION = 3
# The virtual models the demo's models.json defines (the leon:* mapping, reference §4).
VIRTUAL_MODELS: Mapping[str, Mapping[str, Any]] = {
    "leon:snug": {
        "model": "claude-sonnet-4-5-20250929",
        "provider": "anthropic",
        "context_limit": SNUG.context_limit,
        "description": "small context window (demo: forces compaction)",
    },
    "leon:small": {
        "model": "claude-haiku-4-5-20250929",
        "provider": "anthropic",
        "context_limit": SMALL.context_limit,
        "description": "a small window, a little roomier than leon:snug (demo)",
    },
}


@dataclass(frozen=True, slots=True)
class Scenario:
    """A thread of the demo home: who owns it, its `threads` row, and its script.

    A standalone thread (`thread_id` fixed, no member, no `threads_model`) has no `threads` row: Mycel's
    scripts and TUI sessions exist only as checkpoints, their summaries and file operations in leon.db.
    """

    key: str
    member: Literal["morel", "toad"] | None
    title: str
    threads_model: str | None
    workspace: str | None
    script: ThreadScript
    thread_id: str | None = None

    @property
    def standalone(self) -> bool:
        return self.thread_id is not None


def morel_chat(chat_id: str) -> Scenario:
    turns = (
        qa(
            "Morel, suggest three names for our new staging cluster.",
            "Here are three ideas:\n\n1. **fern-stage** — short and calm\n2. **moss-preprod** — says what it "
            "is\n3. **spore-lab** — fun, but reads as experimental\n\nMy pick would be *fern-stage*.",
        ),
        qa(
            "Let's go with fern-stage. Any naming tips for the node pools?",
            "Keep the cluster prefix and add the workload and size class: `fern-stage-web-m`, "
            "`fern-stage-batch-l`. Avoid dates or people's names — pools outlive both.",
        ),
        Turn(
            chat_notification("Dev", chat_id),
            (
                Reply("", (ToolUse("chat_read", {"user_id": "dev-user"}),)),
                Reply(
                    "Confirming in chat.",
                    (ToolUse("chat_send", {"user_id": "dev-user", "content": "Confirmed: **fern-stage**."}),),
                ),
                Reply("Replied to Dev in chat: the staging cluster is fern-stage."),
            ),
        ),
    )
    # The owner went back to the end of turn 1 and asked differently: a fork, as LangGraph writes one.
    fork = Fork(
        after_turn=1,
        turns=(
            qa(
                "Actually, prefer names after rivers. Three more?",
                "River names, then: **loire-stage**, **tagus-stage**, **rhine-stage**. *loire-stage* reads best.",
            ),
        ),
    )
    return Scenario(
        "chat",
        "morel",
        "short chat, chat notification, then a fork",
        "leon:large",
        None,
        ThreadScript("anthropic", "claude-opus-4-6", "anthropic", turns, fork=fork, memory=LARGE),
    )


def morel_lab(workspace: str) -> Scenario:
    gen = f"{workspace}/make_readings.py"
    turns = (
        Turn(
            owner(
                "Set up a weather-readings lab: a deterministic generator and a notes file, then a trial run."
            ),
            (
                Reply(
                    "Creating the generator and a notes file.",
                    (
                        ToolUse("Write", {"file_path": gen, "content": _GENERATOR}),
                        ToolUse("Write", {"file_path": f"{workspace}/NOTES.md", "content": _NOTES}),
                    ),
                ),
                Reply(
                    "Adding a sixth station before the trial run.",
                    (
                        ToolUse(
                            "Edit",
                            {
                                "file_path": gen,
                                "old_string": '"old-mill", "quarry"]',
                                "new_string": '"old-mill", "quarry", "lighthouse"]',
                            },
                        ),
                    ),
                ),
                Reply("", (bash(f"python3 {gen} --rows 40 --seed 11", "Trial run: 40 readings"),)),
                Reply(
                    "The lab is ready: the generator has six stations and the trial run printed 40 readings."
                ),
            ),
        ),
        Turn(
            owner("Make a sample of 150 readings into readings.csv and give me per-station averages."),
            (
                Reply(
                    "Generating the sample and re-reading the notes in parallel.",
                    (
                        bash(
                            f"python3 {gen} --rows 150 --seed 12 | tee {workspace}/readings.csv",
                            "Generate readings.csv",
                        ),
                        ToolUse("Read", {"file_path": f"{workspace}/NOTES.md"}),
                    ),
                ),
                Reply(
                    "",
                    (
                        bash(f"station-averages {workspace}/readings.csv", "Per-station averages"),
                        ToolUse(
                            "Grep",
                            {
                                "pattern": "lighthouse",
                                "path": f"{workspace}/readings.csv",
                                "output_mode": "count",
                            },
                        ),
                    ),
                ),
                Reply("`readings.csv` holds 150 readings; the per-station averages are above."),
            ),
        ),
        Turn(
            owner(
                "Now a full month (~300 readings) into month.csv, list the folder, and check for june.csv."
            ),
            (
                Reply(
                    "Running all three at once.",
                    (
                        bash(
                            f"python3 {gen} --rows 300 --seed 13 | tee {workspace}/month.csv",
                            "Generate month.csv",
                        ),
                        bash(f"ls -la {workspace}", "List lab folder"),
                        bash(f"test -f {workspace}/june.csv", "Check for june.csv"),
                    ),
                ),
                Reply(
                    "`month.csv` now has 300 readings. There is no `june.csv` yet — the check exited with 1."
                ),
            ),
        ),
        Turn(
            owner(
                "Export a whole season of readings to the console (it's large) so we can page through it later."
            ),
            (
                Reply(
                    "This will be large; the runtime will keep it in a spill file.",
                    (bash(f"python3 {gen} --rows 1400 --seed 14", "Season export"),),
                ),
                Reply("The season export (~1,400 rows) was saved under `.leon/tool-results/`."),
            ),
        ),
        # Two more tool steps push the month turn out of protect_recent=3: its 12.7k output is hard-cleared.
        Turn(
            owner("Is there enough disk left for another season? Then tell me the lab folder's size."),
            (
                Reply("Checking free space.", (bash(f"df -h {workspace}", "Free disk space"),)),
                Reply("And the folder size.", (bash(f"du -sh {workspace}", "Lab folder size"),)),
                Reply("Plenty of space left; the lab folder is small."),
            ),
        ),
        qa(
            "Great — give me a short recap table.",
            "| Turn | Tools | Result |\n|---|---|---|\n| Setup | Write ×2, Edit, Bash | generator + notes |\n"
            "| Sample | Bash, Read, Bash, Grep | readings.csv |\n| Month | Bash ×3 | month.csv |\n"
            "| Season | Bash (spilled) | spill file |",
        ),
    )
    return Scenario(
        "lab",
        "morel",
        "tool-heavy: parallel calls, outputs in every size band, a spilled output",
        "leon:medium",
        workspace,
        ThreadScript("anthropic", "claude-sonnet-4-5-20250929", "anthropic", turns, memory=LARGE),
    )


def toad_compaction(workspace: str) -> Scenario:
    # Two turns sweep two banks in parallel: their kept part outgrows 60 % of the limit (a split turn).
    plan = ((("A", 46),), (("B", 44),), (("C", 58),), (("D", 46),), (("E", 68), ("F", 68)), (("G", 40),))
    verdict = "{n} sensors read. Moisture below 6 is flagged FAULT; everything else is within range."
    turns = tuple(_sweep_turn(banks, verdict=verdict) for banks in plan)
    return Scenario(
        "compaction",
        "toad",
        "small context window: compaction on every call once past 70 %",
        "leon:snug",
        workspace,
        ThreadScript(
            "openai",
            "claude-sonnet-4-5-20250929",
            "anthropic",
            turns,
            memory=SNUG,
            base_url="https://llm-gateway.demo.invalid/v1",
        ),
    )


def toad_steer() -> Scenario:
    turns = (
        Turn(
            owner("Rebuild the search index for the docs site."),
            (
                Reply(
                    "Rebuilding the index now.",
                    (bash("rebuild-index docs", "Rebuild docs index", "indexed 12408 documents in 3.9s"),),
                ),
                Reply(
                    "Index rebuilt. I also saw your note about vacuuming — doing that now.",
                    (bash("vacuum db", "Vacuum database", "VACUUM complete: 18.2 MB -> 11.7 MB"),),
                ),
                Reply("Done: the index is rebuilt (12,408 docs) and the database is vacuumed."),
            ),
            steers={1: (steer("Also vacuum the database when the index is done."),)},
        ),
        Turn(
            queued_followup("Post a one-line status note for the team channel."),
            (Reply("Status: docs search index rebuilt and database vacuumed — all green."),),
        ),
    )
    return Scenario(
        "steer",
        "toad",
        "steer while running, a consumed follow-up, one still queued",
        "leon:large",
        None,
        ThreadScript(
            "openai", "gpt-4o-2024-08-06", "openai", turns, base_url="https://api.openai.com/v1", memory=LARGE
        ),
    )


def morel_glossary(workspace: str) -> Scenario:
    path = f"{workspace}/glossary.md"
    table = "| en | es | de | zh |\n|---|---|---|---|\n| terminal | terminal | Terminal | 终端 |\n"
    turns = (
        Turn(
            owner("Start a small glossary (English, Spanish, German, Chinese) for our sandbox terms."),
            (
                Reply("Creating the glossary.", (ToolUse("Write", {"file_path": path, "content": table}),)),
                Reply(
                    "Adding «snapshot».",
                    (
                        ToolUse(
                            "Edit",
                            {
                                "file_path": path,
                                "old_string": "| terminal | terminal | Terminal | 终端 |\n",
                                "new_string": "| terminal | terminal | Terminal | 终端 |\n"
                                "| snapshot | instantánea | Momentaufnahme | 快照 |\n",
                            },
                        ),
                    ),
                ),
                Reply("", (ToolUse("Read", {"file_path": path}),)),
                Reply("Glossary started with two terms: terminal (终端) and snapshot (快照)."),
            ),
        ),
        Turn(
            owner("¿Puedes añadir «sesión» también? Danke! 谢谢!"),
            (
                Reply(
                    error="Error code: 500 - {'type': 'error', 'error': {'type': 'api_error', "
                    "'message': 'Internal server error'}}"
                ),
            ),
        ),
    )
    return Scenario(
        "glossary",
        "morel",
        "multilingual file edits, then a provider error",
        "leon:mini",
        workspace,
        ThreadScript("anthropic", "claude-haiku-4-5-20250929", "anthropic", turns, memory=MINI),
    )


def toad_qa() -> Scenario:
    turns = (
        qa("What's the difference between a lease and a terminal in Mycel?", _LEASE_ANSWER),
        qa(
            "And when does a chat session close?", "After 10 idle minutes or 24 hours, whichever comes first."
        ),
        qa("Thanks!", "You're welcome."),
    )
    return Scenario(
        "qa",
        "toad",
        "short Q&A, OpenAI-style string content",
        "gpt-4o-mini",
        None,
        ThreadScript("openai", "gpt-4o-mini", "anthropic", turns),
    )


# ---------------------------------------------------------------- issue 11's evidence cases


_VERDICT = "{n} sensors read; moisture below 6 is flagged FAULT, the rest is fine."


def _sweep_turn(
    banks: tuple[tuple[str, int], ...], switch: ModelSwitch | None = None, *, verdict: str = _VERDICT
) -> Turn:
    """One greenhouse sweep turn: a Bash sweep per bank (parallel when several), then a one-line verdict
    (`{n}`: the sensors read)."""
    return Turn(
        owner(
            f"Run the sensor sweep for greenhouse bank{'s' if len(banks) > 1 else ''} "
            f"{' and '.join(b for b, _ in banks)} and flag anything odd."
        ),
        (
            Reply(
                "Sweeping " + ", ".join(b for b, _ in banks) + ".",
                tuple(bash(f"sensor-sweep --bank {b} --count {n}", f"Bank {b}") for b, n in banks),
            ),
            Reply(verdict.format(n=sum(n for _, n in banks))),
        ),
        switch_model=switch,
    )


def interactive_chat(workspace: str) -> Scenario:
    """A leonai TUI session on a small local model: compacts many times under a 6,000 window."""
    api, worker, script = "api", "worker", f"{workspace}/slow_report.py"
    turns = (
        Turn(
            typed("The api felt slow this morning. Show me the last 50 lines of its log."),
            (
                Reply("", (bash(f"service-log --service {api} --lines 50", "api log, last 50 lines"),)),
                Reply("Most requests finish under 200 ms; a handful of WARN lines take 0.3–2.4 s."),
            ),
        ),
        Turn(
            typed("How many are over 250 ms?"),
            (
                Reply(
                    "", (bash(f"slow-requests --service {api} --lines 50 --over 250", "Count slow requests"),)
                ),
                Reply("A few of the 50 are over 250 ms; some of those returned 503."),
            ),
        ),
        Turn(
            typed("Write me a small script that prints that count for any service."),
            (
                Reply(
                    "Writing `slow_report.py`.",
                    (ToolUse("Write", {"file_path": script, "content": _SLOW_REPORT}),),
                ),
                Reply("`slow_report.py` takes a service name and a threshold in ms."),
            ),
        ),
        Turn(
            typed("Now the worker's log, 50 lines."),
            (
                Reply("", (bash(f"service-log --service {worker} --lines 50", "worker log, 50 lines"),)),
                Reply("The worker looks like the api: mostly fast, with a few slow jobs."),
            ),
        ),
        Turn(
            typed("Make the script's default threshold 500 ms and show it to me."),
            (
                Reply(
                    "Raising the default.",
                    (
                        ToolUse(
                            "Edit",
                            {"file_path": script, "old_string": "default=250", "new_string": "default=500"},
                        ),
                    ),
                ),
                Reply("", (ToolUse("Read", {"file_path": script}),)),
                Reply("The default threshold is now 500 ms."),
            ),
        ),
        Turn(
            typed("Worker jobs over 500 ms, then?"),
            (
                Reply(
                    "",
                    (
                        bash(
                            f"slow-requests --service {worker} --lines 50 --over 500", "Worker jobs > 500 ms"
                        ),
                    ),
                ),
                Reply("Only a few worker jobs exceed 500 ms."),
            ),
        ),
        Turn(
            typed("And the billing service, 40 lines, just to compare."),
            (
                Reply("", (bash("service-log --service billing --lines 40", "billing log, 40 lines"),)),
                Reply("Billing is the calmest of the three."),
            ),
        ),
        Turn(
            typed("Which service should I look at first?"),
            (Reply("The api: it has the most slow requests and the 503s."),),
        ),
        Turn(
            typed("One more look at the api, the last 30 lines."),
            (
                Reply("", (bash(f"service-log --service {api} --lines 30", "api log, 30 lines"),)),
                Reply("Same picture as before: the slow ones are the WARN lines."),
            ),
        ),
    )
    return Scenario(
        "standalone",
        None,
        "standalone TUI session: no threads row, summaries in leon.db, compacted under a 6,000 window",
        None,
        workspace,
        ThreadScript(
            "openai",
            "qwen2.5-7b-instruct",
            "openai",
            turns,
            memory=TUI_WINDOW,
            web_run=False,
            base_url="http://127.0.0.1:8080/v1",
            tui_session=True,
        ),
        thread_id=STANDALONE_THREAD_ID,
    )


def morel_model_switch() -> Scenario:
    """Compacts under leon:snug (5,500), then the owner switches to leon:small (9,000) and it compacts again."""
    switch = ModelSwitch("leon:small", "claude-haiku-4-5-20250929", SMALL.context_limit)
    # Five sweeps under leon:snug, then the switch before bank M's sweep.
    turns = tuple(_sweep_turn(((bank, 40),), switch if bank == "M" else None) for bank in "HIJKLMN")
    return Scenario(
        "model_switch",
        "morel",
        "model switched between compactions: leon:snug (5,500) then leon:small (9,000)",
        "leon:small",
        None,
        ThreadScript("anthropic", "claude-sonnet-4-5-20250929", "anthropic", turns, memory=SNUG),
    )


def morel_unsaved_summary() -> Scenario:
    """One compaction in the middle could not save its summary ("database is locked"); the cache kept it.

    After that compaction the billing log leaves protect_recent and is trimmed, the estimate falls back
    under the trigger, and the next calls reuse the cached summary whose row is missing.
    """
    # (service, lines per Bash step): the search turn looks twice.
    plan = (("api", (80,)), ("worker", (10,)), ("billing", (80,)), ("search", (10, 10)), ("auth", (30,)),
            ("mail", (20,)), ("cache", (40,)))  # fmt: skip
    turns = tuple(
        Turn(
            owner(
                f"Pull the {service} log ({steps[0]} lines), count what is slow, and tell me if it matters."
            ),
            (
                *(
                    Reply("", (bash(f"service-log --service {service} --lines {lines}", f"{service} log"),))
                    for lines in steps
                ),
                Reply(f"The {service} log has {steps[-1]} requests; the slow ones are marked WARN."),
            ),
        )
        for service, steps in plan
    )
    return Scenario(
        "unsaved_summary",
        "morel",
        "a summary save failed in the middle (database is locked): no row for that compaction",
        "leon:small",
        None,
        ThreadScript(
            "anthropic",
            "claude-haiku-4-5-20250929",
            "anthropic",
            turns,
            memory=SMALL,
            unsaved_compactions=frozenset({UNSAVED_COMPACTION}),
        ),
    )


def morel_large_window(workspace: str) -> Scenario:
    """A leon:large (1,000,000) thread with real volume: ~20k estimated tokens, big outputs pruned."""
    runbook = f"{workspace}/RUNBOOK.md"
    turns = (
        Turn(
            owner("We're on call this week. Pull the api and worker logs so we have a baseline."),
            (
                Reply(
                    "Pulling both logs.",
                    (
                        bash("service-log --service api --lines 140", "api log, 140 lines"),
                        bash("service-log --service worker --lines 60", "worker log, 60 lines"),
                    ),
                ),
                Reply("Baseline taken: the api has a few slow requests, the worker is quiet."),
            ),
        ),
        Turn(
            owner("Start a runbook for the on-call week and read it back to me."),
            (
                Reply(
                    "Writing the runbook.", (ToolUse("Write", {"file_path": runbook, "content": _RUNBOOK}),)
                ),
                Reply("", (ToolUse("Read", {"file_path": runbook}),)),
                Reply("The runbook is in place with the escalation steps and the dashboards to watch."),
            ),
        ),
        Turn(
            owner("Now the database proxy's log — the long one, 180 lines."),
            (
                Reply("", (bash("service-log --service dbproxy --lines 180", "dbproxy log, 180 lines"),)),
                Reply("The proxy is healthy; the slow lines match the api's slow requests."),
            ),
        ),
        Turn(
            owner("Count the slow requests in each of the three."),
            (
                Reply(
                    "Counting.",
                    (
                        bash("slow-requests --service api --lines 140 --over 250", "api slow requests"),
                        bash("slow-requests --service worker --lines 60 --over 250", "worker slow requests"),
                        bash(
                            "slow-requests --service dbproxy --lines 180 --over 250", "dbproxy slow requests"
                        ),
                    ),
                ),
                Reply("The counts are above: the api and the proxy line up."),
            ),
        ),
        Turn(
            owner("Pull the search service's log too, 120 lines, and the billing log, 50."),
            (
                Reply("", (bash("service-log --service search --lines 120", "search log, 120 lines"),)),
                Reply("", (bash("service-log --service billing --lines 50", "billing log, 50 lines"),)),
                Reply("Search has a slow tail like the api; billing is calm."),
            ),
        ),
        Turn(
            owner("Add what we learned to the runbook."),
            (
                Reply(
                    "Adding a findings section.",
                    (
                        ToolUse(
                            "Edit",
                            {
                                "file_path": runbook,
                                "old_string": "## Findings\n",
                                "new_string": "## Findings\n\n- api and dbproxy slow requests coincide.\n"
                                "- search has a slow tail; billing is calm.\n",
                            },
                        ),
                    ),
                ),
                Reply("The runbook now lists the findings."),
            ),
        ),
    )
    return Scenario(
        "large_window",
        "morel",
        "1,000,000-token window with real volume: ~2 % full, big outputs trimmed and cleared",
        "leon:large",
        workspace,
        ThreadScript("anthropic", "claude-opus-4-6", "anthropic", turns, memory=LARGE),
    )


def long_thread(turns: int) -> Scenario:
    """`turns` short tool turns (four messages each), for large-thread tests."""
    played = tuple(
        Turn(
            owner(f"Check step {n} of the rollout."),
            (
                Reply(f"Checking step {n}.", (bash(f"rollout-status --step {n}", f"Step {n} status"),)),
                Reply(f"Step {n} is healthy."),
            ),
            pause_seconds=5.0,
        )
        for n in range(1, turns + 1)
    )
    return Scenario(
        "long",
        "toad",
        f"long thread: {turns} turns",
        "leon:medium",
        None,
        ThreadScript("anthropic", "claude-sonnet-4-5-20250929", "anthropic", played, memory=LARGE),
    )


def filler(n: int) -> Scenario:
    """Extra small threads when a demo asks for more than the built-in scenarios."""
    style: Style = "anthropic" if n % 2 else "openai"
    return Scenario(
        f"extra-{n}",
        "morel" if n % 2 else "toad",
        f"extra thread {n}",
        "leon:large",
        None,
        ThreadScript(
            style,
            "claude-opus-4-6",
            "anthropic",
            (qa(f"Give me tip #{n} for writing runbooks.", f"Tip #{n}: write the rollback step first."),),
            memory=LARGE,
        ),
    )


_GENERATOR = '''#!/usr/bin/env python3
"""Deterministic weather-station readings (demo fixture)."""
import argparse
import random

STATIONS = ["north-ridge", "harbor", "airfield", "old-mill", "quarry"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=10)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    rng = random.Random(a.seed)
    print("ts,station,temp_c,humidity,pressure_hpa")
    for i in range(a.rows):
        print(f"{i},{rng.choice(STATIONS)},{rng.uniform(-4, 31):.1f}")


if __name__ == "__main__":
    main()
'''

_NOTES = """# weather lab

Scratch notes for the readings lab.

- `make_readings.py --rows N --seed S` prints CSV to stdout
- stations are listed in `STATIONS`
"""

_LEASE_ANSWER = (
    "A lease is the durable claim on a sandbox (provider, instance, desired and observed state). "
    "A terminal is a shell bound to one thread inside that lease, with its own working directory."
)

_SLOW_REPORT = """#!/usr/bin/env python3
\"\"\"Print how many requests of a service's log took longer than a threshold.\"\"\"
import argparse
import subprocess


def main():
    p = argparse.ArgumentParser()
    p.add_argument("service")
    p.add_argument("--over", type=int, default=250)
    a = p.parse_args()
    log = subprocess.run(["service-log", "--service", a.service], capture_output=True, text=True).stdout
    slow = [line for line in log.splitlines() if int(line.rsplit("ms=", 1)[1]) > a.over]
    print(f"{len(slow)} requests over {a.over} ms")


if __name__ == "__main__":
    main()
"""

_RUNBOOK = """# On-call runbook

## Before you start
- Check the api, worker and dbproxy dashboards; note the p95 latency of each.
- Make sure you can reach the pager and the status page.

## When the api is slow
1. Pull the last 200 lines of the api log and count the requests over 250 ms.
2. Compare with the dbproxy log: slow requests that coincide point at the database.
3. If more than 5 % of requests return 503, page the database owner.
4. Otherwise open a ticket with the slow request ids and carry on.

## When the worker backs up
1. Look at the queue depth; above 1,000 jobs, scale the worker pool by two.
2. Check for one job type dominating the slow lines.

## Escalation
- Database: the data platform rota.
- Payments (billing): the payments rota, any hour.

## Findings
"""
