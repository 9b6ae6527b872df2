"""The errors every face shares: the CLI prints them as one line (exit 2), the API answers them as JSON
(400, 404 or 503), a page says them. Raised by the application layer, never by a face for another."""

from __future__ import annotations

from collections.abc import Sequence

from memory_core.ids import printable
from memory_core.records import StoreProblem


class AppError(Exception):
    """A problem the caller can fix or must be told about, said in one line."""


class BadValue(AppError):
    """An input value the question cannot take. `option` is its neutral name (`turns`, `since`), which a
    face spells its own way (`--turns` on the command line, `turns` in a query string)."""

    def __init__(self, option: str, problem: str) -> None:
        super().__init__(f"{option} {problem}")
        self.option = option
        self.problem = problem

    def spelled(self, option: str) -> str:
        """The same message with the option named as the face names it."""
        return f"{option} {self.problem}"


class UnknownThread(AppError):
    """No Mycel store has the thread (404); `problems` are what reading it met."""

    def __init__(self, message: str, *, problems: Sequence[StoreProblem] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems)

    @classmethod
    def named(cls, thread_id: str, problems: Sequence[StoreProblem] = ()) -> UnknownThread:
        """The one way to say that no store has `thread_id` (shown escaped: ids are arbitrary text)."""
        return cls(f"unknown thread {printable(repr(thread_id))}: no Mycel store has it", problems=problems)


class StoreUnreadable(AppError):
    """The store the answer is about could not be read (missing, locked, damaged, out of reach): 503."""
