"""Domain packs: one folder per domain (see mads_bench.catalog)."""
