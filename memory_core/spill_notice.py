"""Mycel's spill notice: the text a ToolMessage keeps when its output went to a file. The one reader of it,
for both branches:
- main (reference §5): `Output too large ({size} bytes). Full output saved to: {path}` + the preview;
- dev (reference-dev §4.7): `<persisted-output path="{path}" bytes="{size}">` + size, preview and a closing
  `</persisted-output>`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

_NOTICE = re.compile(r"^Output too large \((?P<size>\d+) bytes\)\. Full output saved to: (?P<path>[^\n]+)")
# The path goes in unescaped, so it is everything up to the last `" bytes="` of the opening tag's line.
_DEV_NOTICE = re.compile(r'^<persisted-output path="(?P<path>[^\n]*)" bytes="(?P<size>\d+)">')
SPILL_FOLDER = (".leon", "tool-results")


@dataclass(frozen=True, slots=True)
class SpillNotice:
    size: int  # bytes of the full output
    path: str  # as Mycel wrote it (`<write failed>` when it could not save the file)

    @property
    def workspace(self) -> PurePosixPath | None:
        """The workspace the file went to ({workspace}/.leon/tool-results/{tool_call_id}.txt), if the path
        has that shape."""
        path = PurePosixPath(self.path)
        folder = path.parent
        while folder.name and folder.parent.name != SPILL_FOLDER[0]:
            folder = folder.parent  # a tool-call id with "/" put the file in a subfolder
        if folder.name != SPILL_FOLDER[1] or not path.is_absolute():
            return None
        return folder.parent.parent


def spill_notice(text: str) -> SpillNotice | None:
    """The notice at the start of a tool result's text, or None when the result was not spilled."""
    found = _NOTICE.match(text) or _DEV_NOTICE.match(text)
    return SpillNotice(size=int(found["size"]), path=found["path"].strip()) if found else None
