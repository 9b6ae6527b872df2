"""The demo agent's tools: real file tools on the thread's workspace and a tiny offline shell.

Write/Edit/Read/Grep touch real files under the workspace (and record file operations the way
Mycel's filesystem service does); Bash understands only the demo's own commands, so nothing is
ever executed. Outputs mimic the text Mycel's tools return.
"""

from __future__ import annotations

import json
import random
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_core.demo.determinism import DemoClock

STATIONS = ("north-ridge", "harbor", "airfield", "old-mill", "quarry", "lighthouse")


@dataclass(frozen=True, slots=True)
class FileOperationsTableRow:
    """One `file_operations` row (checkpoint_id holds the web run id, as in Mycel)."""

    id: str
    thread_id: str
    checkpoint_id: str
    timestamp: float
    operation_type: str
    file_path: str
    before_content: str | None
    after_content: str
    changes: str | None
    status: str = "applied"


@dataclass(slots=True)
class ToolContext:
    """What the tools need to know about the run they serve."""

    thread_id: str
    workspace: Path | None
    clock: DemoClock
    new_id: Callable[[], str]
    run_id: str = ""
    operations: list[FileOperationsTableRow] = field(default_factory=list)


class ToolFailure(Exception):
    """A tool error that becomes a ToolMessage with status `error`."""


def _resolve(ctx: ToolContext, file_path: str) -> Path:
    if ctx.workspace is None:
        raise ToolFailure("this thread has no workspace")
    path = Path(file_path)
    if not path.is_absolute():
        path = ctx.workspace / path
    resolved = path.resolve()
    if not resolved.is_relative_to(ctx.workspace.resolve()):
        raise ToolFailure(f"path outside the workspace: {file_path}")
    return resolved


def _record(ctx: ToolContext, kind: str, path: Path, before: str | None, after: str, changes: Any) -> None:
    ctx.operations.append(
        FileOperationsTableRow(
            id=ctx.new_id(),
            thread_id=ctx.thread_id,
            checkpoint_id=ctx.run_id,
            timestamp=round(ctx.clock.now_epoch(), 5),
            operation_type=kind,
            file_path=str(path),
            before_content=before,
            after_content=after,
            changes=None if changes is None else json.dumps(changes),
        )
    )


