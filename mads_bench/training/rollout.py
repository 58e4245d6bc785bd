"""Conversation-level GRPO rollouts: the policy plays whole simulated conversations.

`ConversationRollout` is a TRL ``rollout_func`` (TRL 1.16: ``rollout_func(prompts, trainer)
-> {prompt_ids, completion_ids, logprobs, env_mask, ...}``). TRL calls it with the prompts of
one generation round, each already repeated ``num_generations`` times; in conversation mode a
prompt is a rollout key (`rollout_key`: scenario id and conversation seed, a training row of
`conversation_rows`), because TRL hands the function nothing but the prompts. For every
entry it plays one conversation through `simulation.environment.Environment` (reset, step,
truncate), the runner's own rules (malformed output, loops, turn cap) included: the policy
is the assistant, against the scripted user (or any user backend) and the stateful tool
backend with the scenario's adversities. Entries of one group share the conversation seed,
so the user and the backend behave the same for all of them and the group's differences
come from the policy alone.

Token bookkeeping (`TokenConversation`): ``prompt_ids`` is the chat-templated system prompt
and first user message; ``completion_ids`` is everything after it, in order: each policy
step's generated tokens exactly as sampled (``env_mask`` 1) and, between steps, the template
text of what the runner added (the end of the assistant message, tool results, user
messages, the next assistant header; ``env_mask`` 0). Every step is generated from
``prompt_ids + completion_ids`` so far, so the trainer scores exactly the tokens the policy
conditioned on; the chat template must only append (ChatML templates such as SmolLM2's and
Qwen2.5's do), which `ChatTokens` checks. A finished conversation ends with the template's
end-of-message tokens, so TRL counts it as terminated; a truncated one does not.

All conversations of a round that wait for an assistant step are generated as one batch
(one ``generate`` call per round, left padding), each step stopping at ``</action>`` or
the end of message, at most ``max_step_tokens`` long. Limits (`RolloutLimits`): the
runner's caps, ``max_assistant_steps`` per conversation, and ``max_tokens`` of completion
(TRL's ``max_completion_length``): a conversation that would pass either is ended with
``end_reason="truncated"`` and gets no success credit (`rewards.conversation`).

Each entry's structured outcome (`rewards.summarise_conversation`) goes to the rewards as the
``outcome`` column, its trajectory as JSON as ``trajectory``; the rewards never re-parse the
decoded transcript.

Example:
    >>> key = rollout_key("mock-cancel-normal", 7)
    >>> key, parse_rollout_key(key)
    ('{"scenario_id": "mock-cancel-normal", "seed": 7}', ('mock-cancel-normal', 7))
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mads_bench.data_model import Message, Scenario, Trajectory
from mads_bench.errors import UsageError
from simulation.environment import Environment
from simulation.runner import RunLimits, conversation_seed

if TYPE_CHECKING:
    from datasets import Dataset

__all__ = [
    "ChatTokens",
    "ConversationRollout",
    "Rollout",
    "RolloutLimits",
    "TokenConversation",
    "VLLMPolicy",
    "conversation_rows",
    "parse_rollout_key",
    "play_rollouts",
    "rollout_key",
]

logger = logging.getLogger(__name__)

STOP = "</action>"
_SENTINEL = "\u2063MADS-ROLLOUT-SENTINEL\u2063"

Policy = Callable[[list[list[int]], int], Any]
"""``policy(contexts, max_new_tokens)``: one batched generate; returns the new tokens per
context, or ``(tokens, logprobs)`` with the sampling log-probability of each new token (vLLM,
for TRL's importance-sampling correction)."""


def rollout_key(scenario_id: str, seed: int) -> str:
    """The ``prompt`` of a conversation-mode row: which scenario, with which seed."""
    return json.dumps({"scenario_id": scenario_id, "seed": int(seed)})


def parse_rollout_key(prompt: Any) -> tuple[str, int]:
    """``(scenario_id, seed)`` of a rollout key.

    Raises:
        `UsageError`: When the prompt is no rollout key (a step-mode dataset in conversation
            mode).
    """
    try:
        key = json.loads(prompt)
        return str(key["scenario_id"]), int(key["seed"])
    except (TypeError, ValueError, KeyError) as error:
        raise UsageError(
            "rollout: conversation expects rows from `conversation_rows` (prompt = "
            f'{{"scenario_id": ..., "seed": ...}}), got prompt {str(prompt)[:80]!r}'
        ) from error


def conversation_rows(
    scenarios: Sequence[Scenario], *, repetitions: int = 1, seed: int = 0
) -> Dataset:
    """Training rows of conversation mode: one per scenario and repetition.

    Args:
        scenarios (`Sequence[Scenario]`): The training scenarios.
        repetitions (`int`): Conversation seeds per scenario.
        seed (`int`): Run seed the conversation seeds derive from
            (`simulation.runner.conversation_seed`).

    Returns:
        `Dataset`: ``prompt`` (the rollout key), ``scenario_id``, ``domain``, ``complexity``
        and ``conversation_seed``.
    """
    from datasets import Dataset

    rows = []
    for repetition in range(repetitions):
        for scenario in scenarios:
            conv_seed = conversation_seed(seed, scenario.id, repetition)
            rows.append(
                {
                    "prompt": rollout_key(scenario.id, conv_seed),
                    "scenario_id": scenario.id,
                    "domain": scenario.domain,
                    "complexity": scenario.complexity,
                    "conversation_seed": conv_seed,
                }
            )
    return Dataset.from_list(rows)


@dataclass(frozen=True)
class RolloutLimits:
    """Bounds of one rollout.

    Args:
        max_tokens (`int`): Completion tokens (policy and environment) per conversation.
        max_step_tokens (`int`): New tokens per assistant step.
        max_assistant_steps (`int`): Assistant steps per conversation.
        run (`RunLimits`): The runner's caps (turns, steps per turn, malformed turns, loops).
    """

    max_tokens: int = 2048
    max_step_tokens: int = 192
    max_assistant_steps: int = 16
    run: RunLimits = field(default_factory=RunLimits)


class ChatTokens:
    """Chat-template arithmetic on token ids for one tokenizer.

    Args:
        tokenizer: A tokenizer with an append-only chat template.

    Raises:
        `UsageError`: When the template renders an assistant message in a way this cannot
            split (no text after the content).
    """

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        eos = tokenizer.eos_token_id
        self.eos_ids = {eos} if isinstance(eos, int) else set(eos or [])
        probe = self.render([{"role": "user", "content": "x"}, _assistant(_SENTINEL)], False)
        self.closing = probe.split(_SENTINEL)[-1]  # "<|im_end|>\n" for ChatML
        if not self.closing:
            raise UsageError(
                "the chat template ends an assistant message with nothing after its content; "
                "conversation rollouts need a template that closes each message"
            )

    def render(self, messages: list[dict[str, str]], generation_prompt: bool) -> str:
        return self.tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=generation_prompt
        )

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=True)

    def prompt_ids(self, view: list[Message]) -> list[int]:
        """The first assistant step's context: the view rendered with the generation prompt."""
        return self.encode(self.render(_chat(view), True))

    def between_steps(self, view: list[Message], step_at: int, policy_closed: bool) -> list[int]:
        """Tokens of what follows the assistant message at ``view[step_at]`` up to the next
        assistant header: its closing (unless the policy generated it), the runner's new
        messages and the generation prompt."""
        chat = _chat(view)
        upto = self.render(chat[: step_at + 1], False)
        full = self.render(chat, True)
        if not full.startswith(upto):
            raise UsageError(
                "the chat template re-renders earlier messages when one is added (it is not "
                "append-only); conversation rollouts cannot keep token alignment with it"
            )
        return self.encode(self._closing(policy_closed) + full[len(upto) :])

    def end_ids(self, policy_closed: bool) -> list[int]:
        """The end of the last assistant message (so TRL sees a terminated completion)."""
        return self.encode(self._closing(policy_closed).rstrip("\n")) if not policy_closed else []

    def _closing(self, policy_closed: bool) -> str:
        if not policy_closed:
            return self.closing
        eos_text = self.tokenizer.decode(sorted(self.eos_ids)[:1])
        return self.closing[len(eos_text) :] if self.closing.startswith(eos_text) else ""

    def cut_step(self, new_ids: Sequence[int]) -> tuple[list[int], bool]:
        """The policy's step out of a row of generated ids: up to the first end of message
        (kept) or the end of the first ``</action>``; also whether the step ended there."""
        ids = list(new_ids)
        for index, token in enumerate(ids):
            if token in self.eos_ids:
                ids = ids[: index + 1]
                break
        text = self.tokenizer.decode(ids, skip_special_tokens=False)
        if STOP not in text:
            return ids, bool(ids) and ids[-1] in self.eos_ids
        low, high = 1, len(ids)  # the shortest prefix that contains the stop string
        while low < high:
            middle = (low + high) // 2
            if STOP in self.tokenizer.decode(ids[:middle], skip_special_tokens=False):
                high = middle
            else:
                low = middle + 1
        return ids[:low], True


