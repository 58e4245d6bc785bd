"""Does GRPO improve on SFT on held-out data? SFT adapter alone vs SFT adapter + GRPO.

Slow (not part of a plain `make bench`; run `python -m benchmarks.run grpo_gain`). It takes the
demo's outputs (`MADS_BENCH_DEMO_DIR`, default `outputs/demo`: its dataset and SFT adapter,
from a finished `make demo`), runs `recipes/grpo.py` with `GAIN_GRPO_CONFIG` (8 completions
per prompt, a curriculum probe of the SFT policy first, the tool name rewarded; its comments say
why) for `MADS_BENCH_GRPO_STEPS` steps (default 15, four groups each) from that SFT adapter
(`MADS_BENCH_GRPO_SEED` overrides the config's seed; a comma-separated list, e.g. `0,1,2`,
trains one policy per seed, reports each and their pooled gain, every figure over all the
seeds' predictions of each step (`pool`): one 15-step run's held-out
gain moved from -0.06 to +0.10 with its seed alone, recipes/README.md),
and predicts held-out evaluation steps with both policies, every domain, the held-out
home-services domain included. The held-out conversations come in two splits of one seeded
order (`MADS_BENCH_EVAL_SPLIT`): ``selection``, conversations 1-16, where every setting of
the config was chosen (recipes/README.md, E1-E22), and ``report`` (the default), conversations
17-48, where nothing was chosen: sweep on the first, report the second.
`MADS_BENCH_EVAL_CONVERSATIONS` overrides the split's size. A seed whose run finished
(`result_<run>.json` newer than the config and the SFT adapter, `finished_run`) is not trained
again: a stopped run of several seeds continues, and its finished seeds can be pooled alone.
`MADS_BENCH_GRPO_ARGS` adds recipe flags over the config for a sweep (e.g. `--beta 0.0`);
they name the run's folder (`grpo_15_seed0_beta0.0`) and its result file, so sweep points do
not overwrite each other.
`MADS_BENCH_EVAL_SAMPLES=k` (default 0) also scores both policies on k samples per held-out
step at the config's temperature (`SAMPLED_TEMPERATURE`, what GRPO trains on), each figure
over all k samples of a step: the gain of the sampled policy, which greedy decoding of a
135M model shows only through the steps whose argmax flips.
`MADS_BENCH_PLACEBOS=k` (default 0) is the control: k copies of the SFT adapter moved by a
random update of the GRPO run's size (each LoRA tensor by a random direction as long as its
GRPO update, `placebo_adapter`), each predicting the same held-out steps; reported are each
placebo's gain over SFT and GRPO's gain over the placebos' mean, per step: what GRPO's update
does beyond moving the weights that far. (A random update of that size changes a third of the
greedy held-out actions of the demo's SFT adapter; recipes/README.md, E19.)
Reported, each with a 95% paired bootstrap CI of the difference over conversations: the
mean total reward on held-out steps (MADS §4.3: action type + tool call + semantic, with
MiniLM as in training), tool-name F1, parameter exact match, L-2 and the L-1 headline
figures. Also: the GRPO run's reward curve on training prompts, the share of groups with zero
reward spread, what the curriculum probe found, and the wall time of the whole benchmark (the
budget it is meant to fit: 30 minutes on 2 cores).
Every policy predicts in float32 (`mads_bench.demo.EVAL_DTYPE`: in bf16 rounding alone flips
a third of the greedy steps of nearby adapters, recipes/README.md E23), and with the tool
names constrained to the prompt's tools when the GRPO run sampled so (`constrain_tool_names`,
E22); the predictions files are named by both, so files of other settings are never continued.
Every GRPO, placebo and sampled prediction is drafted by the SFT adapter's prediction of the
same step (`evaluators.predict.predict_steps(drafts=...)`): the same predictions, faster where
the policy still writes what SFT wrote.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import time
from functools import cache
from pathlib import Path

from mads_bench.demo import EVAL_DTYPE, Evaluation
from mads_bench.manifest import manifest_path
from mads_bench.training.pipeline import in_repo, run_recipe

GAIN_GRPO_CONFIG = "recipes/smollm2-135m/grpo/config_gain.yaml"

MAX_NEW_TOKENS = 192
"""Generation budget of every held-out prediction, greedy or sampled."""

SAMPLED_TEMPERATURE = 0.7
"""`MADS_BENCH_EVAL_SAMPLES` samples at the temperature `config_gain.yaml` trains at."""

SPLITS = {"selection": (0, 16), "report": (16, 32)}
"""`MADS_BENCH_EVAL_SPLIT` -> (conversations skipped, conversations taken) in `eval_rows`' order."""

