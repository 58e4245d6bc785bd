"""The metrics: scoring cores as plain functions, each wrapped as an `evaluate` module with a card.

| subpackage / module | holds |
| --- | --- |
| `step_scoring`, `report`, `step_predictions` | step scoring (L-1, L-2, rewards); predictions |
| `predict` | a model's next step over a dataset split (as the simulator's assistant) |
| `l1`, `l2` | turn-level (MADS §3.5.1) and trajectory-level (§3.5.2) metrics |
| `online` | live conversations graded by the rubric: success, pass^k, cheating assistants |
| `sage` | SAGE state-grounded turn verdicts, the SGD benchmark, the validator's SAGE stage |
| `atod` | ATOD goal tracking and lifecycle metrics |
| `bootstrap` | every bootstrap CI: resampling, percentile interval, paired difference |
| `metric_info` | the `evaluate` metric-info block every metric module shares |
| `realism` | how human-like simulated user turns read (the realism figures) |
"""
