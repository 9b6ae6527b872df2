"""Where the sample data committed under tests/data lives (tests/data/README.md says where each came from), so
a clone anywhere runs every test. Read-only for tests: copy a home to tmp_path before anything opens it with
SQLite (tests/conftest.py fails a run that wrote into tests/data)."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLE_HOME = DATA / "mycel-home"
VECTORS = DATA / "vectors" / "memory_public.json"
DEV_VECTORS = DATA / "vectors" / "memory_dev_public.json"
PG_DEV_SAMPLE = DATA / "mycel-pg-dev"
DEV_EVIDENCE = DATA / "mycel-dev-evidence"
