"""The cache screen's rows (Django-free): the very dicts `mycel-memory cache --json` prints, with links."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from memory_core.economics.prompt_cache import CAUSES, Cause

# The causes that re-write the cache, as the table's columns (none re-writes nothing).
BREAKING = tuple(str(c) for c in CAUSES if c is not Cause.NONE)


@dataclass(frozen=True, slots=True)
class ThreadLine:
    thread_id: str
    url: str  # ?thread=ID on this screen
    totals: Mapping[str, Any]  # totals_json of its current side

    @property
    def by_cause(self) -> list[int]:
        return [self.totals["by_cause"][c]["rewritten_tokens"] for c in BREAKING]


@dataclass(frozen=True, slots=True)
class CallLine:
    call: Mapping[str, Any]  # call_json
    url: str  # /threads/ID/calls/N/

    @property
    def cause_words(self) -> str:
        cause = self.call["cause"]
        return "first call" if cause is None else "appends only" if cause == str(Cause.NONE) else cause


def fleet_lines(document: Mapping[str, Any], thread_url: Callable[[str], str]) -> list[ThreadLine]:
    return [ThreadLine(t["thread_id"], thread_url(t["thread_id"]), t["current"]) for t in document["threads"]]


def call_lines(document: Mapping[str, Any], call_url: Callable[[int], str]) -> list[CallLine]:
    return [CallLine(c, call_url(c["call"])) for c in document["calls"]]


def cause_rows(totals: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(cause, its totals) for the causes that re-write, in issue 15's order."""
    return [(c, totals["by_cause"][c]) for c in BREAKING]


def caching_models(calls: list[CallLine]) -> tuple[list[str], list[str]]:
    """The models of the thread's calls with Mycel's prompt caching, and those without."""
    on = sorted({c.call["model"] for c in calls if c.call["prompt_caching"] and c.call["model"]})
    off = sorted({c.call["model"] or "unknown model" for c in calls if not c.call["prompt_caching"]})
    return on, off
