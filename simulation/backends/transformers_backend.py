"""`transformers:<model>` — a local Hugging Face causal LM with its chat template.

The model name goes through `mads_bench.models.resolve_model` only (`tiny-lm`,
`smollm2-135m`, a local folder, or a Hub id already in the local cache); nothing is
downloaded. A LoRA adapter folder written by the recipes is merged into its base first
(`mads_bench.adapters.load_for_inference`: the exact QLoRA policy, dequantised). Model and
tokenizer are loaded once, at first use. Generation is batched (`batch_size` conversations
per forward pass, left padding with attention masks, inputs sorted by length to waste less
padding), greedy when `temperature == 0`, otherwise sampled from a torch RNG seeded by `seed`
inside `torch.random.fork_rng`, so the global RNG is left untouched. The same seed, inputs and
`batch_size` give the same replies on one machine.

Precision (`dtype="auto"`, the default): a float32 checkpoint generates in bf16 where the
device runs bf16 natively (`mads_bench.precision.native_bf16`; avx512_bf16/AMX CPUs), in float32
elsewhere. Measured on a 2-core Zen 5 with SmolLM2-135M on 8 held-out demo steps (~1.3k-token
prompts, 192 new tokens, batch 4): 9.05 s per step in float32, 6.35 s in bf16. (transformers'
static KV cache measured no faster there, 6.50 vs 6.46 s per step, so the default cache stays.)

Calls from several threads share the model: greedy calls with the same settings that arrive
while the model is busy (or within 20 ms of each other, once more than one thread uses the
backend) are generated as one batch. So conversations simulated with `--concurrency C` run
their steps as one padded `generate` call instead of C sequential ones. Greedy replies then
depend on which prompts share a batch only through padding (rare near-ties of the argmax).

Example:
    >>> from simulation.backends import get_backend
    >>> lm = get_backend("transformers:tiny-lm", batch_size=8)  # doctest: +SKIP
    >>> lm.complete(["Hello!"], max_new_tokens=8)  # doctest: +SKIP
    ['...eight tokens of a random model...']
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from simulation.backends.base import BackendError, BaseChatBackend
from simulation.backends.registry import ChatMessage, register_backend, split_spec

if TYPE_CHECKING:
    import torch

__all__ = ["TransformersBackend"]

_EXPECTED = "'transformers:<model>' with a model name (tiny-lm, smollm2-135m) or a local path"
_GATHER_SECONDS = 0.02


@dataclass
class _Request:
    """One caller's prompts waiting for the model, and where its replies go."""

    prompts: list[str]
    key: tuple
    replies: list[str] = field(default_factory=list)
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)


