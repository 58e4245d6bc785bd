"""Benchmarks run by `make bench`; each module exposes `run() -> list[dict]`."""
