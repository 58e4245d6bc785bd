"""`transformers:<model>` — a local Hugging Face causal LM with its chat template.

The model name goes through `mads_bench.models.resolve_model` only (`tiny-lm`,
`smollm2-135m`, a local folder, or a Hub id already in the local cache); nothing is
downloaded. A LoRA adapter folder written by the recipes is merged into its base first
(`mads_bench.adapters.load_for_inference`: the exact QLoRA policy, dequantised). Model and
tokenizer are loaded once, at first use. Generation is batched (`batch_size` conversations
per forward pass, left padding with attention masks, inputs sorted by length to waste less
padding), greedy when `temperature == 0`, otherwise sampled from a torch RNG seeded by `seed`
inside `torch.random.fork_rng`, so the global RNG is left untouched. The same seed, inputs and
`batch_size` give the same replies.

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

__all__ = ["TransformersBackend"]

_EXPECTED = "'transformers:<model>' with a model name (tiny-lm, smollm2-135m) or a local path"


@register_backend("transformers")
class TransformersBackend(BaseChatBackend):
    """Batched chat generation with a local causal LM.

    Args:
        spec (`str`): `"transformers:<model>"`, e.g. `"transformers:smollm2-135m"`.
        batch_size (`int`): Conversations per `model.generate` call.
        device (`str`): Torch device (`"cpu"`, `"cuda"`, `"cuda:1"`, ...).
        dtype (`str | torch.dtype`, *optional*): E.g. `"bfloat16"`; the checkpoint's by default.

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
        dtype: str | torch.dtype | None = None,
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
            dtype = getattr(torch, self.dtype) if isinstance(self.dtype, str) else self.dtype
            model = load_for_inference(path, dtype=dtype)
            model.to(self.device)
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
        lengths = [len(ids) for ids in self._tokenizer(prompts, add_special_tokens=False).input_ids]
        order = sorted(range(len(prompts)), key=lambda i: lengths[i])
        replies: list[str] = [""] * len(prompts)
        with self._generate_lock:
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