def _assistant(content: str) -> dict[str, str]:
    return {"role": "assistant", "content": content}


def _chat(view: list[Message]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in view]


@dataclass
class Rollout:
    """One played conversation at token level, with its trajectory and outcome."""

    prompt_ids: list[int]
    completion_ids: list[int]
    env_mask: list[int]
    trajectory: Trajectory
    logprobs: list[float] | None = None
    outcome: dict[str, Any] = field(default_factory=dict)

    @property
    def policy_tokens(self) -> int:
        return sum(self.env_mask)


class TokenConversation:
    """One conversation being played, with its tokens (see the module docstring).

    Args:
        scenario (`Scenario`): What is played.
        seed (`int`): Conversation seed (user, backend adversities).
        chat (`ChatTokens`): The tokenizer's template arithmetic.
        limits (`RolloutLimits`): Bounds.
        user (`str`): User agent spec.
        user_backend: A built backend for a non-scripted ``user``.
    """

    def __init__(
        self,
        scenario: Scenario,
        seed: int,
        chat: ChatTokens,
        limits: RolloutLimits,
        *,
        user: str = "scripted",
        user_backend: Any = None,
    ) -> None:
        from mads_bench.catalog import domain_of

        self.scenario, self.chat, self.limits = scenario, chat, limits
        self.environment = Environment(
            domain_of(scenario), scenario, seed=seed, user=user, user_backend=user_backend,
            limits=limits.run,
        )  # fmt: skip
        self.completion_ids: list[int] = []
        self.env_mask: list[int] = []
        self.logprobs: list[float] = []  # sampling log-probs (0.0 on environment tokens)
        self.has_logprobs = False
        self.steps = 0
        self.trajectory: Trajectory | None = None
        self._closed = False  # the last policy step generated its own end of message
        first = self.environment.reset()
        if isinstance(first, Trajectory):  # the user left before any assistant step
            self.view, self.trajectory = None, first
        else:
            self.view: list[Message] | None = first
        view = self.view if self.view is not None else self.trajectory.messages
        self.prompt_ids = chat.prompt_ids(view)
        if self.trajectory is not None:
            self._append(chat.end_ids(False) or sorted(chat.eos_ids)[:1], 0)

    @property
    def active(self) -> bool:
        return self.trajectory is None

    def context(self) -> list[int]:
        return self.prompt_ids + self.completion_ids

    def budget(self) -> int:
        """New tokens the next step may take."""
        return min(self.limits.max_step_tokens, self.limits.max_tokens - len(self.completion_ids))

    def take(self, new_ids: Sequence[int], logprobs: Sequence[float] | None = None) -> None:
        """Play one generated step (raw ids of the batch row, and their sampling log-probs
        when the policy gives them) and advance the conversation."""
        step, ended = self.chat.cut_step(new_ids)
        room = max(0, self.budget())
        if len(step) > room:
            step, ended = step[:room], False
        self._append(step, 1, None if logprobs is None else list(logprobs)[: len(step)])
        self.steps += 1
        self._closed = bool(step) and step[-1] in self.chat.eos_ids
        if not ended and self.budget() <= 0:  # the token cap cut the step short
            self._truncate()
            return
        at = len(self.view)
        text = self.chat.decode(step).strip()
        view = self.environment.step(text)
        if isinstance(view, Trajectory):
            self._end(view)
            return
        between = self.chat.between_steps(view, at, self._closed)
        if (
            len(self.completion_ids) + len(between) >= self.limits.max_tokens
            or self.steps >= self.limits.max_assistant_steps
        ):
            self._truncate()
            return
        self._append(between, 0)
        self.view = view

    def _truncate(self) -> None:
        """End the conversation at its pending step (no end of message: TRL counts it as
        truncated too)."""
        self.trajectory, self.view = self.environment.truncate(), None

    def _end(self, trajectory: Trajectory) -> None:
        self.trajectory, self.view = trajectory, None
        self._append(self.chat.end_ids(self._closed), 0)

    def _append(self, ids: Sequence[int], mask: int, logprobs: list[float] | None = None) -> None:
        self.completion_ids.extend(ids)
        self.env_mask.extend([mask] * len(ids))
        if logprobs is not None:
            self.has_logprobs = True
        self.logprobs.extend(logprobs if logprobs is not None else [0.0] * len(ids))

    def rollout(self) -> Rollout:
        if self.trajectory is None:
            raise RuntimeError("the conversation is still being played")
        logprobs = self.logprobs if self.has_logprobs else None
        return Rollout(
            self.prompt_ids, self.completion_ids, self.env_mask, self.trajectory, logprobs
        )


