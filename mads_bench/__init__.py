"""MADS-Bench: domains, personas, scenarios and the Pre-Act format for tool-using dialogue agents.

The package holds the benchmark itself (data model, domain packs, scenario generator,
CLI). The simulator lives in ``simulation``, GRPO rewards in ``rewards`` and the
metrics in ``evaluators``.
"""

__version__ = "0.1.0"
