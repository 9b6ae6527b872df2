"""The record as JSON-ready data: what `mycel-memory calls`, `whatif` and `thread --json` print."""

from __future__ import annotations

from typing import Any

from memory_core.call_record.calls import RecordedCall, recompacts_every_call
from memory_core.call_record.evidence import SettingsInForce
from memory_core.call_record.intervals import UNBOUNDED
from memory_core.rules.dev import trigger_under
from memory_core.rules.profile import RulesProfile


def call_json(call: RecordedCall) -> dict[str, Any]:
    """One call as `mycel-memory calls --json` prints it (and the what-if's two lists)."""
    return {
        "call": call.call,
        "checkpoint_id": call.checkpoint_id,
        "message_index": call.index,
        "request_messages": call.request_messages,
        "compacted": call.compacted,
        "split_turn": call.split_turn,
        "summary_id": call.summary_id,
        "summary_stored": call.summary_stored,
        "summary_compact_up_to_index": call.summary.compact_up_to_index if call.summary else None,
        # An unstored summary's size by the provider's counts (call_record.provider_counts), else None.
        "summary_tokens_by_provider": call.summary_tokens,
        "estimated_tokens": {
            "stored": call.stored_tokens,
            "after_pruning": call.pruned_tokens,
            "sent": call.sent_tokens,
        },
        "tiktoken_tokens": call.tiktoken_tokens,
        "provider_input_tokens": call.provider_input_tokens,
        "soft_trimmed": call.soft_trimmed,
        "hard_cleared": call.hard_cleared,
        "over_trigger": call.over_trigger,
        "trigger_tokens": call.trigger_tokens,
        "context_limit": call.context_limit,
        "context_limit_source": call.context_limit_source,
        # What Mycel's summariser got before this call: sizes as sent (memory_core.rules.summariser).
        "summariser_requests": [r.as_json() for r in call.summariser],
    }


def dev_call_json(call: RecordedCall) -> dict[str, Any]:
    """What a call under Mycel dev's rules adds: the estimate it compared, the attempt, the breaker after,
    and what dev added to the request at call time."""
    return {
        "trigger_view_tokens": call.trigger_view_tokens,
        "attempted": call.attempted,
        "breaker": {"failure_count": call.breaker_failures, "open": call.breaker_open},
        # The provider refused it (prompt too long): no answer; its input is in an earlier history
        # (by index) when dev's recovery rewrote the head since.
        "refused": call.refused,
        "earlier_history": call.earlier_history,
        # Added at call time, never stored; the steer note is counted in request_messages and sent.
        "request_time": {
            "steer_note": call.request_time.steer_note,
            "discovered_tools": list(call.request_time.discovered_tools),
        },
    }


def settings_json(
    inference: SettingsInForce, calls: tuple[RecordedCall, ...], *, rules: RulesProfile = RulesProfile.MAIN
) -> dict[str, Any]:
    """The settings in force, segment by segment, where the record disagrees with the config it was read under,
    and what it assumed where the store keeps no trace."""
    last = inference.segments[-1] if inference.segments else None
    return {
        "context_limit": last.settings.context_limit if last else None,
        "context_limit_source": last.source if last else None,
        "settings_in_force": [
            {
                "first_call": s.first + 1,
                "last_call": s.last + 1,
                "context_limit": s.settings.context_limit,
                "context_limit_source": s.source,
                "keep_recent_tokens": s.settings.effective_keep_recent_tokens,
                "trigger_tokens": trigger_under(rules, s.settings),
                "consistent_limits": [[lo, None if hi >= UNBOUNDED else hi] for lo, hi in s.limits.spans],
                "consistent_limits_text": s.limits.words(),
                "summary_rows": s.rows,
            }
            for s in inference.segments
            if s.first <= s.last
        ],
        "compactions_not_stored": [c.call for c in calls if c.compacted and not c.compaction_stored],
        "recompacts_every_call": rules is RulesProfile.MAIN and recompacts_every_call(calls),
        "disagreements": list(inference.disagreements),
        "assumed": list(inference.assumed),
    }
