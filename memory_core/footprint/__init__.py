"""The fleet's footprint: bytes on disk, their growth, a retention dry-run, and cost.

facts.py     what the stores measured (per checkpoint, per file or schema), engine-neutral
growth.py    a thread's growth per turn, the quadratic pattern fitted, the size after N more turns
report.py    the Storage screen's and `mycel-memory storage`'s one report over the fleet
retention.py a named policy's plan: what each thread keeps (and why) and what it would free
script.py    the plan as a SQL script the operator runs with Mycel stopped (SQLite and PostgreSQL)
cost.py      provider usage x Mycel's pricing cache, per thread, model and day

Everything here is pure: the stores (memory_core/stores/) read, this package computes. The dashboard
never deletes Mycel's history; a retention plan leaves as a script, recorded in the audit log.
"""