def tool_write(ctx: ToolContext, args: Mapping[str, Any]) -> str:
    path = _resolve(ctx, str(args["file_path"]))
    content = str(args["content"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    _record(ctx, "write", path, None, content, None)
    lines = content.count("\n") + (0 if content.endswith("\n") else 1)
    return f"File created: {path}\n   Lines: {lines}\n   Size: {len(content.encode())} bytes"


def tool_edit(ctx: ToolContext, args: Mapping[str, Any]) -> str:
    path = _resolve(ctx, str(args["file_path"]))
    old, new = str(args["old_string"]), str(args["new_string"])
    before = path.read_text(encoding="utf-8")
    if before.count(old) != 1:
        raise ToolFailure(f"old_string must occur exactly once in {path}")
    after = before.replace(old, new)
    path.write_text(after, encoding="utf-8")
    _record(ctx, "edit", path, before, after, [{"old_string": old, "new_string": new}])
    return f"File edited: {path}\n   Replaced 1 occurrence(s)"


def tool_read(ctx: ToolContext, args: Mapping[str, Any]) -> str:
    path = _resolve(ctx, str(args["file_path"]))
    lines = path.read_text(encoding="utf-8").splitlines()
    start = int(args.get("offset", 1))
    limit = int(args.get("limit", 2000))
    shown = lines[start - 1 : start - 1 + limit]
    end = start + len(shown) - 1
    body = "\n".join(f"{n:>6}\u2192{line}" for n, line in enumerate(shown, start))
    return f'<file name="{path}" start_line="{start}" end_line="{end}" full_length="{len(lines)}">\n{body}\n</file>'


def tool_grep(ctx: ToolContext, args: Mapping[str, Any]) -> str:
    path = _resolve(ctx, str(args["path"]))
    pattern = str(args["pattern"])
    hits = [line for line in path.read_text(encoding="utf-8").splitlines() if pattern in line]
    if args.get("output_mode") == "count":
        return f"{path}:{len(hits)}"
    return "\n".join(f"{path}:{line}" for line in hits)


def readings_csv(rows: int, seed: int) -> str:
    """CSV weather readings; about 43 characters per row."""
    rng = random.Random(seed)
    out = ["ts,station,temp_c,humidity,pressure_hpa"]
    for i in range(rows):
        day = 1 + (i // 48) % 30
        out.append(
            f"2026-07-{day:02d}T{(i // 2) % 24:02d}:{(i % 2) * 30:02d},{rng.choice(STATIONS)},"
            f"{rng.uniform(-4, 31):.1f},{rng.uniform(0.2, 0.99):.2f},{rng.uniform(985, 1032):.1f}"
        )
    return "\n".join(out) + "\n"


def sensor_sweep(bank: str, count: int) -> str:
    """One line per sensor; about 54 characters per line."""
    rng = random.Random(f"bank:{bank}")
    lines = []
    for i in range(1, count + 1):
        moisture = rng.uniform(0, 100)
        status = "FAULT" if moisture < 6 else "ok"
        lines.append(
            f"bank-{bank}/sensor-{i:03d} moisture={moisture:.2f} temp={12 + rng.uniform(0, 20):.1f} status={status}"
        )
    return "\n".join(lines)


def service_log(service: str, lines: int) -> str:
    """Access-log lines of a demo service; about 80 characters per line, a few slow or failing requests."""
    rng = random.Random(f"log:{service}")
    paths = ("/v1/orders", "/v1/orders/{id}", "/v1/stock", "/v1/health", "/v1/invoices", "/v1/users/me")
    out = []
    for i in range(lines):
        slow = rng.random() < 0.12
        ms = rng.randint(250, 2400) if slow else rng.randint(4, 180)
        status = 503 if slow and rng.random() < 0.3 else 200
        path = rng.choice(paths).replace("{id}", str(rng.randint(1000, 9999)))
        out.append(
            f"2026-11-29T{8 + i // 360:02d}:{(i // 6) % 60:02d}:{(i * 10) % 60:02d}Z {service}-{rng.randint(1, 4)} "
            f"{'WARN' if slow else 'INFO'} req={rng.getrandbits(32):08x} GET {path} status={status} ms={ms}"
        )
    return "\n".join(out)


def _slow_requests(log: str, over_ms: int) -> str:
    slow = [line for line in log.splitlines() if int(line.rsplit("ms=", 1)[1]) > over_ms]
    failing = sum("status=503" in line for line in slow)
    return f"{len(slow)} of {len(log.splitlines())} requests over {over_ms} ms ({failing} returned 503)"


def _station_averages(csv_text: str) -> str:
    sums: dict[str, list[float]] = {}
    for line in csv_text.splitlines()[1:]:
        _, station, temp, humidity, _ = line.split(",")
        sums.setdefault(station, []).extend((float(temp), float(humidity)))
    rows = []
    for station in sorted(sums):
        values = sums[station]
        temps, hums = values[0::2], values[1::2]
        rows.append(
            f"{station:<12} n={len(temps):3d} mean_temp={sum(temps) / len(temps):6.2f} "
            f"mean_hum={sum(hums) / len(hums):.2f}"
        )
    return "\n".join(rows)


def _flag(words: list[str], name: str, default: str) -> str:
    return words[words.index(name) + 1] if name in words else default


def tool_bash(ctx: ToolContext, args: Mapping[str, Any]) -> str:
    """An offline stand-in for Mycel's Bash tool that knows the demo's commands."""
    command = str(args["command"])
    words = shlex.split(command.replace("|", " | "))
    if "make_readings.py" in command:
        text = readings_csv(int(_flag(words, "--rows", "10")), int(_flag(words, "--seed", "1")))
        if "tee" in words:
            target = _resolve(ctx, words[words.index("tee") + 1])
            target.write_text(text, encoding="utf-8")
        return text
    if words[0] == "station-averages":
        return _station_averages(_resolve(ctx, words[1]).read_text(encoding="utf-8"))
    if words[0] == "sensor-sweep":
        return sensor_sweep(_flag(words, "--bank", "A"), int(_flag(words, "--count", "40")))
    if words[0] == "service-log":
        return service_log(_flag(words, "--service", "api"), int(_flag(words, "--lines", "20")))
    if words[0] == "slow-requests":
        log = service_log(_flag(words, "--service", "api"), int(_flag(words, "--lines", "20")))
        return _slow_requests(log, int(_flag(words, "--over", "250")))
    if words[0] == "rollout-status":
        return f"step {_flag(words, '--step', '0')}: 12/12 pods ready, error rate 0.0%"
    if words[0] == "ls" and ctx.workspace is not None:
        entries = sorted(p for p in ctx.workspace.iterdir() if p.is_file())
        listing = [f"-rw-r--r-- 1 leon leon {p.stat().st_size:>6} {p.name}" for p in entries]
        return "total {}\n{}".format(len(listing), "\n".join(listing))
    if words[0] == "test":
        if _resolve(ctx, words[-1]).exists():
            return ""
        return "Exit code: 1\n[stderr]\n"
    return f"demo shell: command not available offline: {words[0]}"


def tool_chat_read(ctx: ToolContext, args: Mapping[str, Any]) -> str:
    return "[Dev]: Morel, can you confirm the staging cluster name in writing?"


def tool_chat_send(ctx: ToolContext, args: Mapping[str, Any]) -> str:
    return f"Message sent to {args.get('user_id', 'someone')}."


TOOLS: dict[str, Callable[[ToolContext, Mapping[str, Any]], str]] = {
    "Write": tool_write,
    "Edit": tool_edit,
    "Read": tool_read,
    "Grep": tool_grep,
    "Bash": tool_bash,
    "chat_read": tool_chat_read,
    "chat_send": tool_chat_send,
}
