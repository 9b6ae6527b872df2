"""Spilled tool outputs: `{workspace}/.leon/tool-results/{tool_call_id}.txt` (reference §5).

Paths come from data (threads.cwd, a ToolMessage's text), so every candidate is confined: the id may hold
no '..' part, and after resolving symlinks the file must sit inside the workspace's own
`.leon/tool-results` folder (an id with "/" puts it in a subfolder there, as Mycel's os.path.join does).
The read itself goes through stores/confined.py: a hard link (the outside file under an inside name), a
symlink swapped in after the check, a pipe or a device is refused on the open file.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from memory_core.records import SpillFile
from memory_core.spill_notice import SPILL_FOLDER, spill_notice
from memory_core.stores.confined import NotConfined, read_confined
from memory_core.stores.rows import masked

MAX_SPILL_BYTES = 20_000_000
_NAME_BYTES = 251  # a file name is at most 255 bytes, and Mycel adds ".txt"


def is_safe_tool_call_id(tool_call_id: str) -> bool:
    """An id Mycel could have named a file after inside tool-results: any text, but no '..' or empty part,
    no NUL, no part too long for a file name ("/" makes subfolders, as Mycel's os.path.join does)."""
    if not tool_call_id or "\x00" in tool_call_id or tool_call_id.startswith("/"):
        return False
    parts = tool_call_id.split("/")
    return all(part not in {"", ".", ".."} for part in parts) and all(
        len(part.encode("utf-8", "surrogatepass")) <= _NAME_BYTES for part in parts
    )


def workspace_from_text(text: str) -> Path | None:
    """The workspace named in a spill notice ("Full output saved to: {ws}/.leon/tool-results/{id}.txt")."""
    notice = spill_notice(text)
    workspace = notice.workspace if notice is not None else None
    return Path(workspace) if workspace is not None else None


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
    except (OSError, RuntimeError, ValueError):
        return None
    if resolved != candidate or not resolved.is_relative_to(folder) or not resolved.is_file():
        return None
    return resolved


def read_spill(path: Path, tool_call_id: str) -> SpillFile:
    """The file `confined_spill_path` found, read from its workspace down through real folders only."""
    parts = (*SPILL_FOLDER, *f"{tool_call_id}.txt".split("/"))
    workspace = path.parents[len(parts) - 1]
    try:
        data, size = read_confined(workspace, parts, max_bytes=MAX_SPILL_BYTES)
    except NotConfined as exc:
        return SpillFile(tool_call_id, path, 0, None, f"refused: {exc}")
    except OSError as exc:
        return SpillFile(tool_call_id, path, 0, None, f"cannot read: {exc.strerror or exc}")
    text = masked(data.decode("utf-8", "replace"))  # a tool's whole output: a key it printed is masked too
    return SpillFile(tool_call_id, path, size, text, "shown truncated" if size > MAX_SPILL_BYTES else None)
