"""Domain packs, one folder per domain: `domain.yaml`, `tools.yaml`, `seed.json`, `handlers.py`,
`scenarios.yaml` and `tasks.yaml` (the README's "Domain packs" table); found and loaded by
:mod:`mads_bench.catalog`. `mock` is the tiny deterministic shop of the tests."""
