"""The only code that opens Mycel's files: read-only SQLite, safe blob decoding, redaction at the border.

A map, read side first (nothing here writes):
- reader.py        MycelReader, the one read API every screen and command uses; it keeps what it derives in
                   memos (memory_core/memo.py) and reads through one StoreBackend;
- backend.py       the backend protocol: what the reader needs from a storage engine;
- sqlite_backend.py the first backend, over Mycel main's SQLite files, composing the table readers:
                   checkpoints.py, summaries.py, file_ops.py, queue.py, events.py, sandbox.py (opening.py,
                   sqlite.py, schema.py: how a file is opened and checked; decode.py, redact.py: the border);
- the thread list: listing.py (its reads, side by side) + threads.py (its SQL) + derived.py (head facts kept
                   in memory and in a file of ours); series.py: the per-checkpoint series from write deltas;
- gc_setup.py      the collector set up once per process, never switched inside a read.

The write side, audited by the caller, is only: rollback_writer.apply_checkpoint_copy (one new checkpoint
through LangGraph's own saver), rollback_actions.apply_rollback (rollback, undo, summary deactivation) and
runtime_config.save_layer / restore_version (atomic replace with a backup). Their reads come through
MycelReader like everyone else's; nothing on the read side imports them.
"""
