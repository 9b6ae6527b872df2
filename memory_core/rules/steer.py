"""How Mycel dev marks the messages its queue puts into a thread's history (OpenDCAI/Mycel dev at
bc8ab002, docs/request-time-changes.md).

Three paths write them, each with its own metadata:
- SteeringMiddleware.before_model (core/runtime/middleware/queue/middleware.py) drains the queue before
  every model call of a running run and stores each item as a HumanMessage whose metadata holds source,
  notification_type, sender_name, sender_avatar_url, sender_id and is_steer (True when source is
  "owner"). It is the only writer of `sender_id` into a message's metadata.
- A steer accepted by a run that is then cancelled is stored as {source: "owner", notification_type:
  "steer", is_steer: True} (backend/threads/run/cancellation.py, persist_cancelled_owner_steers).
- A queued item that wakes an idle thread starts a new run with source, notification_type, sender_name,
  sender_avatar_url and is_steer (backend/threads/run/followups.py, buffer_wiring.py): no sender_id.
"""

from __future__ import annotations

from memory_core.messages import Message, MessageType


def is_owner_steer(message: Message) -> bool:
    """Dev's _is_owner_steer_message: a HumanMessage (not a chunk) whose metadata says is_steer, or says
    source "owner" with notification_type "steer"."""
    if message.type is not MessageType.HUMAN or message.raw_type.lower().endswith("chunk"):
        return False
    meta = message.metadata or {}
    return bool(meta.get("is_steer")) or (
        meta.get("source") == "owner" and meta.get("notification_type") == "steer"
    )


def joined_a_running_run(message: Message) -> bool:
    """A user turn that did not start a run: injected into a running one by SteeringMiddleware, or
    stored when the run that had accepted the steer was cancelled."""
    if message.type is not MessageType.HUMAN:
        return False
    meta = message.metadata or {}
    if "sender_id" in meta:
        return True
    return bool(meta.get("is_steer")) and "sender_name" not in meta
