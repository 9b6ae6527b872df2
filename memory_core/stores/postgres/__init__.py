"""Mycel's checkpoints in PostgreSQL (LEON_POSTGRES_URL), read-only: connect.py (bounded reads over a
pool), layout.py (dev's schema `agent`, main's search_path schema), checkpoints.py (the SQL), backend.py
(the StoreBackend)."""

from __future__ import annotations
