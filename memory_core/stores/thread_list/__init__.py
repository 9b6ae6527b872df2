"""The thread list: every thread any store knows, fast over 10,000 threads.

- listing.py     the list's reads (three at once), many heads over one connection, estimates;
- threads.py     its SQL (keys and heads from the primary-key index, aggregates as one JSON text);
- derived.py     head facts kept by (checkpoint count, head id), in memory and in a file of ours;
- thread_facts.py what `mycel-memory thread` derives from one thread's checkpoints, kept likewise.
"""
