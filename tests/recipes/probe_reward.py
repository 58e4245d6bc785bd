"""A zero reward that records what conversation-mode rewards receive (for the recipe test).

Listed by dotted path in a test's ``reward_funcs``; writes one JSON line per completion to
``$MADS_PROBE_FILE``: the ``outcome`` summary, the trajectory JSON and the completion ids.
"""

from __future__ import annotations

import json
import os
from typing import Any


def record_rollouts(completions: list[Any], **kwargs: Any) -> list[float]:
    with open(os.environ["MADS_PROBE_FILE"], "a", encoding="utf-8") as probe:
        for index in range(len(completions)):
            row = {
                "outcome": kwargs["outcome"][index],
                "trajectory": kwargs["trajectory"][index],
                "completion_ids": list(kwargs["completion_ids"][index]),
                "completion": completions[index],
            }
            probe.write(json.dumps(row) + "\n")
    return [0.0] * len(completions)


record_rollouts.rollout = "conversation"
