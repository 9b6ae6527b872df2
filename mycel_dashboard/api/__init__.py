"""The read-only JSON API under /api/ (issue 16)."""
