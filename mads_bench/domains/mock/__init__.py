"""Tiny deterministic shop used by the test suite."""
