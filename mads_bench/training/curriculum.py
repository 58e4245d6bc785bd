"""A GRPO curriculum from the starting policy's own rewards: train where it is partly right.

GRPO learns from a group only when its completions' rewards differ: a prompt the SFT policy
always gets right, or always gets wrong, gives every completion the same advantage (zero) and
costs a whole step for no gradient (TRL logs the share as `frac_reward_zero_std`). Before
training, `policy_reward_curriculum` samples the starting policy `samples` times on a seeded
set of candidate prompts, exactly as the training rollouts will (the recipe's `StepRollout`,
its temperature and length), scores the samples with the recipe's own weighted rewards, and
keeps the prompts whose samples disagree, the most spread first. The probe is recorded
(`CurriculumReport`: how many candidates had zero spread, the kept prompts' mean reward) so a
run says how much of its data could teach at all.

Example:
    >>> train, report = policy_reward_curriculum(trainer, rollout, train, candidates=96,
    ...                                          samples=4, keep=48)  # doctest: +SKIP
    >>> report.zero_spread_share  # doctest: +SKIP
    0.58
"""

from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from datasets import Dataset

__all__ = ["CurriculumReport", "policy_reward_curriculum", "weighted_rewards"]

_PROMPTS_PER_BATCH = 4
"""Probed prompts decoded together (each with all its samples)."""


@dataclass
class CurriculumReport:
    """What the probe of the starting policy found.

    Attributes:
        candidates (`int`): Prompts probed.
        samples (`int`): Completions sampled per prompt.
        zero_spread_share (`float`): Share of probed prompts whose samples all scored the same.
        kept (`int`): Prompts kept for training.
        mean_reward_probed (`float`): Mean weighted reward over every probed sample.
        mean_reward_kept (`float`): The same over the kept prompts' samples.
        seconds (`float`): Wall time of the probe.
        ranked_by (`str`): `total` (the weighted rewards) or the ranking reward's name.
    """

    candidates: int
    samples: int
    zero_spread_share: float
    kept: int
    mean_reward_probed: float
    mean_reward_kept: float
    seconds: float
    ranked_by: str = "total"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def weighted_rewards(
    reward_funcs: list[Any], weights: list[float], completions: list[Any], **columns: Any
) -> list[float]:
    """TRL's total reward of each completion: the weighted sum, a `None` part counting 0.

    Example:
        >>> weighted_rewards([lambda completions, **_: [1.0, None]], [2.0], ["a", "b"])
        [2.0, 0.0]
    """
    totals = [0.0] * len(completions)
    for func, weight in zip(reward_funcs, weights, strict=True):
        values = func(completions=completions, **columns)
        for index, value in enumerate(values):
            if value is not None and not math.isnan(value):
                totals[index] += weight * value
    return totals


def policy_reward_curriculum(
    trainer: Any,
    rollout: Any,
    dataset: Dataset,
    *,
    candidates: int,
    samples: int,
    keep: int | None = None,
    seed: int = 0,
    ranking_reward: Any = None,
) -> tuple[Dataset, CurriculumReport]:
    """The rows of `dataset` on which the starting policy's sampled rewards differ.

    Args:
        trainer (`GRPOTrainer`): Built on `dataset`, not yet trained: its reward functions,
            weights and tokenizer are used as training will use them.
        rollout (`StepRollout`): The rollout function training will sample with.
        dataset (`Dataset`): `grpo` rows (prompt + gold columns).
        candidates (`int`): How many rows to probe (a seeded sample; all if fewer).
        samples (`int`): Completions per probed row (at least 2).
        keep (`int`, *optional*): Keep at most this many rows, the largest reward spread first
            (ties: the mean nearer half the best probed reward, where the policy is partly
            right). Default: every row with a spread.
        seed (`int`): Seed of the candidate sample.
        ranking_reward (`Callable`, *optional*): One of the trainer's reward functions: rank
            and keep rows by the spread of this reward alone (a `None` value counts 0), not
            by the weighted total. The report's mean rewards stay the weighted total's.

    Returns:
        `(Dataset, CurriculumReport)`: The kept rows (in `dataset` order) and the probe's report.

    Raises:
        `ValueError`: When `samples < 2`, or when no probed row has any spread.
    """
    import time

    if samples < 2:
        raise ValueError(f"curriculum samples must be >= 2 (a spread needs two), got {samples}")
    started = time.perf_counter()
    order = list(range(len(dataset)))
    random.Random(seed).shuffle(order)
    chosen = sorted(order[: min(candidates, len(dataset))])
    rows = dataset.select(chosen)
    prompts = [prompt for prompt in rows["prompt"] for _ in range(samples)]
    texts = []
    step = samples * _PROMPTS_PER_BATCH
    for start in range(0, len(prompts), step):  # a bounded batch: keys and values of ~1k tokens
        generated = rollout(prompts[start : start + step], trainer)
        texts += trainer.processing_class.batch_decode(
            generated["completion_ids"], skip_special_tokens=True
        )
    columns = {
        name: [value for value in rows[name] for _ in range(samples)]
        for name in rows.column_names
        if name != "prompt"
    }
    weights = [float(w) for w in trainer.reward_weights.tolist()]
    totals = weighted_rewards(trainer.reward_funcs, weights, texts, prompts=prompts, **columns)
    ranked_by = totals
    if ranking_reward is not None:
        ranked_by = weighted_rewards([ranking_reward], [1.0], texts, prompts=prompts, **columns)
    groups = [ranked_by[i * samples : (i + 1) * samples] for i in range(len(chosen))]
    spread = [max(g) - min(g) for g in groups]
    means = [sum(g) / samples for g in groups]
    best = max(ranked_by, default=0.0)
    ranked = sorted(
        (i for i in range(len(chosen)) if spread[i] > 1e-9),
        key=lambda i: (-spread[i], abs(means[i] - best / 2)),
    )
    if not ranked:
        raise ValueError(
            f"curriculum: none of {len(chosen)} probed prompts had a reward spread over "
            f"{samples} samples; raise the temperature or curriculum_samples"
        )
    kept = sorted(ranked[:keep] if keep else ranked)
    report = CurriculumReport(
        candidates=len(chosen),
        samples=samples,
        zero_spread_share=round(1 - len(ranked) / len(chosen), 4),
        kept=len(kept),
        mean_reward_probed=round(sum(totals) / max(len(totals), 1), 4),
        mean_reward_kept=round(
            sum(sum(totals[i * samples : (i + 1) * samples]) for i in kept) / (len(kept) * samples),
            4,
        ),
        seconds=round(time.perf_counter() - started, 1),
        ranked_by="total" if ranking_reward is None else ranking_reward.__name__,
    )
    return dataset.select([chosen[i] for i in kept]), report
