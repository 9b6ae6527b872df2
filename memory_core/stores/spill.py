"""Spilled tool outputs: `{workspace}/.leon/tool-results/{tool_call_id}.txt` (reference §5).

Paths come from data (threads.cwd, a ToolMessage's text), so every candidate is confined: the id is one
plain file-name part, and after resolving symlinks the file must sit directly in the workspace's own
`.leon/tool-results` folder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from memory_core.records import SpillFile

SPILL_FOLDER = (".leon", "tool-results")
_SAVED_TO = re.compile(r"Full output saved to: ([^\n]+)")
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,199}$")
MAX_SPILL_BYTES = 20_000_000


def is_safe_tool_call_id(tool_call_id: str) -> bool:
    """One plain name part: no separators, no '..', no leading dot, no control characters."""
    return bool(_SAFE_ID.match(tool_call_id)) and ".." not in tool_call_id


def workspace_from_text(text: str) -> Path | None:
    """The workspace named in a spill notice ("Full output saved to: {ws}/.leon/tool-results/{id}.txt")."""
    found = _SAVED_TO.search(text)
    if not found:
        return None
    path = Path(found.group(1).strip())
    if path.parent.name != SPILL_FOLDER[1] or path.parent.parent.name != SPILL_FOLDER[0]:
        return None
    return path.parent.parent.parent


def relocated(workspace: Path, homes: Iterable[Path]) -> list[Path]:
    """The workspace as written, then re-rooted under each data home when it lived under another `.leon`.

    Mycel records absolute paths; a copied data home (like the shared sample) keeps its workspaces under
    `<home>/workspaces/…` while the data still says `/home/<user>/.leon/workspaces/…`.
    """
    out = [workspace]
    parts = workspace.parts
    if ".leon" in parts:
        rest = parts[parts.index(".leon") + 1 :]
        if rest:
            out.extend(home.joinpath(*rest) for home in homes)
    return list(dict.fromkeys(out))


def confined_spill_path(workspace: Path, tool_call_id: str) -> Path | None:
    """The spill file for this id inside this workspace, or None if it is missing or escapes the folder."""
    if not is_safe_tool_call_id(tool_call_id) or not workspace.is_absolute():
        return None
    try:
        root = workspace.resolve(strict=True)
        folder = root.joinpath(*SPILL_FOLDER)
        if folder.resolve(strict=True) != folder:
            return None  # .leon or tool-results is a symlink pointing elsewhere
        candidate = folder / f"{tool_call_id}.txt"
        resolved = candidate.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if resolved != candidate or resolved.parent != folder or not resolved.is_file():
        return None
    return resolved


def read_spill(path: Path, tool_call_id: str) -> SpillFile:
    try:
        size = path.stat().st_size
        if size > MAX_SPILL_BYTES:
            with path.open("rb") as handle:
                data = handle.read(MAX_SPILL_BYTES)
            return SpillFile(tool_call_id, path, size, data.decode("utf-8", "replace"), "shown truncated")
        return SpillFile(tool_call_id, path, size, path.read_bytes().decode("utf-8", "replace"))
    except OSError as exc:
        return SpillFile(tool_call_id, path, 0, None, f"cannot read: {exc.strerror or exc}")
