"""Tools of the τ²-bench domains, written for mads-bench (``simulation.importers.tau2`` builds
the packs that use them from τ²-bench's own data, read at run time)."""