SLOW = True
"""Skipped by a plain `python -m benchmarks.run`; run it by name."""

FIGURES = (
    "mean_total_reward",
    "tool_name_f1",
    "param_exact_match",
    "l2_success_rate",
    "format_validity",
    "action_recall_macro",
)


@cache
def _total_reward():
    """MADS §4.3 total reward (its MiniLM encoder loaded once for every predictions file)."""
    from rewards.total import make_mads_total_reward

    return make_mads_total_reward()


def total_rewards(predictions: Path) -> dict[tuple, float]:
    """MADS §4.3 total reward of each scored prediction, keyed by (conversation, turn, step)."""
    from evaluators.step_predictions import read_rows

    reward = _total_reward()
    scored = read_rows(predictions)
    gold = {k: [r[k] for r in scored] for k in
            ("gold_action_type", "gold_tool_name", "gold_tool_arguments", "gold_say")}  # fmt: skip
    values = reward([r["prediction"] for r in scored], **gold)
    keys = [(r["conversation_id"], r["turn_index"], r["step_index"]) for r in scored]
    return dict(zip(keys, values, strict=True))


def step_means(rewards: list[dict[tuple, float]]) -> dict[tuple, float]:
    """Each step's reward averaged over several policies' (or samples') rewards (None counts 0).

    Example:
        >>> step_means([{("a", 0, 0): 1.0}, {("a", 0, 0): None}])
        {('a', 0, 0): 0.5}
    """
    return {key: sum(r[key] or 0.0 for r in rewards) / len(rewards) for key in rewards[0]}


def reward_gain(before: dict[tuple, float], *afters: dict[tuple, float], seed: int = 0) -> dict:
    """Paired bootstrap (by conversation) of the mean total reward, after - before.

    With several `afters` (policies trained with different seeds), each step's after-reward
    is their mean: the expected gain of the training procedure, not of one run of it.

    Example:
        >>> before = {("a", 0, 0): 0.0, ("b", 0, 0): 1.0}
        >>> one, other = {("a", 0, 0): 1.0, ("b", 0, 0): 1.0}, {("a", 0, 0): 0.0, ("b", 0, 0): 1.0}
        >>> reward_gain(before, one)["delta"], reward_gain(before, one, other)["delta"]
        (0.5, 0.25)
    """
    from evaluators.bootstrap import paired_bootstrap

    if not afters:
        raise ValueError("reward_gain: no policy to compare with")
    after = step_means(list(afters))
    units: dict[str, tuple[list, list]] = {}
    for key, value in before.items():
        first, second = units.setdefault(key[0], ([], []))
        first.append(value or 0.0)
        second.append(after[key])
    mean = lambda xs: sum(xs) / len(xs) if xs else None  # noqa: E731
    return paired_bootstrap([units[c] for c in sorted(units)], mean, seed=seed).to_dict()


def _seeds(value: str | None) -> list[int | None]:
    """`MADS_BENCH_GRPO_SEED`: unset (the config's seed) or comma-separated integers."""
    if value is None:
        return [None]
    parts = [part.strip() for part in value.split(",")]
    if not all(part.isdigit() for part in parts) or len(set(parts)) < len(parts):
        raise SystemExit(
            f"MADS_BENCH_GRPO_SEED={value!r}: expected distinct non-negative integers, "
            "comma-separated (e.g. 0,1,2)"
        )
    return [int(part) for part in parts]


def _overrides(value: str | None) -> tuple[list[str], str]:
    """`MADS_BENCH_GRPO_ARGS` -> (recipe flags, the run-name suffix they give).

    Example:
        >>> _overrides("--beta 0.04 --learning_rate 5e-5")
        (['--beta', '0.04', '--learning_rate', '5e-5'], '_beta0.04_learning_rate5e-5')
        >>> _overrides("--reward_weights 1 1 1 2 0 0")[1]
        '_reward_weights1-1-1-2-0-0'
        >>> _overrides(None)
        ([], '')
    """
    if not value or not value.strip():
        return [], ""
    try:
        args = shlex.split(value)
    except ValueError as error:
        raise SystemExit(f"MADS_BENCH_GRPO_ARGS={value!r}: {error}") from None
    if not args[0].startswith("--"):
        raise SystemExit(
            f"MADS_BENCH_GRPO_ARGS={value!r}: expected recipe flags, e.g. '--beta 0.04'"
        )
    parts: list[list[str]] = []
    for arg in args:
        if arg.startswith("--"):
            parts.append([arg[2:], ""])
        else:
            parts[-1][1] += f"-{arg}" if parts[-1][1] else arg
    suffix = re.sub(r"[^A-Za-z0-9._-]", "", "_".join(flag + values for flag, values in parts))
    return args, "_" + suffix


