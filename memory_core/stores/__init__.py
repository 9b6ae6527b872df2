"""The only code that opens Mycel's files: read-only SQLite, safe blob decoding, redaction at the border.

A map, read side first:
- reader.py        MycelReader, the one read API every screen and command uses; it keeps what it derives in
                   memos (memory_core/memo.py) and reads through one StoreBackend;
- backend.py       the backend protocol: what the reader needs from a storage engine;
- sqlite_backend.py the first backend, over Mycel main's SQLite files, composing the table readers:
                   checkpoints.py, summaries.py, file_ops.py, queue.py, events.py, sandbox.py (opening.py,
                   sqlite.py, schema.py: how a file is opened and checked; decode.py, redact.py: the border);
- thread_list/     the thread list's reads, its SQL and the head facts kept in a file of ours;
- series.py        the per-checkpoint series rebuilt from the write deltas;
- thread_settings.py, runtime_config.py, locations.py: what a thread runs with, from Mycel's config files;
- gc_setup.py      the collector set up once per process, never switched inside a read.

write/ is the write side, audited by the caller: one new checkpoint through LangGraph's own saver
(rollback, undo, summary deactivation) and a runtime.json layer replaced atomically after a backup. Its
reads come through MycelReader like everyone else's; nothing on the read side imports it.
"""
