"""The only code that opens Mycel's files: read-only SQLite, safe blob decoding, redaction at the border."""