def _count(name: str, value: str | None) -> int:
    """`MADS_BENCH_EVAL_SAMPLES` or `MADS_BENCH_PLACEBOS`: unset (0) or a non-negative integer."""
    if value is None:
        return 0
    if not value.strip().isdigit():
        raise SystemExit(f"{name}={value!r}: expected a non-negative integer")
    return int(value)


def placebo_adapter(sft: Path, trained: Path, out: Path, seed: int) -> Path:
    """A copy of the SFT adapter folder `sft` in `out`, each LoRA tensor moved by a random
    direction (standard normal, `seed`) scaled to the length of its update in `trained`.

    The trained adapter must hold the same tensors as the SFT one (GRPO continues it).
    """
    import shutil

    import torch
    from safetensors.torch import load_file, save_file

    weights = "adapter_model.safetensors"
    before, after = load_file(sft / weights), load_file(trained / weights)
    if before.keys() != after.keys():
        raise SystemExit(f"{trained / weights}: not the same LoRA tensors as {sft / weights}")
    generator = torch.Generator().manual_seed(seed)
    moved = {}
    for name in sorted(before):
        start = before[name].float()
        direction = torch.randn(start.shape, generator=generator)
        length = (after[name].float() - start).norm()
        moved[name] = (start + direction * (length / direction.norm())).to(before[name].dtype)
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(sft, out)
    save_file(moved, out / weights, metadata={"format": "pt"})
    return out


def predict(
    model: str | Path,
    rows: list[dict],
    predictions: Path,
    constrained: bool,
    drafts: Path | None = None,
    **sampling,
) -> Evaluation:
    """`evaluate_model` as the benchmark evaluates every policy: `MAX_NEW_TOKENS`, `EVAL_DTYPE`,
    and tool names constrained (`constrained`) when the GRPO run sampled so. `drafts`: the SFT
    adapter's predictions of the same rows and settings, which a policy trained from it mostly
    repeats (`evaluators.predict.predict_steps`: faster, the same predictions)."""
    from mads_bench.demo import evaluate_model

    return evaluate_model(
        str(model), rows, predictions, MAX_NEW_TOKENS, constrain_tool_names=constrained,
        dtype=EVAL_DTYPE, drafts=drafts, **sampling,
    )  # fmt: skip


def _sample_file(stem: Path, sample: int) -> Path:
    return stem.with_name(f"{stem.name}_T{SAMPLED_TEMPERATURE}_s{sample}.jsonl")


def sampled_evaluation(
    model: str,
    rows: list[dict],
    stem: Path,
    samples: int,
    constrained: bool = False,
    drafts: Path | None = None,
) -> tuple[Evaluation, dict[tuple, float]]:
    """`samples` sampled predictions of every row (files `<stem>_T<t>_s<i>.jsonl`, seeds
    0..k-1): one Evaluation whose steps are (conversation, turn, step, sample) and each
    step's total reward averaged over its samples. `constrained`: tool steps only name
    tools their prompt lists (as the GRPO run sampled). `drafts`: the stem of the SFT
    adapter's samples, each sample drafted by the SFT's of the same seed."""
    evaluations, rewards = [], []
    for sample in range(samples):
        predictions = _sample_file(stem, sample)
        evaluations.append(
            predict(
                model,
                rows,
                predictions,
                constrained,
                drafts=None if drafts is None else _sample_file(drafts, sample),
                temperature=SAMPLED_TEMPERATURE,
                seed=sample,
            )  # fmt: skip
        )
        rewards.append(total_rewards(predictions))
    return pool(evaluations), step_means(rewards)