@register_backend("transformers")
class TransformersBackend(BaseChatBackend):
    """Batched chat generation with a local causal LM.

    Args:
        spec (`str`): `"transformers:<model>"`, e.g. `"transformers:smollm2-135m"`.
        batch_size (`int`): Conversations per `model.generate` call.
        device (`str`): Torch device (`"cpu"`, `"cuda"`, `"cuda:1"`, ...).
        dtype (`str | torch.dtype`, *optional*): E.g. `"bfloat16"`; `None`: the checkpoint's;
            `"auto"` (default): the checkpoint's, but bf16 for a float32 one where bf16 is
            native (`MADS_BENCH_BF16=0` turns that off).

    Raises:
        `ValueError`: When the spec has no model or the options are invalid.

    Example:
        >>> backend = TransformersBackend("transformers:tiny-lm", batch_size=4)
        >>> backend.model_name, backend.batch_size
        ('tiny-lm', 4)
    """

    def __init__(
        self,
        spec: str,
        *,
        batch_size: int = 8,
        device: str = "cpu",
        dtype: str | torch.dtype | None = "auto",
    ) -> None:
        prefix, model_name = split_spec(spec)
        if prefix != "transformers" or not model_name:
            raise ValueError(f"Malformed backend spec {spec!r}: expected {_EXPECTED}.")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(
                f"{spec!r}: batch_size must be a positive integer, got {batch_size!r}."
            )
        self.spec = spec
        self.model_name = model_name
        self.batch_size = batch_size
        self.device = device
        self.dtype = dtype
        self._model: Any = None
        self._tokenizer: Any = None
        self._load_lock = threading.Lock()
        self._generate_lock = threading.Lock()  # one forward pass at a time per model
        self._queue: list[_Request] = []  # prompts of concurrent callers, batched together
        self._queue_lock = threading.Lock()
        self._callers: set[int] = set()  # threads that have called generate

    def load(self) -> None:
        """Load model and tokenizer now (otherwise done at the first `generate`).

        Raises:
            `mads_bench.models.ModelNotFoundError`: When the model is not available locally.
            `BackendError`: When the tokenizer has no chat template.
        """
        with self._load_lock:
            if self._model is not None:
                return
            import torch

            from mads_bench.adapters import load_for_inference
            from mads_bench.models import load_tokenizer, resolve_model

            path = resolve_model(self.model_name)
            tokenizer = load_tokenizer(str(path))
            if not tokenizer.chat_template:
                raise BackendError(
                    f"{self.spec!r}: the tokenizer in {path} has no chat template; "
                    "use an instruction-tuned model."
                )
            tokenizer.padding_side = "left"  # new tokens must follow the prompt directly
            if tokenizer.pad_token is None:
                tokenizer.pad_token = tokenizer.eos_token
            from mads_bench.precision import inference_dtype

            auto = self.dtype == "auto"
            dtype = None if auto else self.dtype
            dtype = getattr(torch, dtype) if isinstance(dtype, str) else dtype
            model = load_for_inference(path, dtype=dtype)
            model.to(self.device)
            if auto:
                model.to(inference_dtype(self.device, checkpoint=model.dtype))
            self._tokenizer, self._model = tokenizer, model

    def _generate(
        self,
        conversations: list[list[ChatMessage]],
        *,
        max_new_tokens: int,
        temperature: float,
        seed: int | None,
        stop: list[str],
    ) -> list[str]:
        self.load()
        prompts = [
            self._tokenizer.apply_chat_template(c, add_generation_prompt=True, tokenize=False)
            for c in conversations
        ]
        # Greedy calls with the same settings from other threads (conversations simulated
        # at the same time) join one batch; a sampled call keeps its own seed, so it runs alone.
        key = (max_new_tokens, temperature, seed if temperature > 0 else None, tuple(stop))
        request = _Request(prompts, key)
        with self._queue_lock:
            self._callers.add(threading.get_ident())
            self._queue.append(request)
            shared = temperature == 0 and len(self._callers) > 1
        while not request.done.is_set():
            with self._generate_lock:
                if request.done.is_set():
                    break
                if shared:
                    self._gather(len(prompts))
                self._run_queued(request.key)
        if request.error is not None:
            raise request.error
        return request.replies

    def _gather(self, have: int) -> None:
        # Wait a moment for the other conversations to reach the model too (their user and
        # tool steps take milliseconds; a forward pass takes far longer).
        deadline = time.monotonic() + _GATHER_SECONDS
        while time.monotonic() < deadline:
            with self._queue_lock:
                if sum(len(r.prompts) for r in self._queue) >= self.batch_size:
                    return
            time.sleep(_GATHER_SECONDS / 10)

    def _run_queued(self, key: tuple) -> None:
        """Generate for every queued request with ``key`` (the caller's), in batches."""
        with self._queue_lock:
            batch = [r for r in self._queue if r.key == key]
            self._queue = [r for r in self._queue if r.key != key]
        max_new_tokens, temperature, seed, stop = key
        prompts = [p for r in batch for p in r.prompts]
        try:
            replies = self._generate_sorted(prompts, max_new_tokens, temperature, seed, list(stop))
        except BaseException as error:  # every waiting caller gets the failure, not a hang
            for request in batch:
                request.error = error
                request.done.set()
            raise
        start = 0
        for request in batch:
            request.replies = replies[start : start + len(request.prompts)]
            start += len(request.prompts)
            request.done.set()

    def _generate_sorted(
        self,
        prompts: list[str],
        max_new_tokens: int,
        temperature: float,
        seed: int | None,
        stop: list[str],
    ) -> list[str]:
        lengths = [len(ids) for ids in self._tokenizer(prompts, add_special_tokens=False).input_ids]
        order = sorted(range(len(prompts)), key=lambda i: lengths[i])
        replies: list[str] = [""] * len(prompts)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            chunk_seed = None if seed is None else seed + start
            texts = self._generate_batch(
                [prompts[i] for i in chunk], max_new_tokens, temperature, chunk_seed, stop
            )
            for i, text in zip(chunk, texts, strict=True):
                replies[i] = text
        return replies

    def _generate_batch(
        self,
        prompts: list[str],
        max_new_tokens: int,
        temperature: float,
        seed: int | None,
        stop: list[str],
    ) -> list[str]:
        import torch

        encoded = self._tokenizer(
            prompts, return_tensors="pt", padding=True, add_special_tokens=False
        ).to(self._model.device)
        settings: dict[str, Any] = {
            "max_new_tokens": max_new_tokens,
            "pad_token_id": self._tokenizer.pad_token_id,
        }
        if temperature > 0:
            settings.update(do_sample=True, temperature=temperature, top_k=0, top_p=1.0)
        else:
            settings.update(do_sample=False)
        if stop:
            # Lets finished rows stop early; the text is still cut by `truncate_at_stop`.
            settings.update(stop_strings=stop, tokenizer=self._tokenizer)
        devices = [self._model.device] if self._model.device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices), torch.inference_mode():
            if seed is not None:
                torch.manual_seed(seed)
            output = self._model.generate(**encoded, **settings)
        new_tokens = output[:, encoded["input_ids"].shape[1] :]
        return self._tokenizer.batch_decode(new_tokens, skip_special_tokens=True)
