"""Helpers shared by the browser, hostile, integration tests and the benchmarks."""