def pool(evaluations: list[Evaluation]) -> Evaluation:
    """Several predictions of the same steps (samples, or policies of several seeds) as one
    Evaluation: every step kept, keyed (conversation, turn, step, i), and each conversation's
    L-2 score their mean. Compared with `pool([before] * k)`, a conversation's figures are then
    taken over all k predictions of its steps, so the bootstrap still resamples conversations.

    Example:
        >>> one = Evaluation(l1={}, l2={}, steps={("a", 0, 0): 1}, conversations={"a": 1.0})
        >>> other = Evaluation(l1={}, l2={}, steps={("a", 0, 0): 0}, conversations={"a": 0.0})
        >>> pooled = pool([one, other])
        >>> pooled.steps, pooled.conversations
        ({('a', 0, 0, 0): 1, ('a', 0, 0, 1): 0}, {'a': 0.5})
    """
    steps = {(*key, i): score for i, e in enumerate(evaluations) for key, score in e.steps.items()}
    conversations = {
        c: sum(e.conversations[c] for e in evaluations) / len(evaluations)
        for c in evaluations[0].conversations
    }
    return Evaluation(l1={}, l2={}, steps=steps, conversations=conversations)


def _gain(before: Evaluation, before_rewards: dict, after: Evaluation, after_rewards: dict) -> dict:
    """Every figure of the benchmark, after - before, each with its paired bootstrap CI."""
    from mads_bench.demo import compare

    return {"mean_total_reward": reward_gain(before_rewards, after_rewards)} | compare(
        before, after
    )


def finished_run(result: Path, steps: int, overrides: list[str], inputs: list[Path]) -> dict | None:
    """The GRPO summary of an earlier run of this benchmark to reuse, or None to train again.

    Reused when `result` (the run's `result_<run>.json`) records the same step count and
    recipe flags, its adapter is still there, and it is newer than every file in `inputs`
    (the config and the SFT adapter's weights): an edited config or a new SFT adapter trains
    again. So a run of several seeds that was stopped continues with the seeds it had not
    finished, and a shorter list of seeds pools the finished ones without training.

    Example:
        >>> finished_run(Path("/nonexistent/result_15.json"), 15, [], []) is None
        True
    """
    from mads_bench.adapters import is_adapter_folder

    if not result.is_file():
        return None
    try:
        recorded = json.loads(result.read_text())
        grpo = recorded["grpo"]
        same = grpo["steps"] == steps and recorded["overrides"] == overrides
    except (ValueError, KeyError, TypeError):
        return None  # an older or damaged result file: train again
    newer = all(result.stat().st_mtime > path.stat().st_mtime for path in inputs)
    return grpo if same and newer and is_adapter_folder(grpo["output_dir"]) else None


def _greedy(stem: Path) -> Path:
    """The greedy predictions file of `stem` (sampled ones add `_T<t>_s<i>`)."""
    return stem.with_name(f"{stem.name}.jsonl")


def _clear_predictions(stem: Path) -> Path:
    """Remove an earlier run's predictions of `stem` (greedy, its manifest, and sampled): a
    new adapter every run. Returns the greedy predictions' path."""
    greedy = _greedy(stem)
    for stale in (greedy, manifest_path(greedy), *stem.parent.glob(f"{stem.name}_T*")):
        stale.unlink(missing_ok=True)
    return greedy


def constrains_tool_names(overrides: list[str], config: str = GAIN_GRPO_CONFIG) -> bool:
    """Whether the GRPO run samples with `constrain_tool_names` (the config's value, or the
    last `--constrain_tool_names` flag of the overrides): every policy is then evaluated
    with the same decoding.

    Example:
        >>> constrains_tool_names(["--constrain_tool_names", "true"], config="/dev/null")
        True
        >>> constrains_tool_names(["--beta", "0.04"], config="/dev/null")
        False
    """
    import yaml

    value = (yaml.safe_load(Path(config).read_text()) or {}).get("constrain_tool_names", False)
    for flag, setting in zip(overrides, [*overrides[1:], "true"], strict=False):
        if flag == "--constrain_tool_names":
            value = setting if not setting.startswith("--") else "true"
    return str(value).lower() in ("true", "1", "yes")


def _split(name: str, conversations: str | None) -> tuple[int, int]:
    """`MADS_BENCH_EVAL_SPLIT` and `MADS_BENCH_EVAL_CONVERSATIONS` -> (skip, take)."""
    if name not in SPLITS:
        raise SystemExit(f"MADS_BENCH_EVAL_SPLIT={name!r}: expected one of {', '.join(SPLITS)}")
    skip, take = SPLITS[name]
    if conversations is not None:
        if not conversations.isdigit() or int(conversations) < 1:
            raise SystemExit(
                f"MADS_BENCH_EVAL_CONVERSATIONS={conversations!r}: expected a positive integer"
            )
        take = int(conversations)
    return skip, take


