"""Deterministic conversation scripts: what the owner says and what the fake model answers.

A `ThreadScript` is plain data; `graph.build_thread` plays it through a real LangGraph graph. Tool
outputs are produced by the demo's real tools (`tools.py`) unless a `ToolUse` fixes its `output`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from memory_core.settings import MemorySettings

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
class Turn:
    """One run: the message that starts it and the model's answers, in order.

    `steers[i]` are messages Mycel's SteeringMiddleware injects just before model call `i` (0-based).
    """

    message: Human
    replies: tuple[Reply, ...]
    steers: Mapping[int, tuple[Human, ...]] = field(default_factory=dict)
    pause_seconds: float = 25.0


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


def owner(text: str, **extra: Any) -> Human:
    """A message the owner typed in the web UI (`source: owner`)."""
    return Human(text, {"source": "owner", "sender_name": None, "sender_avatar_url": None, **extra})


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


@dataclass(frozen=True, slots=True)
class Scenario:
    """A thread of the demo home: who owns it, its `threads` row, and its script."""

    key: str
    member: Literal["morel", "toad"]
    title: str
    threads_model: str
    workspace: str | None
    script: ThreadScript


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
        ThreadScript("anthropic", "claude-opus-4-6", "anthropic", turns, fork=fork),
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
        ThreadScript("anthropic", "claude-sonnet-4-5-20250929", "anthropic", turns),
    )


SNUG = MemorySettings(context_limit=5500)


def toad_compaction(workspace: str) -> Scenario:
    # Two turns sweep two banks in parallel: their kept part outgrows 60 % of the limit (a split turn).
    plan = ((("A", 46),), (("B", 44),), (("C", 58),), (("D", 46),), (("E", 68), ("F", 68)), (("G", 40),))
    turns = tuple(
        Turn(
            owner(
                f"Run the sensor sweep for greenhouse bank{'s' if len(banks) > 1 else ''} "
                f"{' and '.join(b for b, _ in banks)} and flag anything odd."
            ),
            (
                Reply(
                    "Sweeping " + ", ".join(b for b, _ in banks) + ".",
                    tuple(bash(f"sensor-sweep --bank {b} --count {n}", f"Bank {b}") for b, n in banks),
                ),
                Reply(
                    f"{sum(n for _, n in banks)} sensors read. Moisture below 6 is flagged FAULT; "
                    "everything else is within range."
                ),
            ),
        )
        for banks in plan
    )
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
        ThreadScript("openai", "gpt-4o-2024-08-06", "openai", turns, base_url="https://api.openai.com/v1"),
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
        ThreadScript("anthropic", "claude-haiku-4-5-20250929", "anthropic", turns),
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
        ThreadScript("anthropic", "claude-sonnet-4-5-20250929", "anthropic", played),
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
