"""Online task success before and after training: the base model and the demo's policy, live.

Slow (not part of a plain `make bench`; `python -m benchmarks.run online_gain`, or `make
bench-train`). It takes a finished demo (`MADS_BENCH_DEMO_DIR`, default `outputs/demo`: the
base model named in its `train_summary.json` and the trained SFT + GRPO adapter) and plays
`eval online` (`evaluators.online.run.evaluate_online`, scripted user, greedy policy, one trial,
the prompts in `MADS_BENCH_ONLINE_CONTEXT`, default `compact`: the view the demo's dataset
trains on) on two sets of scenarios nobody trained on:

- `MADS_BENCH_ONLINE_SCENARIOS` (default 24) *generated* scenarios of the training domains,
  normal complexity, seed `ONLINE_SEED` (the demo trains on the hand-written scenarios only);
- `MADS_BENCH_HELD_OUT_SCENARIOS` (default 8) generated normal scenarios of the held-out
  domain (home services: no training row comes from it).

For each set: success, partial credit and malformed-step rate before and after, each
difference with a 95% paired bootstrap CI over scenarios, and what the trained policy fails
at, counted from the online report's reasons (a conversation counts once per reason).
Reports land in `OUT/online_gain/{base,trained}/{training_domains,held_out}/`.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

SLOW = True
"""Skipped by a plain `python -m benchmarks.run`; run it by name."""

ONLINE_SEED = 7_301
"""Seed of the generated scenarios: no dataset of the project is built from it."""

FIGURES = ("success", "partial_credit", "malformed_step_rate")


def scenario_sets(training: int, held_out: int) -> dict[str, list]:
    """The two scenario sets: generated normal scenarios of the training / held-out domains."""
    from mads_bench.catalog import default_domain_names, load_domain
    from mads_bench.datasets import DEFAULT_HELD_OUT
    from mads_bench.generator import generate_for_domains

    names = default_domain_names()
    normal = {"normal": 1.0}
    train = [load_domain(n) for n in names if n not in DEFAULT_HELD_OUT]
    test = [load_domain(n) for n in names if n in DEFAULT_HELD_OUT]
    return {
        "training_domains": generate_for_domains(train, training, ONLINE_SEED, normal),
        "held_out": generate_for_domains(test, held_out, ONLINE_SEED, normal),
    }


def per_scenario(report: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Each scenario's figures (means over its trials) from an `eval online` report."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in report["conversations"]:
        grouped.setdefault(row["scenario_id"], []).append(row)
    out = {}
    for scenario, rows in grouped.items():
        steps = sum(r["steps"] for r in rows)
        credit = [r["partial_credit"] for r in rows if r["partial_credit"] is not None]
        out[scenario] = {
            "success": sum(bool(r["success"]) for r in rows) / len(rows),
            "partial_credit": sum(credit) / len(credit) if credit else 0.0,
            "malformed_step_rate": sum(r["malformed_steps"] for r in rows) / steps
            if steps
            else 0.0,
        }
    return out


def paired(before: dict[str, dict], after: dict[str, dict], figure: str) -> dict[str, Any]:
    """after − before of one figure, 95% paired bootstrap CI over the shared scenarios."""
    from evaluators.bootstrap import paired_bootstrap

    shared = sorted(set(before) & set(after))
    units = [([before[s][figure]], [after[s][figure]]) for s in shared]
    return paired_bootstrap(units, lambda xs: sum(xs) / len(xs)).to_dict()


def reason_kind(reason: str) -> str:
    """A task-success reason without its particulars: ``not_ended (max_turns)``,
    ``not_told``, ``final state``, ...

    Example:
        >>> reason_kind("conversation: not_ended: the run ended with 'max_turns', not 'done'")
        'not_ended (max_turns)'
        >>> reason_kind("final state: bookings.B7: status is 'open', expected 'cancelled'")
        'final state'
    """
    parts = [part.strip() for part in reason.split(":")]
    if parts[0] != "conversation" or len(parts) < 2:
        return parts[0]
    if parts[1] == "not_ended" and "'" in reason:
        return f"not_ended ({reason.split(chr(39))[1]})"
    return parts[1]


def failure_reasons(report: dict[str, Any]) -> dict[str, int]:
    """How many failed conversations give each kind of reason (`reason_kind`; once each)."""
    counts: Counter[str] = Counter()
    for row in report["conversations"]:
        if not row["success"]:
            counts.update({reason_kind(reason) for reason in row["reasons"]})
    return dict(counts.most_common())


def run() -> list[dict]:
    from evaluators.online.run import evaluate_online
    from simulation.backends import get_backend
    from simulation.parallel import SimulationSettings

    started = time.perf_counter()
    demo = Path(os.environ.get("MADS_BENCH_DEMO_DIR", "outputs/demo"))
    summary = demo / "train_summary.json"
    if not summary.is_file():
        raise SystemExit(f"{summary}: no finished demo training; run `make demo` first")
    training = json.loads(summary.read_text())
    policies = {"base": training["model"], "trained": training["grpo"]["output_dir"]}
    sets = scenario_sets(
        int(os.environ.get("MADS_BENCH_ONLINE_SCENARIOS", "24")),
        int(os.environ.get("MADS_BENCH_HELD_OUT_SCENARIOS", "8")),
    )
    context = os.environ.get("MADS_BENCH_ONLINE_CONTEXT", "compact")
    out = demo / "online_gain"
    reports: dict[tuple[str, str], dict] = {}
    for policy, path in policies.items():
        spec = f"transformers:{path}"
        backend = get_backend(spec)  # one loaded model for both scenario sets
        for name, scenarios in sets.items():
            reports[policy, name] = evaluate_online(
                scenarios,
                out / policy / name,
                settings=SimulationSettings(seed=ONLINE_SEED, assistant=spec, context=context),
                backends={spec: backend},
                concurrency=8,
                resume=True,
                progress=False,
            )
    minutes = (time.perf_counter() - started) / 60
    rows, result = [], {"policies": policies, "minutes": minutes, "sets": {}}
    for name in sets:
        before, after = (per_scenario(reports[p, name]) for p in ("base", "trained"))
        figures = {f: paired(before, after, f) for f in FIGURES}
        reasons = failure_reasons(reports["trained", name])
        result["sets"][name] = {"figures": figures, "trained_failures": reasons}
        for figure, f in figures.items():
            rows.append({
                "measure": f"online {figure}, {name}: trained - base",
                "value": f["delta"], "unit": "",
                "note": f"{f['before']} -> {f['after']}, 95% CI [{f['ci_low']}, {f['ci_high']}] "
                        f"over {len(before)} unseen scenarios (seed {ONLINE_SEED})",
            })  # fmt: skip
        rows.append({
            "measure": f"online {name}: what the trained policy fails at (conversations)",
            "value": sum(1 for r in reports["trained", name]["conversations"] if not r["success"]),
            "unit": "failed", "note": "; ".join(f"{k}: {v}" for k, v in reasons.items()),
        })  # fmt: skip
    (out / "result.json").write_text(json.dumps(result, indent=2))
    rows.append({
        "measure": "online_gain wall time", "value": round(minutes, 1), "unit": "min",
        "note": f"{sum(map(len, sets.values()))} scenarios x 2 policies, concurrency 8",
    })  # fmt: skip
    return rows