def play_rollouts(
    entries: Sequence[tuple[Scenario, int]],
    policy: Policy,
    chat: ChatTokens,
    limits: RolloutLimits,
    *,
    user: str = "scripted",
    user_backend: Any = None,
    still_playing: Callable[[bool], bool] | None = None,
) -> list[Rollout]:
    """Play one conversation per ``(scenario, seed)`` entry, all steps of a round in one batch.

    Args:
        entries: ``(scenario, conversation seed)`` per conversation, in output order.
        policy (`Policy`): Generates one step for each context of a batch.
        chat (`ChatTokens`): Template arithmetic of the policy's tokenizer.
        limits (`RolloutLimits`): Bounds of each conversation.
        user (`str`): User agent spec; ``user_backend`` its built backend.
        still_playing (`Callable`, *optional*): Called with "this process has conversations
            left" each round; returns whether any process has (multi-process training keeps
            generation rounds in step; default: this process only).

    Returns:
        `list[Rollout]`: In entry order, outcomes not yet filled.
    """
    games = [
        TokenConversation(s, seed, chat, limits, user=user, user_backend=user_backend)
        for s, seed in entries
    ]
    while True:
        active = [g for g in games if g.active]
        if not (still_playing(bool(active)) if still_playing else active):
            break
        budget = max((g.budget() for g in active), default=0)
        outputs = policy([g.context() for g in active], budget) if active else policy([], 0)
        ids, logprobs = outputs if isinstance(outputs, tuple) else (outputs, None)
        for index, (game, new_ids) in enumerate(zip(active, ids, strict=True)):
            game.take(new_ids, None if logprobs is None else logprobs[index])
    return [g.rollout() for g in games]


