"""`transformers:<model>` — a local Hugging Face causal LM with its chat template.

The model name goes through `mads_bench.models.resolve_model` only (`tiny-lm`,
`smollm2-135m`, a local folder, or a Hub id already in the local cache); nothing is
downloaded. A LoRA adapter folder written by the recipes is merged into its base first
(`mads_bench.adapters.load_for_inference`: the exact QLoRA policy, dequantised). Model and
tokenizer are loaded once, at first use. Generation is continuously batched
(`mads_bench.decoding.DecodeEngine`): up to `batch_size` rows decode together, a row leaves
the batch as soon as it ends (end of message, a stop string, `max_new_tokens`) and a waiting
prompt takes its place at the next step, so no reply waits for a longer one. The last
`prefix_cache` finished replies keep their keys and values: a conversation's next prompt
starts with its previous prompt and reply, and only the turns after them are prefilled. Greedy when
`temperature == 0`; otherwise each prompt samples from its own torch generator drawn from
`seed` (`mads_bench.decoding.row_generators`), so the global RNG is left untouched and the same
seed and inputs give the same replies whichever other prompts share the steps (up to
floating-point differences between batch shapes).

With `constrain_tool_names=True` a tool step can only name a tool that its conversation's
system message lists (`mads_bench.tool_constraint`: the name's tokens are filtered while it is
written; everything else decodes as before).

Precision (`dtype="auto"`, the default): a float32 checkpoint generates in bf16 where the
device runs bf16 natively (`mads_bench.precision.native_bf16`; avx512_bf16/AMX CPUs), in float32
elsewhere. Measured on a 2-core Zen 5 with SmolLM2-135M on 8 held-out demo steps (~1.3k-token
prompts, 192 new tokens, batch 4): 9.05 s per step in float32, 6.35 s in bf16. (transformers'
static KV cache measured no faster there, 6.50 vs 6.46 s per step, so the default cache stays.)

Calls from several threads share one engine: a conversation's prompt joins the rows already
decoding, and one thread of the backend's own steps every row (`mads_bench.decode_worker`:
callers taking turns at stepping made each step 1.8x slower; a caller's thread-local torch
state, autocast say, does not reach it, and a caller that stops waiting leaves its rows to
finish). So conversations simulated
with `--concurrency C` decode up to C rows per forward pass, and one that finishes its reply
moves on (its user and tool turns) while the others decode. Greedy replies depend on which
rows share a step only through padding (rare near-ties of the argmax; none in float32 on the
tests' prompts).

Example:
    >>> from simulation.backends import get_backend
    >>> lm = get_backend("transformers:tiny-lm", batch_size=8)  # doctest: +SKIP
    >>> lm.complete(["Hello!"], max_new_tokens=8)  # doctest: +SKIP
    ['...eight tokens of a random model...']
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from simulation.backends.base import BackendError, BaseChatBackend
from simulation.backends.registry import ChatMessage, register_backend, split_spec

if TYPE_CHECKING:
    import torch

    from mads_bench.decode_worker import DecodeWorker
    from mads_bench.decoding import DecodeEngine

__all__ = ["TransformersBackend"]

_EXPECTED = "'transformers:<model>' with a model name (tiny-lm, smollm2-135m) or a local path"


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
        prefix_cache (`int`, *optional*): Finished replies whose keys and values are kept, so
            a conversation's next prompt (which starts with the last one and its reply)
            prefills only its new turns; default `batch_size`, 0 turns it off.
        constrain_tool_names (`bool`): A tool step may only name a tool its conversation's
            system message lists (`mads_bench.tool_constraint`); off by default.

    Raises:
        `ValueError`: When the spec has no model or the options are invalid.

    Example:
        >>> backend = TransformersBackend("transformers:tiny-lm", batch_size=4)
        >>> backend.model_name, backend.batch_size
        ('tiny-lm', 4)
    """

    verifies_drafts = True  # `generate(drafts=...)`: checked in the prefill (`DecodeEngine`)

    def __init__(
        self,
        spec: str,
        *,
        batch_size: int = 8,
        device: str = "cpu",
        dtype: str | torch.dtype | None = "auto",
        prefix_cache: int | None = None,
        constrain_tool_names: bool = False,
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
        self.prefix_cache = batch_size if prefix_cache is None else prefix_cache
        if not isinstance(self.prefix_cache, int) or self.prefix_cache < 0:
            raise ValueError(f"{spec!r}: prefix_cache must be 0 or more, got {prefix_cache!r}.")
        self.constrain_tool_names = bool(constrain_tool_names)
        self._model: Any = None
        self._tokenizer: Any = None
        self._load_lock = threading.Lock()
        self._worker: DecodeWorker | None = None  # rows of every caller decode together

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
            from mads_bench.decode_worker import DecodeWorker, on_own_thread
            from mads_bench.decoding import DecodeEngine
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

            def load_model() -> Any:  # off this thread: see `mads_bench.decode_worker`
                model = load_for_inference(path, dtype=dtype)
                model.to(self.device)
                if auto:
                    model.to(inference_dtype(self.device, checkpoint=model.dtype))
                return model

            model = on_own_thread(load_model)
            config = model.generation_config
            eos = config.eos_token_id if config is not None else None
            eos_ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
            eos_ids.add(tokenizer.eos_token_id)
            engine = DecodeEngine(
                model, eos_ids=sorted(i for i in eos_ids if i is not None), tokenizer=tokenizer,
                max_batch=self.batch_size, prefix_cache=self.prefix_cache,
            )  # fmt: skip
            self._tokenizer, self._model, self._worker = tokenizer, model, DecodeWorker(engine)

    @property
    def decode_engine(self) -> DecodeEngine:
        """The engine every caller's rows decode in (loads the model when needed); its
        `steps` and `tokens` count the work done so far."""
        self.load()
        return self._worker.engine

    def _generate(
        self,
        conversations: list[list[ChatMessage]],
        *,
        max_new_tokens: int,
        temperature: float,
        seed: int | None,
        stop: list[str],
        drafts: list[str] | None = None,
    ) -> list[str]:
        from mads_bench.decoding import row_generators
        from mads_bench.tool_constraint import offered_tools

        self.load()
        texts = [
            self._tokenizer.apply_chat_template(c, add_generation_prompt=True, tokenize=False)
            for c in conversations
        ]
        prompts = self._tokenizer(texts, add_special_tokens=False).input_ids
        sampled = temperature > 0
        generators = row_generators(seed, len(prompts)) if sampled else [None] * len(prompts)
        names = [offered_tools(c) if self.constrain_tool_names else () for c in conversations]
        guesses = [
            self._tokenizer(d, add_special_tokens=False).input_ids if d else []
            for d in drafts or [""] * len(prompts)
        ]
        futures = [
            self._worker.submit(prompt, max_new_tokens=max_new_tokens, stop_strings=stop,
                           temperature=temperature, generator=generator, tool_names=tools,
                           draft=guess)
            for prompt, generator, tools, guess in zip(prompts, generators, names, guesses,
                                                       strict=True)
        ]  # fmt: skip
        return [
            self._tokenizer.decode(f.result().tokens, skip_special_tokens=True) for f in futures
        ]
