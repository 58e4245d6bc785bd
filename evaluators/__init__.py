"""The metrics: scoring cores as plain functions, each wrapped as an `evaluate` module with a card.

| subpackage / module | holds |
| --- | --- |
| `scoring`, `report`, `step_predictions` | step scoring (L-1, L-2, rewards); predictions files |
| `l1`, `l2` | turn-level (MADS §3.5.1) and trajectory-level (§3.5.2) metrics |
| `similarity` | sentence-embedding similarity (all-mpnet-base-v2 by default) |
| `sage` | SAGE state-grounded turn verdicts and the SGD benchmark |
| `atod` | ATOD goal tracking and lifecycle metrics |
"""