class HFPolicy:
    """Batched sampling with TRL's own non-vLLM generation settings, each row stopping at
    ``</action>`` or the end of message.

    From a `RolloutWeights` copy with plain temperature / nucleus sampling (TRL's defaults:
    no `top_k`, `min_p` or repetition penalty), rows decode continuously batched
    (`mads_bench.decoding`): a row that closes its action stops costing compute while the
    others go on. Otherwise (the trained model itself, other sampling settings) one padded
    ``generate`` call runs until its longest row stops.

    Args:
        trainer: The `GRPOTrainer` (generation config, tokenizer, model).
        weights (`RolloutWeights`, *optional*): Generate from this copy of the policy
            (refreshed after each optimizer step) instead of the trained model.
        stop_strings (`Sequence[str]`): Where a row stops besides EOS.
        capture_layer (`int`, *optional*): When decoding from `weights`, also keep the
            hidden states entering this layer for each row of the last call (`states`).

    Raises:
        `UsageError`: At a call with `tool_names` that cannot decode from `weights` with
            plain sampling (only `mads_bench.decoding` filters tool names).
    """

    def __init__(
        self, trainer: Any, weights: Any = None, stop_strings: Sequence[str] = (STOP,),
        capture_layer: int | None = None,
    ) -> None:  # fmt: skip
        self.trainer, self.weights, self.stop_strings = trainer, weights, list(stop_strings)
        self.capture_layer = capture_layer
        self.states: list[Any] | None = None  # the last call's captured states, if any

    def __call__(
        self, contexts: list[list[int]], max_new_tokens: int,
        tool_names: Sequence[Sequence[str]] | None = None,
    ) -> list[list[int]]:  # fmt: skip
        import copy

        if not contexts:
            return []
        config = copy.deepcopy(self.trainer.generation_config)
        config.max_new_tokens = max_new_tokens
        self.states = None
        if self.weights is not None and _plain_sampling(config):
            return self._decode(contexts, config, tool_names)
        if tool_names is not None:
            raise UsageError(
                "constrain_tool_names needs rollouts from the fast copy (rollout_weights: auto "
                "or copy) with plain temperature/top_p sampling"
            )
        return self._generate(contexts, config)

    def _decode(
        self, contexts: list[list[int]], config: Any,
        tool_names: Sequence[Sequence[str]] | None = None,
    ) -> list[list[int]]:  # fmt: skip
        import torch

        from mads_bench.decoding import decode

        trainer = self.trainer
        model = self.weights.model_for(trainer.state.global_step)
        seed = int(torch.randint(0, 2**62, (1,)))  # from the global RNG: the run's seed holds
        results = decode(
            model, contexts, max_new_tokens=config.max_new_tokens,
            eos_ids=list(trainer.eos_token_ids), stop_strings=self.stop_strings,
            tokenizer=trainer.processing_class,
            temperature=config.temperature if config.do_sample else 0.0,
            top_p=config.top_p if config.do_sample and config.top_p is not None else 1.0,
            generator=seed, max_batch=len(contexts), capture_layer=self.capture_layer,
            tool_names=tool_names,
        )  # fmt: skip
        if self.capture_layer is not None:
            self.states = [result.hidden for result in results]
        return [result.tokens for result in results]

    def _generate(self, contexts: list[list[int]], config: Any) -> list[list[int]]:
        import contextlib

        import torch
        from trl.models import unwrap_model_for_generation

        trainer = self.trainer
        tokenizer = trainer.processing_class
        pad = tokenizer.pad_token_id
        width = max(len(c) for c in contexts)
        ids = torch.tensor([[pad] * (width - len(c)) + c for c in contexts])
        mask = torch.tensor([[0] * (width - len(c)) + [1] * len(c) for c in contexts])
        config.stop_strings = self.stop_strings or None
        device = trainer.accelerator.device
        if self.weights is not None:
            context = contextlib.nullcontext(self.weights.model_for(trainer.state.global_step))
        else:
            context = unwrap_model_for_generation(
                trainer.model_wrapped,
                trainer.accelerator,
                gather_deepspeed3_params=trainer.args.ds3_gather_for_generation,
                generation_kwargs=trainer.generation_kwargs,
                gradient_checkpointing_kwargs=trainer.args.gradient_checkpointing_kwargs,
            )
        with context as model, torch.no_grad():
            output = model.generate(
                input_ids=ids.to(device),
                attention_mask=mask.to(device),
                generation_config=config,
                tokenizer=tokenizer,
            )
        return [row[width:].tolist() for row in output.cpu()]


