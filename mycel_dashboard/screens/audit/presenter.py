"""What the Audit screen says of an entry whose outcome is unknown: the intent was recorded before the
write, no outcome after it (the process stopped, or the log could not take the outcome), so the write may
or may not have happened. Django-free."""

from __future__ import annotations

_CHECKS = {
    "rollback": "open the thread: if its newest checkpoint is a rollback to {target}, the write happened.",
    "undo": "open the thread: if its newest checkpoint is an undo, the write happened.",
    "config_save": "compare {target} with the proposal in this entry: if it holds it, the save happened.",
    "config_restore": "compare {target} with the version named here: if it holds it, the restore happened.",
    "export": "an export writes no Mycel file; ask whoever ran it whether the file arrived.",
    "retention_export": "a retention script writes no Mycel file; ask whoever ran it whether it arrived.",
}


def outcome_check(action: str, target: str) -> str:
    """What to look at to learn whether the write of an outcome-unknown entry happened."""
    check = _CHECKS.get(action, "look at what the entry names to see whether the write happened.")
    return "Outcome unknown: " + check.format(target=target or "the target")
