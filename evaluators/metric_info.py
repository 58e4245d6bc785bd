"""The `evaluate` metric-info block of our metric modules, written once.

Every `evaluate` module of the project (L-1, L-2, SAGE, online, ATOD) describes itself the same
way: its `_DESCRIPTION`, `_CITATION` and `_KWARGS_DESCRIPTION`, string predictions, and string
references (or, for L-1 and L-2, a record of named string fields), optionally the paper's URL.
The modules wrap the installed library (their scoring is in plain functions beside them), so
they import this helper like the rest of it.

Example:
    >>> info = metric_info("d", "c", "k", reference_fields=("action_type", "say"))
    >>> sorted(info.features["references"])
    ['action_type', 'say']
"""

from __future__ import annotations

from collections.abc import Sequence

import datasets
import evaluate

__all__ = ["metric_info"]


def metric_info(
    description: str,
    citation: str,
    inputs_description: str,
    *,
    reference_fields: Sequence[str] | None = None,
    reference_urls: Sequence[str] | None = None,
) -> evaluate.MetricInfo:
    """The `MetricInfo` of one of our metric modules.

    Args:
        description (`str`), citation (`str`), inputs_description (`str`): The module's
            `_DESCRIPTION`, `_CITATION` and `_KWARGS_DESCRIPTION`.
        reference_fields (`Sequence[str]`, *optional*): Names of the string fields of a
            reference record; None: a reference is one string (a JSON document).
        reference_urls (`Sequence[str]`, *optional*): The paper's URL(s).

    Returns:
        `evaluate.MetricInfo`: String predictions, references as described.
    """
    references = (
        datasets.Value("string")
        if reference_fields is None
        else {name: datasets.Value("string") for name in reference_fields}
    )
    extra = {} if reference_urls is None else {"reference_urls": list(reference_urls)}
    return evaluate.MetricInfo(
        description=description,
        citation=citation,
        inputs_description=inputs_description,
        features=datasets.Features(
            {"predictions": datasets.Value("string"), "references": references}
        ),
        **extra,
    )
