"""Aggregating per-dialogue ATOD scores into a report (JSON-ready dict or markdown).

`score_dialogues(pred, gold)` is the one entry point the CLI, the `evaluate` module and the
benchmarks use. The report holds the overall figures, the same under `by_complexity`, the
progress curve, correlations with dGCR, per-status figures (`per_status`), bootstrap confidence
intervals over dialogues (`confidence_intervals`, with ``bootstrap`` resamples) and the
per-dialogue rows.

Example:
    >>> from mads_bench.atod_data import load_dialogues  # doctest: +SKIP
    >>> gold = load_dialogues("medium_sample.json")  # doctest: +SKIP
    >>> report = score_dialogues(gold, gold, mode="strict")  # doctest: +SKIP
    >>> report["conditional_status_accuracy"], report["dgcr"], report["ntc"]  # doctest: +SKIP
    (1.0, 1.0, 8.0)
"""

from __future__ import annotations

from statistics import mean

from evaluators.atod.bootstrap import bootstrap_intervals, per_status
from evaluators.atod.matching import DEFAULT_THRESHOLD, EmbedFn, GoalMatcher, Mode
from evaluators.atod.tracker_scoring import CORRELATED, PROGRESS_BINS, score_dialogue
from mads_bench.atod_data import Dialogue
from mads_bench.atod_lifecycle import correlation, dgcr, ntc, pooled_goals
from mads_bench.errors import UsageError
from simulation.backends.judge import JudgeBackend

SPLITS = ("medium", "complex")


