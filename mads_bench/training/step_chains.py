"""One training sequence per chain of steps whose prompts extend each other.

An `sft` row is one assistant step: the conversation up to the step and the step itself. The
next step of the same conversation usually repeats all of it in its prompt (then a tool result
or a user message, then its own step), so training row by row runs the model over the same
prefix again and again. Under a causal mask the loss of a step's tokens depends only on the
tokens before them, so one sequence, the longest row of a chain, with the completion tokens of
every row in the chain marked, gives each of those tokens exactly the loss it gets in its own
row, for one forward pass instead of one per step.

A chain is a run of consecutive rows where each row's tokenized prompt + completion is a
prefix of the next row's tokenized prompt (checked on token ids, so a chat template that
renders earlier turns differently, or tokens that merge across a boundary, simply end the
chain). With `build-dataset --context full` a chain is usually a whole conversation, with
`--context compact` a turn (earlier turns are rewritten there). A chain also ends before it
would grow past `max_length`.

The rows are tokenized the way TRL's `SFTTrainer` tokenizes conversational prompt-completion
rows (the prompt with the generation prompt, then prompt + completion, the completion starting
where the two diverge), and the output has TRL's pre-tokenized columns, `input_ids` and
`completion_mask`, which `SFTTrainer` turns into labels with `completion_only_loss: true`.
What changes against row-by-row training is the weighting: TRL averages the loss over the
labelled tokens of a batch, so a chain of five steps weighs like a batch of five rows.

Example:
    >>> rows = [  # doctest: +SKIP
    ...     {"prompt": [user], "completion": [step_1]},
    ...     {"prompt": [user, step_1, tool_result], "completion": [step_2]},
    ... ]
    >>> merged, stats = merge_step_chains(Dataset.from_list(rows), tokenizer)  # doctest: +SKIP
    >>> stats.rows, stats.sequences  # doctest: +SKIP
    (2, 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from datasets import Dataset
    from transformers import PreTrainedTokenizerBase

__all__ = ["ChainStats", "merge_step_chains"]


@dataclass(frozen=True)
class ChainStats:
    """What merging did: rows in, sequences out, and tokens a pass over each costs."""

    rows: int
    sequences: int
    row_tokens: int
    sequence_tokens: int

    @property
    def steps_per_sequence(self) -> float:
        """Rows merged into one sequence, on average."""
        return self.rows / max(self.sequences, 1)

    def describe(self) -> str:
        """One log line, e.g. `789 steps -> 150 sequences (1,650,000 -> 382,000 tokens, 4.3x)`."""
        ratio = self.row_tokens / max(self.sequence_tokens, 1)
        return (
            f"{self.rows} steps -> {self.sequences} sequences "
            f"({self.row_tokens:,} -> {self.sequence_tokens:,} tokens, {ratio:.1f}x fewer)"
        )


def _tokenize_row(
    tokenizer: PreTrainedTokenizerBase, prompt: list[dict[str, Any]], completion: list[dict]
) -> tuple[list[int], int]:
    """Token ids of prompt + completion and where the completion starts (as TRL does it)."""
    from trl.data_utils import common_prefix_length

    prompt_ids = _chat_ids(tokenizer, prompt, add_generation_prompt=True)
    ids = _chat_ids(tokenizer, prompt + completion, add_generation_prompt=False)
    return ids, common_prefix_length(prompt_ids, ids)


def _chat_ids(
    tokenizer: PreTrainedTokenizerBase, messages: list[dict[str, Any]], add_generation_prompt: bool
) -> list[int]:
    out = tokenizer.apply_chat_template(
        messages, tokenize=True, return_dict=True, add_generation_prompt=add_generation_prompt
    )
    return list(out["input_ids"])


def merge_step_chains(
    dataset: Dataset, tokenizer: PreTrainedTokenizerBase, *, max_length: int | None = None
) -> tuple[Dataset, ChainStats]:
    """Merge chains of `sft` rows into single sequences with every step's completion marked.

    Args:
        dataset (`Dataset`): Conversational prompt-completion rows (`prompt`, `completion`),
            in dataset order (a conversation's steps one after another, as `build-dataset`
            writes them).
        tokenizer (`PreTrainedTokenizerBase`): The tokenizer (and chat template) of the model.
        max_length (`int`, *optional*): A chain ends before it would be longer than this.
            A row that is longer on its own stays a sequence of its own, for TRL's truncation
            to handle as it would have.

    Returns:
        `tuple`: The merged dataset (`input_ids`, `completion_mask`, `num_steps`) and a
        `ChainStats`.

    Raises:
        `ValueError`: When the rows are not conversational prompt-completion rows.
    """
    from datasets import Dataset

    missing = {"prompt", "completion"} - set(dataset.column_names)
    if missing:
        raise ValueError(
            f"merge_step_chains needs prompt-completion rows; missing columns {sorted(missing)}"
        )
    sequences: list[dict[str, Any]] = []
    row_tokens = 0
    for row in dataset:
        if not isinstance(row["prompt"], list):
            raise ValueError("merge_step_chains needs conversational rows (lists of messages)")
        ids, start = _tokenize_row(tokenizer, row["prompt"], row["completion"])
        row_tokens += len(ids)
        last = sequences[-1] if sequences else None
        if last is not None and _extends(last["input_ids"], ids, start, max_length):
            tail = [0] * (start - len(last["input_ids"])) + [1] * (len(ids) - start)
            last["input_ids"] = ids
            last["completion_mask"] = last["completion_mask"] + tail
            last["num_steps"] += 1
        else:
            mask = [0] * start + [1] * (len(ids) - start)
            sequences.append({"input_ids": ids, "completion_mask": mask, "num_steps": 1})
    stats = ChainStats(
        rows=len(dataset),
        sequences=len(sequences),
        row_tokens=row_tokens,
        sequence_tokens=sum(len(s["input_ids"]) for s in sequences),
    )
    columns = ("input_ids", "completion_mask", "num_steps")
    return Dataset.from_dict({c: [s[c] for s in sequences] for c in columns}), stats


def _extends(chain: list[int], ids: list[int], start: int, max_length: int | None) -> bool:
    """Whether a row (`ids`, completion from `start`) continues the chain ending in `chain`."""
    if max_length is not None and len(ids) > max_length:
        return False
    return start >= len(chain) and ids[: len(chain)] == chain