def _plain_sampling(config: Any) -> bool:
    """Whether a generation config samples (or decodes greedily) as `mads_bench.decoding`
    does: temperature and nucleus only, one sequence per prompt."""
    return (
        not (config.top_k or 0)
        and config.min_p is None
        and (config.repetition_penalty or 1.0) == 1.0
        and (config.num_beams or 1) == 1
        and (config.num_return_sequences or 1) == 1
        and not getattr(config, "suppress_tokens", None)
        and not getattr(config, "bad_words_ids", None)
        and (not config.do_sample or (config.temperature or 0) > 0)
    )


class VLLMPolicy:
    """Batched sampling with TRL's vLLM engine (``use_vllm: true``; TRL syncs the weights
    before each ``rollout_func`` call).

    TRL 1.16's ``VLLMGeneration.generate(prompts=token ids, images, num_generations)`` takes
    no per-call limits: its sampling parameters come from the config, so a conversation
    config sets ``generation_kwargs: {stop: ["</action>"], include_stop_str_in_output: true,
    max_tokens: <max_step_tokens>}`` (checked in `conversation_training`); rows are cut to
    the step budget here as with transformers. Returns the tokens and their sampling
    log-probabilities.
    """

    def __init__(self, trainer: Any) -> None:
        self.trainer = trainer

    def __call__(self, contexts: list[list[int]], max_new_tokens: int) -> Any:
        if not contexts:
            return [], []
        _, ids, logprobs, _ = self.trainer.vllm_generation.generate(
            prompts=contexts, images=None, num_generations=1
        )
        return [list(row) for row in ids], [[lp[0] for lp in row] for row in logprobs]


