"""A thread taken elsewhere: a redacted JSON bundle (bundle.py), a Markdown transcript of it (markdown.py),
and the strict reading of a bundle that `plan --bundle` and `dry-run --bundle` plan from (read.py)."""
