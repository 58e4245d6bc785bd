"""The status model: a multinomial logistic regression over `status_features.FEATURES`.

For a goal that is still open or pending it gives, at each turn, the probability that the goal
stays undecided (`stay`) or becomes `completed`, `failed` or `abandoned` on that turn; the
tracker takes the class with the highest logit after adding `stay_margin` to the `stay` logit
(a decision threshold: the per-turn labels are mostly `stay`, and a decided status that comes a
turn late costs less than one that never comes; the margin is fitted too). Its weights are a
small JSON file shipped beside this module (`status_model.json`), written by `mads-bench atod
fit` from the fit part of the development split (`status_fitting.py`); nothing is fitted at
import time. Fitting is L-BFGS on the L2-penalised log-loss (scipy), deterministic for given
data.

Example:
    >>> import numpy as np
    >>> x = np.array([[1.0, 0.0], [1.0, 1.0]] * 20)
    >>> y = np.array([0, 1] * 20)
    >>> model = fit_logistic(x, y, ("bias", "done"), ("stay", "completed"), l2=0.1)
    >>> model.decide(np.array([1.0, 1.0])), model.decide(np.array([1.0, 0.0]))
    ('completed', 'stay')
    >>> model.with_margin(-10.0).decide(np.array([1.0, 0.0]))
    'completed'
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from mads_bench.loading import CatalogError

MODEL_FILE = Path(__file__).with_name("status_model.json")
CLASSES = ("stay", "completed", "failed", "abandoned")


@dataclass(frozen=True)
class StatusModel:
    """Weights (`classes` x `features`) of a fitted status model and how they were fitted."""

    features: tuple[str, ...]
    classes: tuple[str, ...]
    weights: np.ndarray
    fitted: dict
    stay_margin: float = 0.0

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """Class probabilities of feature rows ``x`` (one row or a matrix)."""
        logits = np.atleast_2d(x) @ self.weights.T
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=1, keepdims=True)

    def decide(self, x: np.ndarray) -> str:
        """The class of one feature row: the highest logit, `stay_margin` added to `stay`."""
        logits = self.weights @ x
        logits[0] += self.stay_margin
        return self.classes[int(np.argmax(logits))]

    def with_margin(self, stay_margin: float, **fitted) -> StatusModel:
        """The same weights with another decision margin (recorded in `fitted`)."""
        return replace(self, stay_margin=stay_margin, fitted={**self.fitted, **fitted})

    def to_json(self) -> dict:
        return {
            "about": "Status model of the ATOD tracker (evaluators/atod/status_model.py).",
            "fitted": self.fitted,
            "classes": list(self.classes),
            "stay_margin": self.stay_margin,
            "features": list(self.features),
            "weights": [[round(float(w), 6) for w in row] for row in self.weights],
        }

    def save(self, path: Path | str) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")


def load_status_model(path: Path | str = MODEL_FILE, features: tuple[str, ...] = ()) -> StatusModel:
    """Read a model file; with ``features``, refuse one fitted on other features.

    Raises:
        `CatalogError`: Unreadable file, missing keys, a weight matrix of the wrong shape, or
            features other than the tracker computes (refit with `mads-bench atod fit`).
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        model = StatusModel(
            tuple(data["features"]),
            tuple(data["classes"]),
            np.asarray(data["weights"], dtype=np.float32),
            dict(data.get("fitted", {})),
            float(data.get("stay_margin", 0.0)),
        )
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise CatalogError(path, "", f"not a status model file ({err})") from None
    if model.classes[:1] != ("stay",) or model.weights.shape != (
        len(model.classes),
        len(model.features),
    ):
        raise CatalogError(
            path, "weights", f"{model.weights.shape} weights for classes {model.classes}"
        )
    if features and model.features != tuple(features):
        raise CatalogError(
            path, "features", "fitted on other features; refit with `mads-bench atod fit`"
        )
    return model


def fit_logistic(
    x: np.ndarray,
    y: np.ndarray,
    features: tuple[str, ...],
    classes: tuple[str, ...] = CLASSES,
    l2: float = 1.0,
    fitted: dict | None = None,
) -> StatusModel:
    """Fit a multinomial logistic regression (the bias is a feature and is penalised too).

    Args:
        x (`np.ndarray`): `(n, features)` rows.
        y (`np.ndarray`): Class index per row.
        features (`tuple[str, ...]`): Feature names (columns of ``x``).
        classes (`tuple[str, ...]`): Class names (values of ``y``).
        l2 (`float`): Penalty on the squared weights, relative to the mean log-loss per row.
        fitted (`dict`, *optional*): What to record about the fit.

    Returns:
        `StatusModel`: The fitted model.
    """
    from scipy.optimize import minimize

    x = np.asarray(x, dtype=np.float64)
    n, k = len(x), len(classes)
    onehot = np.eye(k)[y]

    def loss(flat: np.ndarray) -> tuple[float, np.ndarray]:
        w = flat.reshape(k, -1)
        logits = x @ w.T
        logits -= logits.max(axis=1, keepdims=True)
        log_p = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
        value = -(onehot * log_p).sum() / n + l2 * (w**2).sum() / n
        grad = (np.exp(log_p) - onehot).T @ x / n + 2 * l2 * w / n
        return value, grad.ravel()

    result = minimize(loss, np.zeros(k * x.shape[1]), jac=True, method="L-BFGS-B")
    weights = result.x.reshape(k, -1).astype(np.float32)
    return StatusModel(tuple(features), tuple(classes), weights, dict(fitted or {}, l2=l2))