class ConversationRollout:
    """TRL ``rollout_func`` of conversation-level GRPO (see the module docstring).

    Args:
        scenarios (`Mapping[str, Scenario]`): The training scenarios by id.
        limits (`RolloutLimits`): Bounds of each conversation.
        user (`str`): User agent spec (``scripted`` or a backend spec).
        sage (`bool`): Count SAGE-Core failures per turn (for the ``sage_turns`` reward).
        policy (`Policy`, *optional*): Replaces the trainer's model (tests); default
            `HFPolicy` of the trainer.
        fast_weights (`bool`): Without vLLM, generate from a `RolloutWeights` copy of the
            policy (`mads_bench.training.fast_weights`) instead of the trained model.
    """

    def __init__(
        self,
        scenarios: Mapping[str, Scenario],
        limits: RolloutLimits,
        *,
        user: str = "scripted",
        sage: bool = True,
        policy: Policy | None = None,
        fast_weights: bool = False,
    ) -> None:
        self.scenarios, self.limits, self.user, self.sage = scenarios, limits, user, sage
        self.policy, self.fast_weights = policy, fast_weights
        self._weights: Any = None
        self._chat: ChatTokens | None = None
        self._user_backend: Any = None
        self._embedder: Any = None

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        entries = [self._entry(p) for p in prompts]
        rollouts = self.play(entries, trainer)
        return {
            "prompt_ids": [r.prompt_ids for r in rollouts],
            "completion_ids": [r.completion_ids for r in rollouts],
            # vLLM's sampling log-probs (importance-sampling correction); with transformers
            # TRL needs none: it scores the tokens with the trained model itself
            "logprobs": None
            if any(r.logprobs is None for r in rollouts)
            else [r.logprobs for r in rollouts],
            "env_mask": [r.env_mask for r in rollouts],
            "outcome": [r.outcome for r in rollouts],
            "trajectory": [r.trajectory.model_dump_json() for r in rollouts],
        }

    def play(self, entries: Sequence[tuple[Scenario, int]], trainer: Any) -> list[Rollout]:
        """Play and summarise the entries' conversations with the trainer's policy."""
        from mads_bench.embedding import SentenceEncoder
        from rewards import summarise_conversation

        if self._chat is None:
            self._chat = ChatTokens(trainer.processing_class)
            if self.user != "scripted":
                from simulation.backends import get_backend

                self._user_backend = get_backend(self.user)
            self._embedder = SentenceEncoder()
        vllm = getattr(trainer, "use_vllm", False)
        if self.fast_weights and not vllm and self._weights is None and self.policy is None:
            from mads_bench.training.fast_weights import RolloutWeights

            self._weights = RolloutWeights(trainer.model)
        policy = self.policy or (VLLMPolicy(trainer) if vllm else HFPolicy(trainer, self._weights))
        rollouts = play_rollouts(
            entries, policy, self._chat, self.limits, user=self.user,
            user_backend=self._user_backend, still_playing=_rounds_in_step(trainer),
        )  # fmt: skip
        for rollout, (scenario, _) in zip(rollouts, entries, strict=True):
            rollout.outcome = summarise_conversation(
                rollout.trajectory, scenario, max_steps=self.limits.max_assistant_steps,
                policy_tokens=rollout.policy_tokens, embedder=self._embedder, sage=self.sage,
            )  # fmt: skip
        return rollouts

    def _entry(self, prompt: Any) -> tuple[Scenario, int]:
        scenario_id, seed = parse_rollout_key(prompt)
        if scenario_id not in self.scenarios:
            raise UsageError(f"rollout key names scenario {scenario_id!r}, not a training one")
        return self.scenarios[scenario_id], seed


def _rounds_in_step(trainer: Any) -> Callable[[bool], bool] | None:
    accelerator = getattr(trainer, "accelerator", None)
    if accelerator is None or accelerator.num_processes == 1:
        return None
    import torch

    def any_process_playing(here: bool) -> bool:
        flag = torch.tensor([int(here)], device=accelerator.device)
        return bool(accelerator.gather(flag).sum().item())

    return any_process_playing


