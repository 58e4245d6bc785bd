"""The τ²-bench retail tools: ``tools.yaml`` (specs) and :mod:`.handlers` (their code)."""