def _gain_rows(figures: dict, note: str, compared: str) -> list[dict]:
    return [
        {
            "measure": f"held-out {key}: {compared}",
            "value": figures[key]["delta"],
            "unit": "",
            "note": f"{figures[key]['before']} -> {figures[key]['after']}, 95% CI "
            f"[{figures[key]['ci_low']}, {figures[key]['ci_high']}]; {note}",
        }
        for key in FIGURES
        if key in figures
    ]


def _placebo_rows(
    adapters: tuple[Path, Path], folder: Path, rows: list[dict], rewards: tuple[dict, dict],
    placebos: int, note: str, label: str, constrained: bool = False, drafts: Path | None = None,
) -> list[dict]:  # fmt: skip
    """`placebos` random updates of the GRPO run's size (`adapters`: SFT, GRPO), each predicting
    `rows` into `folder` (drafted by SFT's predictions, `drafts`) and scored against SFT, then
    GRPO against their mean reward per step (`rewards`: SFT's and GRPO's per step)."""
    sft_rewards, grpo_rewards = rewards
    result, placebo_rewards = [], []
    for seed in range(placebos):
        adapter = placebo_adapter(*adapters, folder / f"adapter_{seed}", seed)
        stem = folder / f"predictions_{seed}"
        predictions = _clear_predictions(stem)
        predict(adapter, rows, predictions, constrained, drafts)
        placebo_rewards.append(total_rewards(predictions))
        result += _gain_rows(
            {"mean_total_reward": reward_gain(sft_rewards, placebo_rewards[-1])},
            f"{note}; a random update of the GRPO run's size (seed {seed})",
            f"placebo {seed} of GRPO{label} - SFT",
        )
    figures = {"mean_total_reward": reward_gain(step_means(placebo_rewards), grpo_rewards)}
    (folder / "result.json").write_text(json.dumps(figures, indent=2))
    return result + _gain_rows(
        figures,
        f"{note}; each step's reward averaged over {placebos} placebos",
        f"GRPO{label} - its {placebos} placebos",
    )


def _train_rows(grpo: dict, label: str) -> list[dict]:
    curve = grpo.get("rewards") or []
    return [
        {
            "measure": f"GRPO{label} training reward, first -> mean of last 5 steps",
            "value": sum(curve[-5:]) / max(len(curve[-5:]), 1), "unit": "",
            "note": f"first {curve[0] if curve else None}; {grpo['seconds_per_step']} s/step; "
            f"all: {[round(r, 3) for r in curve]}",
        },
        {
            "measure": f"GRPO{label} groups with zero reward spread (share)",
            "value": grpo.get("zero_spread_share"), "unit": "",
            "note": f"curriculum probe: {grpo.get('curriculum')}",
        },
    ]  # fmt: skip


