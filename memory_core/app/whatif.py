"""A thread's calls under a proposed config: the current side is the record (`calls`), the proposed side a
replay under the proposal's settings (the record itself when the proposal changes nothing)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from memory_core.app.calls import record_configured
from memory_core.app.errors import BadValue
from memory_core.app.inputs import parse_count, parse_fraction, parse_rules_name
from memory_core.app.thread import recorded_call_json
from memory_core.app.thread_settings import thread_memory_settings
from memory_core.call_record.as_json import call_json
from memory_core.call_record.calls import checkpoints_holding, replayed
from memory_core.call_record.dev_calls import dev_replayed
from memory_core.call_record.summariser import with_summariser_requests
from memory_core.memory_settings import MemorySettings
from memory_core.model_view import newest_active
from memory_core.records import ThreadRow
from memory_core.replay import replay_calls, simulated_summary_chars
from memory_core.rules.profile import RulesProfile, rules_for
from memory_core.stores.reader import MycelReader
from memory_core.tokens import default_counter


@dataclass(frozen=True, slots=True, kw_only=True)
class Proposal:
    """The settings an operator proposes; None keeps what was in force."""

    context_limit: int | None = None
    threshold: float | None = None
    soft_trim_chars: int | None = None
    hard_clear_threshold: int | None = None
    protect_recent: int | None = None
    keep_recent_tokens: int | None = None
    trigger_tokens: int | None = None  # Mycel dev's absolute trigger
    rules: RulesProfile | None = None

    @classmethod
    def option_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def from_text(cls, given: Mapping[str, str | None]) -> Proposal:
        """A proposal from text values by option name (unknown names are the face's to refuse)."""
        return cls(
            context_limit=parse_count(given.get("context_limit"), "context_limit", minimum=1),
            threshold=parse_fraction(given.get("threshold"), "threshold"),
            soft_trim_chars=parse_count(given.get("soft_trim_chars"), "soft_trim_chars", minimum=1),
            hard_clear_threshold=parse_count(
                given.get("hard_clear_threshold"), "hard_clear_threshold", minimum=1
            ),
            # 0 is allowed for these two: Mycel's own code handles it (nothing protected / keep nothing).
            protect_recent=parse_count(given.get("protect_recent"), "protect_recent", minimum=0),
            keep_recent_tokens=parse_count(given.get("keep_recent_tokens"), "keep_recent_tokens", minimum=0),
            # Mycel dev's schema refuses a trigger of 0.
            trigger_tokens=parse_count(given.get("trigger_tokens"), "trigger_tokens", minimum=1),
            rules=parse_rules_name(given.get("rules")),
        )

    def applied_to(self, base: MemorySettings) -> MemorySettings:
        """`base` with every proposed value in place."""
        settings = replace(base, context_limit=self.context_limit) if self.context_limit else base
        if self.threshold is not None:
            settings = replace(settings, threshold=self.threshold)
        changed = {
            "soft_trim_chars": self.soft_trim_chars,
            "hard_clear_threshold": self.hard_clear_threshold,
            "protect_recent": self.protect_recent,
            "keep_recent_tokens": self.keep_recent_tokens,
        }
        return replace(settings, **{k: v for k, v in changed.items() if v is not None})


def whatif(reader: MycelReader, row: ThreadRow, facts: dict[str, Any], proposal: Proposal) -> dict[str, Any]:
    """`whatif --json` (the API's too): {current, proposed}; `facts` are the thread's (thread_facts)."""
    current = facts["memory"]["calls"]
    warnings = facts["warnings"]
    profile = proposal.rules or rules_for(row.layout)
    # The proposal goes on today's config (the record's side is the config as it was then).
    today = thread_memory_settings(reader.locations, row).settings
    proposed_settings = proposal.applied_to(today)
    if proposal.trigger_tokens is not None:
        if profile is not RulesProfile.DEV:
            raise BadValue("trigger_tokens", "applies only under Mycel dev's rules")
        proposed_settings = replace(proposed_settings, fixed_trigger_tokens=proposal.trigger_tokens)
    if proposed_settings == today == record_configured(reader.locations, row).settings:
        return _with_totals({"current": current, "proposed": current, "warnings": warnings})
    state = reader.get_state(row.thread_id, row.head_checkpoint_id).value
    messages = state.messages if state is not None else ()
    active = newest_active(reader.list_summaries(row.thread_id).value)
    chars = simulated_summary_chars(active.summary_text if active else None)
    checkpoints = reader.list_checkpoints(row.thread_id).value
    holding = checkpoints_holding(checkpoints, row.head_checkpoint_id)
    if profile is RulesProfile.DEV:
        calls = dev_replayed(
            messages, proposed_settings, holding=holding, summary_chars=chars, counter=default_counter()
        )
        reason = "--rules" if proposal.rules else f"{row.layout} layout"
        calls = with_summariser_requests(
            calls, lambda _: proposed_settings, lambda _: messages, rules=profile
        )
        proposed = [recorded_call_json(c, profile, reason) for c in calls]
    else:
        replay = replay_calls(
            messages, settings=proposed_settings, summary_chars=chars, counter=default_counter()
        )
        calls = with_summariser_requests(
            replayed(replay, proposed_settings, holding=holding),
            lambda _: proposed_settings,
            lambda _: messages,
            rules=profile,
        )
        proposed = [call_json(c) for c in calls]
    return _with_totals({"current": current, "proposed": proposed, "warnings": warnings})


def _with_totals(data: dict[str, Any]) -> dict[str, Any]:
    """Each side's sums over its calls: tokens sent, compactions, and characters sent to the summariser
    (in the branch's request shape: what the Config page's what-if shows for the thread)."""
    data["totals"] = {side: side_totals(data[side]) for side in ("current", "proposed")}
    return data


def side_totals(calls: list[dict[str, Any]]) -> dict[str, int]:
    return {
        "sent_tokens": sum(c["estimated_tokens"]["sent"] for c in calls),
        "compactions": sum(1 for c in calls if c["compacted"]),
        "summariser_chars": sum(r["chars"] for c in calls for r in c["summariser_requests"]),
    }
