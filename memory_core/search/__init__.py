"""Full-text search over every thread: documents from messages, the query parser, the one search function."""