def run() -> list[dict]:
    from mads_bench.demo import eval_rows

    started = time.perf_counter()
    demo = Path(os.environ.get("MADS_BENCH_DEMO_DIR", "outputs/demo"))
    steps = int(os.environ.get("MADS_BENCH_GRPO_STEPS", "15"))
    split = os.environ.get("MADS_BENCH_EVAL_SPLIT", "report")
    skip, conversations = _split(split, os.environ.get("MADS_BENCH_EVAL_CONVERSATIONS"))
    seeds = _seeds(os.environ.get("MADS_BENCH_GRPO_SEED"))
    overrides, variant = _overrides(os.environ.get("MADS_BENCH_GRPO_ARGS"))
    samples = _count("MADS_BENCH_EVAL_SAMPLES", os.environ.get("MADS_BENCH_EVAL_SAMPLES"))
    placebos = _count("MADS_BENCH_PLACEBOS", os.environ.get("MADS_BENCH_PLACEBOS"))
    sft = demo / "train" / "sft"
    if not (sft / "adapter_config.json").is_file():
        raise SystemExit(f"{sft}: no SFT adapter; run `make demo` (or set MADS_BENCH_DEMO_DIR)")
    out = demo / "grpo_gain"
    constrained = constrains_tool_names(overrides)
    rows = eval_rows(demo / "dataset", conversations, 0, skip=skip)
    tag = f"{split}_{conversations}_{EVAL_DTYPE}" + ("_names" if constrained else "")
    sft_stem = out / f"predictions_sft_{tag}"  # greedy `.jsonl`, samples `_T<t>_s<i>.jsonl`
    sft_predictions = _greedy(sft_stem)
    sft_evaluation = predict(sft, rows, sft_predictions, constrained)
    sft_rewards = total_rewards(sft_predictions)
    if samples:
        sft_sampled, sft_sampled_rewards = sampled_evaluation(
            str(sft), rows, sft_stem, samples, constrained
        )
    note = (
        f"SFT vs + {steps} GRPO steps; {len(rows)} held-out steps of "
        f"{len(sft_evaluation.conversations)} conversations ({split} split)"
        + (f"; over the config: {shlex.join(overrides)}" if overrides else "")
        + ("; tool names constrained to the prompt's tools" if constrained else "")
    )
    result, seed_rewards, seed_evaluations, reused = [], [], [], 0
    inputs = [in_repo(GAIN_GRPO_CONFIG), sft / "adapter_model.safetensors"]
    for seed in seeds:
        run_name = (f"{steps}" if seed is None else f"{steps}_seed{seed}") + variant
        label = "" if len(seeds) == 1 else f" (seed {seed})"
        stem = out / f"predictions_grpo_{run_name}_{tag}"
        result_file = out / f"result_{run_name}.json"
        grpo = finished_run(result_file, steps, overrides, inputs)
        if grpo is None:
            grpo = run_recipe(
                "recipes/grpo.py", GAIN_GRPO_CONFIG, demo / "dataset", out / f"grpo_{run_name}",
                extra_args=["--max_steps", str(steps), "--sft_adapter_path", str(sft),
                            "--report_to", "none"]
                           + ([] if seed is None else ["--seed", str(seed)]) + overrides,
                echo=False, log=lambda message: print(message, flush=True),
            )  # fmt: skip
            predictions = _clear_predictions(stem)  # a new adapter: none of its predictions
        else:
            print(f"[grpo_gain] reusing {grpo['output_dir']}: {result_file} is newer than "
                  "the config and the SFT adapter", flush=True)  # fmt: skip
            predictions = _greedy(stem)  # continued where it stopped
            reused += 1
        evaluation = predict(grpo["output_dir"], rows, predictions, constrained, sft_predictions)
        seed_rewards.append(total_rewards(predictions))
        seed_evaluations.append(evaluation)
        figures = _gain(sft_evaluation, sft_rewards, evaluation, seed_rewards[-1])
        result_file.write_text(
            json.dumps(
                {"grpo": grpo, "figures": figures, "seed": seed, "overrides": overrides}, indent=2
            )
        )
        result += _gain_rows(
            figures,
            f"{note} (seed {seed if seed is not None else 'of the config'})",
            f"GRPO{label} - SFT",
        )
        if samples:
            sampled_figures = _gain(
                sft_sampled,
                sft_sampled_rewards,
                *sampled_evaluation(
                    grpo["output_dir"],
                    rows,
                    stem,
                    samples,
                    constrained,
                    drafts=sft_stem,
                ),  # fmt: skip
            )
            result += _gain_rows(
                sampled_figures,
                f"{note}; {samples} samples per step at temperature {SAMPLED_TEMPERATURE}",
                f"GRPO{label} sampled - SFT",
            )
            (out / f"result_{run_name}_sampled.json").write_text(json.dumps(sampled_figures))
        if placebos:
            result += _placebo_rows(
                (sft, Path(grpo["output_dir"])), out / f"placebo_{run_name}_{tag}", rows,
                (sft_rewards, seed_rewards[-1]), placebos, note, label, constrained,
                sft_predictions,
            )  # fmt: skip
        result += _train_rows(grpo, label)
    if len(seeds) > 1:
        pooled = _gain(
            pool([sft_evaluation] * len(seeds)), sft_rewards,
            pool(seed_evaluations), step_means(seed_rewards),
        )  # fmt: skip
        (out / f"result_{steps}_seeds{'-'.join(map(str, seeds))}{variant}.json").write_text(
            json.dumps({"figures": pooled, "seeds": seeds, "overrides": overrides}, indent=2)
        )
        result += _gain_rows(
            pooled,
            f"{note}; each step's reward averaged over the seeds' policies",
            f"GRPO (seeds {','.join(map(str, seeds))} pooled) - SFT",
        )
    minutes = (time.perf_counter() - started) / 60
    result.append(
        {
            "measure": "grpo_gain wall time (GRPO + evaluations)",
            "value": round(minutes, 1), "unit": "min",
            "note": f"budget: 30 min on 2 cores for one seed; {len(seeds)} seed(s)"
            + (f", {reused} of them reused, not trained" if reused else ""),
        }
    )  # fmt: skip
    return result