def _mean(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return mean(values) if values else None


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def _split_summary(rows: list[dict], pred: list[Dialogue], gold: list[Dialogue]) -> dict:
    tp, fp, fn = (sum(r["dependency_tp_fp_fn"][k] for r in rows) for k in range(3))
    progress = []
    for b in range(len(rows[0]["progress"])):
        cells = [r["progress"][b] for r in rows if r["progress"][b] is not None]
        progress.append(
            {
                "bin": b + 1,
                "goal_detection_f1": _mean([c["f1"] for c in cells]),
                "conditional_status_accuracy": _ratio(
                    sum(c["status_correct"] for c in cells), sum(c["status_total"] for c in cells)
                ),
            }
        )
    anchor = [r["dgcr"] for r in rows]
    confusion: dict[str, dict[str, int]] = {}
    for r in rows:
        for g, p in r["status_pairs"]:
            confusion.setdefault(g, {}).setdefault(p, 0)
            confusion[g][p] += 1
    first = [e for r in rows for e in r["first_mentioned_turn_errors"]]
    completion = [e for r in rows for e in r["completion_turn_errors"]]
    return {
        "status_confusion": confusion,
        "first_mentioned_turn_mae": _mean(first),
        "completion_turn_mae": _mean(completion),
        "timing_pairs": {
            "first_mentioned": len(first),
            "completion": len(completion),
            "completion_missed": sum(r["completion_missed"] for r in rows),
            "completion_spurious": sum(r["completion_spurious"] for r in rows),
        },
        "n_dialogues": len(rows),
        "goal_detection_precision": _mean([r["goal_detection_precision"] for r in rows]),
        "goal_detection_recall": _mean([r["goal_detection_recall"] for r in rows]),
        "goal_detection_f1": _mean([r["goal_detection_f1"] for r in rows]),
        "conditional_status_accuracy": _ratio(
            sum(r["status_correct"] for r in rows), sum(r["status_total"] for r in rows)
        ),
        "dependency_precision": _ratio(tp, tp + fp),
        "dependency_recall": _ratio(tp, tp + fn),
        "dependency_f1": _ratio(2 * tp, 2 * tp + fp + fn),
        "dependency_edges": {"tp": tp, "fp": fp, "fn": fn},
        "dgcr": dgcr(pooled_goals(pred)),
        "ntc": ntc(pooled_goals(pred)),
        "gold_dgcr": dgcr(pooled_goals(gold)),
        "gold_ntc": ntc(pooled_goals(gold)),
        "progress": progress,
        "correlations_with_dgcr": {
            name: correlation([r[name] for r in rows], anchor) for name in CORRELATED
        },
    }


def score_dialogues(
    pred: list[Dialogue],
    gold: list[Dialogue],
    *,
    mode: Mode = "release",
    threshold: float = DEFAULT_THRESHOLD,
    embedder: EmbedFn | None = None,
    judge: JudgeBackend | None = None,
    bins: int = PROGRESS_BINS,
    bootstrap: int = 0,
    seed: int = 0,
) -> dict:
    """Score predictions against gold dialogues.

    Args:
        pred (`list[Dialogue]`): Predictions, paired with gold by `dialogue_id`; a gold
            dialogue without a prediction is scored as an empty prediction.
        gold (`list[Dialogue]`): Gold dialogues.
        mode (`str`): `release` (lenient, comparable with the paper) or `strict`.
        threshold (`float`): Cosine threshold of the goal matcher.
        embedder (`EmbedFn`, *optional*): Text embedder (MiniLM when None).
        judge (`JudgeBackend`, *optional*): Vetoes candidate goal matches (`strict` only).
        bins (`int`): Progress bins.
        bootstrap (`int`): Dialogue resamples for `confidence_intervals` (0: none).
        seed (`int`): Seed of the resampling.

    Returns:
        `dict`: Overall figures, `per_status`, `confidence_intervals` (95%, dialogues of all
        splits pooled; empty without ``bootstrap``), `by_complexity`, `per_dialogue`,
        `missing_predictions`.

    Raises:
        `UsageError` (a `ValueError`): When there is no gold dialogue, or a prediction's
            `dialogue_id` is not in the gold file.
    """
    if not gold:
        raise UsageError("no gold dialogues to score")
    by_id = {d.dialogue_id: d for d in pred}
    unknown = sorted(set(by_id) - {d.dialogue_id for d in gold})
    if unknown:
        raise UsageError(
            f"predictions for dialogues not in the gold file ({len(unknown)}): {unknown[:5]}"
        )
    matcher = GoalMatcher(mode=mode, threshold=threshold, embedder=embedder, judge=judge)
    rows, paired, missing = [], [], []
    for g in gold:
        p = by_id.get(g.dialogue_id)
        if p is None:
            missing.append(g.dialogue_id)
            p = g.model_copy(update={"goal_list": []})
        rows.append(score_dialogue(p, g, matcher, bins))
        paired.append(p)
    by_complexity = {}
    for split in SPLITS:
        idx = [i for i, g in enumerate(gold) if g.complexity_class == split]
        if idx:
            by_complexity[split] = _split_summary(
                [rows[i] for i in idx], [paired[i] for i in idx], [gold[i] for i in idx]
            )
    overall = {
        key: _mean([s[key] for s in by_complexity.values()])
        for key in (
            "goal_detection_precision",
            "goal_detection_recall",
            "goal_detection_f1",
            "conditional_status_accuracy",
            "dependency_precision",
            "dependency_recall",
            "dependency_f1",
        )
    }
    everything = _split_summary(rows, paired, gold)
    return {
        "mode": mode,
        "threshold": threshold,
        "n_dialogues": len(gold),
        "missing_predictions": missing,
        **overall,
        **{
            k: everything[k]
            for k in (
                "dgcr",
                "ntc",
                "gold_dgcr",
                "gold_ntc",
                "first_mentioned_turn_mae",
                "completion_turn_mae",
                "timing_pairs",
                "status_confusion",
                "dependency_edges",
            )
        },
        "per_status": per_status(rows),
        "confidence_intervals": bootstrap_intervals(rows, bootstrap, seed) if bootstrap else {},
        "bootstrap": {"resamples": bootstrap, "seed": seed, "level": 0.95},
        "progress": everything["progress"],
        "correlations_with_dgcr": everything["correlations_with_dgcr"],
        "by_complexity": by_complexity,
        "per_dialogue": rows,
    }


def _fmt(value: float | None, percent: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{100 * value:.2f}" if percent else f"{value:.3f}"


def _with_ci(report: dict, key: str) -> str:
    """A percentage with its bootstrap interval when the report has one."""
    ci = report.get("confidence_intervals", {}).get(key)
    value = _fmt(report.get(key), True)
    return f"{value} [{_fmt(ci[0], True)}, {_fmt(ci[1], True)}]" if ci else value


def per_status_table(report: dict) -> list[str]:
    """Markdown lines of the per-status figures (recall with its interval when there is one)."""
    lines = [
        "### Per final status, matched goals (exact statuses)",
        "",
        "| status | gold | predicted | correct | precision | recall | F1 |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    ci = report.get("confidence_intervals", {})
    for status, c in report["per_status"].items():
        interval = ci.get(f"{status}_recall")
        recall = _fmt(c["recall"], True)
        if interval:
            recall += f" [{_fmt(interval[0], True)}, {_fmt(interval[1], True)}]"
        lines.append(
            f"| {status} | {c['gold']} | {c['predicted']} | {c['correct']} | "
            f"{_fmt(c['precision'], True)} | {recall} | {_fmt(c['f1'], True)} |"
        )
    return lines


def confusion_table(confusion: dict[str, dict[str, int]]) -> list[str]:
    """Markdown lines of the final-status confusion matrix (rows gold, columns predicted)."""
    names = sorted({g for g in confusion} | {p for row in confusion.values() for p in row})
    lines = [
        "### Final statuses of matched goals (rows gold, columns predicted)",
        "",
        "| gold / predicted | " + " | ".join(names) + " |",
        "| --- |" + " --- |" * len(names),
    ]
    for g in names:
        row = confusion.get(g, {})
        lines.append(f"| {g} | " + " | ".join(str(row.get(p, 0)) for p in names) + " |")
    return lines


HEADLINE = (
    ("goal_detection_f1", True),
    ("conditional_status_accuracy", True),
    ("dependency_f1", True),
    ("dgcr", False),
    ("ntc", False),
    ("first_mentioned_turn_mae", False),
    ("completion_turn_mae", False),
)


def render_side_by_side(strict: dict, release: dict) -> str:
    """The headline figures of a strict and a release report of the same predictions."""
    lines = [
        f"## ATOD headline: strict vs release ({strict['n_dialogues']} dialogues, threshold "
        f"{strict['threshold']})",
        "",
        "| metric | strict | release |",
        "| --- | --- | --- |",
    ]
    for key, pct in HEADLINE:
        if pct:
            cells = f"{_with_ci(strict, key)} | {_with_ci(release, key)}"
        else:
            cells = f"{_fmt(strict.get(key))} | {_fmt(release.get(key))}"
        lines.append(f"| {key} | {cells} |")
    if strict.get("confidence_intervals"):
        resamples = strict["bootstrap"]["resamples"]
        lines += ["", f"[95% bootstrap intervals over dialogues, {resamples} resamples]"]
    return "\n".join(lines) + "\n"


def render_markdown(report: dict) -> str:
    """The report as markdown tables (F1 and accuracy in %, as in the paper)."""
    cols = [("overall", report), *report["by_complexity"].items()]
    lines = [
        f"## ATOD scores ({report['mode']} mode, threshold {report['threshold']}, "
        f"{report['n_dialogues']} dialogues)",
        "",
        *(
            [
                f"Goal detection F1 {_with_ci(report, 'goal_detection_f1')}, conditional "
                f"status accuracy {_with_ci(report, 'conditional_status_accuracy')} (95% "
                f"bootstrap intervals over dialogues, {report['bootstrap']['resamples']} "
                "resamples).",
                "",
            ]
            if report.get("confidence_intervals")
            else []
        ),
        "| metric | " + " | ".join(name for name, _ in cols) + " |",
        "| --- |" + " --- |" * len(cols),
    ]
    for key, pct in [
        ("goal_detection_precision", True),
        ("goal_detection_recall", True),
        ("goal_detection_f1", True),
        ("conditional_status_accuracy", True),
        ("dependency_precision", True),
        ("dependency_recall", True),
        ("dependency_f1", True),
        ("dgcr", False),
        ("ntc", False),
        ("gold_dgcr", False),
        ("gold_ntc", False),
        ("first_mentioned_turn_mae", False),
        ("completion_turn_mae", False),
    ]:
        lines.append(f"| {key} | " + " | ".join(_fmt(c.get(key), pct) for _, c in cols) + " |")
    timing = report["timing_pairs"]
    lines += [
        "",
        f"Turn errors over matched pairs: {timing['first_mentioned']} first mentions, "
        f"{timing['completion']} completions ({timing['completion_missed']} gold completions "
        f"not predicted, {timing['completion_spurious']} predicted ones gold does not have).",
        "",
        *confusion_table(report["status_confusion"]),
        "",
        *per_status_table(report),
    ]
    lines += ["", "### Along normalised progress (all dialogues)", "", "| bin | F1 | acc |"]
    lines.append("| --- | --- | --- |")
    for cell in report["progress"]:
        lines.append(
            f"| {cell['bin']} | {_fmt(cell['goal_detection_f1'], True)} "
            f"| {_fmt(cell['conditional_status_accuracy'], True)} |"
        )
    lines += ["", "### Correlation with per-dialogue dGCR", "", "| metric | r | rho | n |"]
    lines.append("| --- | --- | --- | --- |")
    for name, c in report["correlations_with_dgcr"].items():
        lines.append(f"| {name} | {_fmt(c['pearson'])} | {_fmt(c['spearman'])} | {c['n']} |")
    if report["missing_predictions"]:
        lines += ["", f"{len(report['missing_predictions'])} gold dialogues had no prediction."]
    return "\n".join(lines) + "\n"