def conversation_training(
    script_args: Any, training_args: Any, train: Dataset, reward_funcs: Sequence[Any]
) -> tuple[Dataset, ConversationRollout]:
    """Rows and ``rollout_func`` of ``rollout: conversation`` (``recipes/grpo.py``).

    Args:
        script_args: `GRPOScriptArguments` (scenarios, repetitions, user, step caps).
        training_args: `trl.GRPOConfig` (``max_completion_length`` caps a rollout's tokens).
        train (`Dataset`): The loaded train split (its ``scenario_id`` column).
        reward_funcs: The resolved rewards (all must be conversation rewards).

    Raises:
        `UsageError`: A step reward, vLLM settings it cannot use, or an evaluation split.
    """
    from mads_bench.training.data import training_scenarios

    check_reward_modes(reward_funcs, "conversation")
    if training_args.use_vllm:
        check_vllm_settings(training_args, script_args.max_step_tokens)
    if training_args.eval_strategy != "no":
        raise UsageError("rollout: conversation has no evaluation split; set eval_strategy: no")
    scenarios = training_scenarios(
        train, scenarios_file=script_args.scenarios_file,
        num_scenarios=script_args.num_conversations, seed=script_args.subset_seed,
    )  # fmt: skip
    rows = conversation_rows(
        scenarios, repetitions=script_args.rollout_repetitions, seed=training_args.seed
    )
    limits = RolloutLimits(
        max_tokens=training_args.max_completion_length,
        max_step_tokens=script_args.max_step_tokens,
        max_assistant_steps=script_args.max_assistant_steps,
        run=RunLimits(max_turns=script_args.max_turns),
    )
    from mads_bench.training.fast_weights import use_rollout_weights

    sage = any(getattr(f, "__name__", "") == "sage_turns_reward" for f in reward_funcs)
    rollout = ConversationRollout(
        {s.id: s for s in scenarios}, limits, user=script_args.rollout_user, sage=sage,
        fast_weights=use_rollout_weights(script_args.rollout_weights, training_args),
    )  # fmt: skip
    return rows, rollout


def check_vllm_settings(training_args: Any, max_step_tokens: int) -> None:
    """What conversation rollouts need from TRL 1.16's vLLM generation (see `VLLMPolicy`).

    Raises:
        `UsageError`: Server mode or tensor parallelism across several training processes
            (TRL gathers and slices every ``generate`` call's prompts across processes, which
            assumes as many prompts on each; conversations end at different rounds), or
            ``generation_kwargs`` without the step's stop string or step budget.
    """
    import os

    processes = int(os.environ.get("WORLD_SIZE", "1"))
    shared = training_args.vllm_mode == "server" or training_args.vllm_tensor_parallel_size > 1
    if processes > 1 and shared:
        raise UsageError(
            "rollout: conversation with use_vllm needs vllm_mode: colocate with "
            "vllm_tensor_parallel_size: 1 when training on several processes"
        )
    settings = training_args.generation_kwargs or {}
    if STOP not in (settings.get("stop") or []) or not settings.get("include_stop_str_in_output"):
        raise UsageError(
            f'rollout: conversation with use_vllm needs generation_kwargs: {{stop: ["{STOP}"], '
            f"include_stop_str_in_output: true, max_tokens: {max_step_tokens}}} (vLLM's "
            "sampling settings are fixed per run in TRL 1.16)"
        )


def check_reward_modes(reward_funcs: Sequence[Any], rollout: str) -> None:
    """Every reward must be made for the rollout mode (`rewards.conversation` marks its own).

    Raises:
        `UsageError`: Naming the rewards of the other mode.
    """
    wrong = [
        getattr(f, "__name__", str(f))
        for f in reward_funcs
        if getattr(f, "rollout", "step") != rollout
    ]
    if wrong:
        other = "step" if rollout == "conversation" else "conversation"
        raise UsageError(
            f"rollout: {rollout} cannot use the {other}-mode reward(s) {wrong}; conversation "
            "rewards: task_success, partial_credit, gold_steps, sage_turns, "
            "conversation_format, turn_cost"
        )
