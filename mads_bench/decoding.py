"""Continuous batching for a Hugging Face causal LM: no row waits for another.

`model.generate` runs a padded batch until its longest row stops, and a request that arrives
meanwhile waits for the whole batch. `DecodeEngine` keeps up to `max_batch` rows decoding
together in one `transformers.DynamicCache` instead:

- a new request is prefilled alone (no padding, so its prompt is computed exactly as in
  unbatched generation) and merged into the running batch, the shorter side left-padded in
  the cache and masked out; each row keeps its own position ids, so padding changes nothing
  but the shapes the kernels see; requests for the same prompt admitted together (a GRPO
  group) share one prefill, each re-running only the prompt's last token;
- a row leaves as soon as it emits an EOS id, its decoded text contains a stop string, or it
  reaches its `max_new_tokens` (its cache rows are dropped), and a waiting request takes the
  free slot at the next step;
- cache columns that are padding in every remaining row are trimmed away;
- a decoding step of a Llama-style model on CPU runs through `FusedDecoder`
  (`mads_bench.fused_decode`: fused, oneDNN-packed projections, no module stack), other
  models through their own forward;
- a decoding step writes its keys and values into spare room at the end of each layer's
  cache (`GrowingLayer`) instead of concatenating a new copy: transformers' `DynamicLayer`
  copies the whole cache at every token, which was 65% of a decoding step of SmolLM2-135M
  with 8 rows of ~1.3k tokens (profiled: 264 ms per step, 162 ms of it in `aten::cat`).

A row may carry a draft (`DecodeEngine.submit(draft=...)`): the tokens its reply is expected
to start with, such as the reply of the SFT adapter a GRPO policy was trained from. Its
prefill runs them too, and the row keeps each draft token it would have chosen itself from
that one pass's logits (greedy, sampled or name-filtered alike), then decodes from the first
token it chooses otherwise: the same reply for one forward pass instead of a decoding step per
agreeing token (the demo's GRPO policy predicted its 45 held-out steps 2.9x faster, each the
same, drafted by its SFT adapter's predictions: recipes/README.md).

A row may carry tool names (`DecodeEngine.submit(tool_names=...)`): while it writes the name
of a Pre-Act tool step it can only choose tokens that continue one of them
(`mads_bench.tool_constraint`).

Greedy when a row's `temperature == 0`; otherwise it samples with its own `torch.Generator`
(temperature, then nucleus `top_p`), so a row's sample does not depend on which other rows
share its steps. Log-probabilities, when asked for, are those of the chosen tokens under
`log_softmax(logits / temperature)` (plain logits for greedy rows), before `top_p` filtering:
what a policy-gradient loss recomputes from a forward pass.

`decode` runs a list of prompts to completion; `DecodeEngine.submit` + `step` let requests
join while it runs (`submit` may be called from any thread while one thread calls `step`).

Example:
    >>> out = decode(model, [[1, 2, 3], [4]], max_new_tokens=8, eos_ids=[2])  # doctest: +SKIP
    >>> [r.finish_reason for r in out]  # doctest: +SKIP
    ['length', 'eos']
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict, deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer

from mads_bench.decode_attention import use_decode_attention
from mads_bench.fused_decode import fused_decoder

__all__ = ["DecodeEngine", "DecodeResult", "GrowingLayer", "decode", "row_generators"]

_NOT_BUILT = object()
_SPARE = 128  # new cache columns allocated at once (amortises the copy of a reallocation)
_MIN_PREFIX = 16  # a shorter stored prefix is not worth its lookup


class GrowingLayer(DynamicLayer):
    """A full-attention cache layer whose `keys`/`values` are views of buffers with spare room.

    Appending writes in place while the room lasts; when it runs out, or after `keys` was
    replaced from outside (rows merged, selected or trimmed), the buffers are reallocated with
    `_SPARE` more columns and the current states copied in once.
    """

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
            self.keys = self.values = None
        length = 0 if self.keys is None else self.keys.shape[-2]
        end = length + key_states.shape[-2]
        if not self._writable(key_states, end):
            self._key_room = self._grow(self.keys, key_states, end)
            self._value_room = self._grow(self.values, value_states, end)
        self._key_room[:, :, length:end] = key_states
        self._value_room[:, :, length:end] = value_states
        self.keys, self.values = self._key_room[:, :, :end], self._value_room[:, :, :end]
        return self.keys, self.values

    def get_seq_length(self) -> int:
        return 0 if not self.is_initialized or self.keys is None else self.keys.shape[-2]

    def _writable(self, states: torch.Tensor, end: int) -> bool:
        room = getattr(self, "_key_room", None)
        if room is None or self.keys is None or room.shape[-2] < end:
            return False
        views = self.keys.data_ptr() == room.data_ptr()
        views = views and self.values.data_ptr() == self._value_room.data_ptr()
        return views and self.keys.shape[0] == room.shape[0] == states.shape[0]

    @staticmethod
    def _grow(current: torch.Tensor | None, states: torch.Tensor, end: int) -> torch.Tensor:
        batch, heads, _, dim = states.shape
        room = states.new_empty(batch, heads, end + _SPARE, dim)
        if current is not None and current.shape[-2]:
            room[:, :, : current.shape[-2]] = current
        return room


def _growing_cache(config: Any) -> DynamicCache:
    cache = DynamicCache(config=config)
    for index, layer in enumerate(cache.layers):
        if type(layer) is not DynamicLayer:
            raise NotImplementedError("only full-attention models are batched continuously")
        cache.layers[index] = GrowingLayer()
    return cache


@dataclass
class DecodeResult:
    """What one request generated.

    Attributes:
        tokens (`list[int]`): The new token ids, the EOS id that ended the row included.
        finish_reason (`str`): `"eos"`, `"stop"` (a stop string completed) or `"length"`.
        logprobs (`list[float] | None`): Log-probability of each token (see the module
            docstring), or `None` unless asked for.
        hidden (`torch.Tensor | None`): With `capture_layer`, the hidden states that entered
            that layer for every token the model was fed, `[len(prompt) + len(tokens) - 1,
            hidden]` (the prompt, then each new token but the last); else `None`.
    """

    tokens: list[int]
    finish_reason: str
    logprobs: list[float] | None = None
    hidden: torch.Tensor | None = None


@dataclass
class _Row:
    """One request: its settings and what it has generated so far."""

    ticket: int
    prompt: list[int]
    max_new_tokens: int
    temperature: float
    top_p: float
    stop_strings: tuple[str, ...]
    generator: torch.Generator | None
    want_logprobs: bool
    tool_names: tuple[str, ...] = ()
    tokens: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    finish_reason: str | None = None
    hidden: list[torch.Tensor] = field(default_factory=list)  # with capture_layer, in order
    draft: tuple[int, ...] = ()  # the reply's expected start (`DecodeEngine.submit`)

    def result(self) -> DecodeResult:
        logprobs = self.logprobs if self.want_logprobs else None
        hidden = torch.cat(self.hidden) if self.hidden else None
        return DecodeResult(self.tokens, self.finish_reason or "length", logprobs, hidden)


def row_generators(seed: int | torch.Generator | None, count: int) -> list[torch.Generator]:
    """One CPU generator per row, seeded from `seed` (so rows draw independent streams).

    Args:
        seed (`int | torch.Generator | None`): A seed, a generator to draw the row seeds
            from, or `None` for fresh nondeterministic seeds. The global RNG is not touched.
        count (`int`): How many rows.

    Returns:
        `list[torch.Generator]`: Row `i`'s generator depends only on `seed` and `i`.

    Example:
        >>> first, _ = row_generators(7, 2)
        >>> alone = row_generators(7, 1)[0]
        >>> torch.rand(1, generator=first).item() == torch.rand(1, generator=alone).item()
        True
    """
    if seed is None:
        seed = torch.Generator().seed()  # nondeterministic, leaves the global RNG alone
    source = seed if isinstance(seed, torch.Generator) else torch.Generator().manual_seed(seed)
    seeds = torch.randint(0, 2**62, (count,), generator=source).tolist()
    return [torch.Generator().manual_seed(s) for s in seeds]


class DecodeEngine:
    """A continuous batch over one causal LM: `submit` requests, call `step` until idle.

    Args:
        model: A Hugging Face causal LM whose forward takes `cache`, `position_ids` and
            `logits_to_keep` (Llama-style models in transformers 5) with full-attention layers.
        eos_ids (`Sequence[int]`): Token ids that end a row (kept as its last token).
        tokenizer (*optional*): Decodes the tail of a row to check its stop strings; needed
            only for requests with stop strings.
        max_batch (`int`): Most rows decoding at once; later requests wait for a free slot.
        prefix_cache (`int`): Keep the keys and values of this many finished rows (prompt and
            reply); a new prompt that starts with one of them prefills only what follows the
            common prefix (a conversation's next step). 0: off. Only for a model whose
            weights do not change between requests.
        capture_layer (`int`, *optional*): Record, for each request, the hidden states that
            enter this decoder layer (`DecodeResult.hidden`): what a trainer whose layers
            below it are frozen needs to run only the layers above. Not with `prefix_cache`.

    Example:
        >>> engine = DecodeEngine(model, eos_ids=[2], max_batch=4)  # doctest: +SKIP
        >>> ticket = engine.submit([1, 5, 9], max_new_tokens=4)  # doctest: +SKIP
        >>> while not engine.idle:  # doctest: +SKIP
        ...     done = engine.step()  # {ticket: DecodeResult} of the rows that finished
    """

    def __init__(
        self,
        model: Any,
        *,
        eos_ids: Sequence[int],
        tokenizer: Any = None,
        max_batch: int = 8,
        prefix_cache: int = 0,
        capture_layer: int | None = None,
    ) -> None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        if capture_layer is not None and prefix_cache:
            raise ValueError("capture_layer needs prefix_cache=0 (a stored prefix keeps no states)")
        if capture_layer is not None and not 0 <= capture_layer < len(_decoder_layers(model)):
            raise ValueError(f"capture_layer {capture_layer} is not a layer of the model")
        self.capture_layer = capture_layer
        use_decode_attention(model)
        self.model = model
        # built at the first decoding step, on the thread that steps (packing runs oneDNN: a
        # second thread with an OpenMP team makes every step slower, see `decode_worker`)
        self._fused: Any = _NOT_BUILT
        self.prefix_cache = prefix_cache
        self._prefixes: OrderedDict[tuple[int, ...], list[tuple[torch.Tensor, ...]]] = OrderedDict()
        self.eos_ids = frozenset(int(i) for i in eos_ids)
        self.tokenizer = tokenizer
        self.max_batch = max_batch
        self._waiting: deque[_Row] = deque()
        self._lock = threading.Lock()  # guards `_waiting` and the ticket counter
        self._next_ticket = 0
        self._names: Any = None  # ToolNameFilter, built for the first row with tool names
        self.steps = 0  # decoding steps run (counters for benchmarks and progress reports)
        self.tokens = 0  # tokens chosen, the one after each prefill included
        self.accepted = 0  # draft tokens accepted (`submit(draft=...)`), counted in `tokens`
        self._reset_batch()

    def _reset_batch(self) -> None:
        self._rows: list[_Row] = []
        self._cache: DynamicCache | None = None
        self._mask: torch.Tensor | None = None  # [rows, cached columns], 0 on padding
        self._positions: torch.Tensor | None = None  # [rows], position of the pending token
        self._pending: torch.Tensor | None = None  # [rows], last chosen token, not yet cached

    @property
    def idle(self) -> bool:
        """Whether no request is running or waiting."""
        with self._lock:
            return not self._rows and not self._waiting

    @property
    def active_rows(self) -> int:
        """How many rows are decoding now."""
        return len(self._rows)

    def submit(
        self,
        prompt: Sequence[int],
        *,
        max_new_tokens: int,
        stop_strings: Sequence[str] = (),
        temperature: float = 0.0,
        top_p: float = 1.0,
        generator: torch.Generator | None = None,
        return_logprobs: bool = False,
        tool_names: Sequence[str] = (),
        draft: Sequence[int] = (),
    ) -> int:
        """Queue one prompt; it joins the batch at a coming `step`. Safe from any thread.

        Args:
            prompt (`Sequence[int]`): Token ids (at least one).
            max_new_tokens (`int`): At most this many new tokens.
            stop_strings (`Sequence[str]`): The row ends once its decoded text contains one.
            temperature (`float`): 0 for greedy, else the sampling temperature.
            top_p (`float`): Nucleus sampling mass (1.0: off); ignored when greedy.
            generator (`torch.Generator`, *optional*): CPU generator the row samples from;
                a fresh unseeded one when `None`.
            return_logprobs (`bool`): Record each token's log-probability.
            tool_names (`Sequence[str]`): When given, a tool step may only name one of these
                (`mads_bench.tool_constraint`); needs the tokenizer.
            draft (`Sequence[int]`): Token ids the reply is expected to start with (a nearby
                policy's reply to the same prompt). The prefill runs them too, and the row
                takes its tokens from that one pass for as long as each is the token it
                chooses (greedy, sampled from its generator, filtered by its tool names: the
                same choice, from the same logits, as a decoding step would make); from the
                first token it chooses otherwise it decodes as usual. The reply does not
                depend on the draft (up to floating-point differences between the shapes of
                the passes); a good draft saves a decoding step per token. Not with
                `capture_layer`.

        Returns:
            `int`: The ticket under which `step` reports the result.

        Raises:
            `ValueError`: On an empty prompt, `max_new_tokens < 1`, a negative temperature, a
                `top_p` outside (0, 1], stop strings or tool names without a tokenizer, or a
                draft with `capture_layer`.
        """
        if not prompt:
            raise ValueError("prompt must hold at least one token id")
        if max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
        if temperature < 0 or not 0 < top_p <= 1:
            raise ValueError(f"need temperature >= 0 and 0 < top_p <= 1, got {temperature}/{top_p}")
        stops = tuple(s for s in stop_strings if s)
        if (stops or tool_names) and self.tokenizer is None:
            raise ValueError("stop strings and tool names need a tokenizer")
        if draft and self.capture_layer is not None:
            raise ValueError("a draft needs capture_layer=None (its rejected tokens have states)")
        if temperature > 0 and generator is None:
            generator = row_generators(None, 1)[0]
        with self._lock:
            ticket = self._next_ticket
            self._next_ticket += 1
            self._waiting.append(
                _Row(ticket, list(prompt), max_new_tokens, float(temperature), float(top_p),
                     stops, generator, return_logprobs, tuple(tool_names),
                     draft=tuple(draft[: max_new_tokens - 1]))
            )  # fmt: skip
        return ticket

    def step(self) -> dict[int, DecodeResult]:
        """Admit waiting requests into free slots, then decode one token for every row.

        Returns:
            `dict[int, DecodeResult]`: The requests that finished during this step.
        """
        finished: dict[int, DecodeResult] = {}
        admitted: dict[tuple[int, ...], tuple[list[tuple[torch.Tensor, ...]], Any]] = {}
        with torch.inference_mode():
            while len(self._rows) < self.max_batch:
                with self._lock:
                    row = self._waiting.popleft() if self._waiting else None
                if row is None:
                    break
                self._admit(row, finished, admitted)
            if self._rows:
                self._decode_step(finished)
        return finished

    def cancel_all(self) -> list[int]:
        """Drop every running and waiting request (e.g. after a failed step).

        Returns:
            `list[int]`: Their tickets.
        """
        with self._lock:
            tickets = [r.ticket for r in self._rows] + [r.ticket for r in self._waiting]
            self._waiting.clear()
            self._reset_batch()
        return tickets

    def _admit(
        self,
        row: _Row,
        finished: dict[int, DecodeResult],
        admitted: dict[tuple[int, ...], tuple[list[tuple[torch.Tensor, ...]], Any]],
    ) -> None:
        """Prefill `row` alone (with its draft) and merge it into the batch. A prompt already
        prefilled in this step (a GRPO group's copies of one prompt) reuses its keys and
        values: only its last token is run again."""
        device = self.model.device
        cache = _growing_cache(self.model.config)
        key = tuple(row.prompt)
        if key in admitted:
            states, hidden = admitted[key]
            start = _fill(cache, states, len(row.prompt) - 1)
            row.hidden = [] if hidden is None else [hidden[:start]]
        else:
            start = self._reuse_prefix(row.prompt, cache)
        ids = torch.tensor([row.prompt[start:] + list(row.draft)], device=device)
        captured: list[torch.Tensor] = []
        with self._capturing(captured):
            output = self.model(
                input_ids=ids, cache=cache, use_cache=True, logits_to_keep=len(row.draft) + 1
            )
        row.hidden += [states[0] for states in captured]  # [1, new tokens, hidden]
        length = len(row.prompt)
        if key not in admitted and length > _MIN_PREFIX:
            states = [(layer.keys[:, :, :length].clone(), layer.values[:, :, :length].clone())
                      for layer in cache.layers]  # fmt: skip
            admitted[key] = (states, row.hidden[0] if row.hidden else None)
        for index in range(len(row.draft) + 1):  # the draft's tokens while the row agrees
            token = self._choose([row], output.logits[:, index, :])[0]
            self.tokens += 1
            if self._record(row, token):
                self._store_prefix(row, cache.layers, 0, slice(0, length + len(row.tokens) - 1))
                finished[row.ticket] = row.result()
                return
            if index == len(row.draft) or token != row.draft[index]:
                break
            self.accepted += 1
        length += len(row.tokens) - 1  # the prompt and the accepted tokens are in the cache
        for layer in cache.layers:  # drop the draft's rejected tail
            layer.keys, layer.values = layer.keys[:, :, :length], layer.values[:, :, :length]
        mask = torch.ones(1, length, dtype=torch.long, device=device)
        pending = torch.tensor([token], device=device)
        position = torch.tensor([length], device=device)
        if self._cache is None:
            self._cache, self._mask, self._pending, self._positions = cache, mask, pending, position
        else:
            self._merge(cache, mask)
            self._pending = torch.cat([self._pending, pending])
            self._positions = torch.cat([self._positions, position])
        self._rows.append(row)

    def _merge(self, cache: DynamicCache, mask: torch.Tensor) -> None:
        """Append a one-row cache to the batch's, left-padding the shorter of the two."""
        width = max(self._mask.shape[1], mask.shape[1])
        for mine, theirs in zip(self._cache.layers, cache.layers, strict=True):
            mine.keys = torch.cat([_left_pad(mine.keys, width), _left_pad(theirs.keys, width)])
            mine.values = torch.cat(
                [_left_pad(mine.values, width), _left_pad(theirs.values, width)]
            )
        self._mask = torch.cat([_left_pad(self._mask, width), _left_pad(mask, width)])

    def _decode_step(self, finished: dict[int, DecodeResult]) -> None:
        ones = torch.ones(len(self._rows), 1, dtype=self._mask.dtype, device=self._mask.device)
        self._mask = torch.cat([self._mask, ones], dim=1)
        captured: list[torch.Tensor] = []
        if self._fused is _NOT_BUILT:
            self._fused = fused_decoder(self.model)  # None: steps use the model's forward
        if self._fused is not None:
            logits = self._fused(self._pending, self._positions, self._mask, self._cache,
                                 capture=captured if self.capture_layer is not None else None,
                                 capture_layer=self.capture_layer or 0)  # fmt: skip
        else:
            with self._capturing(captured):
                logits = self.model(
                    input_ids=self._pending[:, None],
                    attention_mask=self._mask,
                    position_ids=self._positions[:, None],
                    cache=self._cache,
                    use_cache=True,
                ).logits[:, -1, :]
        if captured:  # [rows, 1, hidden] or [rows, hidden]: one state per row
            for row, state in zip(self._rows, captured[0].reshape(len(self._rows), 1, -1),
                                  strict=True):  # fmt: skip
                row.hidden.append(state)
        tokens = self._choose(self._rows, logits)
        self.steps += 1
        self.tokens += len(tokens)
        keep = [i for i, (row, token) in enumerate(zip(self._rows, tokens, strict=True))
                if not self._record(row, token)]  # fmt: skip
        for index, row in enumerate(self._rows):
            if row.finish_reason is not None:
                finished[row.ticket] = row.result()
                width = len(row.prompt) + len(row.tokens) - 1
                self._store_prefix(row, self._cache.layers, index, slice(-width, None))
        self._pending = torch.tensor(tokens, device=self._pending.device)
        self._positions = self._positions + 1
        if len(keep) < len(self._rows):
            self._select(keep)

    @contextlib.contextmanager
    def _capturing(self, into: list[torch.Tensor]) -> Iterator[None]:
        """While active, append the hidden states entering `capture_layer` to `into`
        (`[1, tokens, hidden]` of a one-row prefill, `[rows, 1, hidden]` of a step)."""
        if self.capture_layer is None:
            yield
            return

        def hook(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            into.append(args[0] if args else kwargs["hidden_states"])

        layer = _decoder_layers(self.model)[self.capture_layer]
        handle = layer.register_forward_pre_hook(hook, with_kwargs=True)
        try:
            yield
        finally:
            handle.remove()

    def _store_prefix(self, row: _Row, layers: Sequence[Any], index: int, columns: slice) -> None:
        """Store a finished row's cached keys and values under its token ids: its prompt and
        all but its last token (never fed back), which are the `columns` of row `index` of
        the cache `layers` (the batch's, right-aligned; or the row's own, from column 0)."""
        if not self.prefix_cache:
            return
        tokens = tuple(row.prompt + row.tokens[:-1])
        self._prefixes[tokens] = [
            (layer.keys[index : index + 1, :, columns].clone(),
             layer.values[index : index + 1, :, columns].clone())
            for layer in layers
        ]  # fmt: skip
        self._prefixes.move_to_end(tokens)
        while len(self._prefixes) > self.prefix_cache:
            self._prefixes.popitem(last=False)

    def _reuse_prefix(self, prompt: list[int], cache: DynamicCache) -> int:
        """Fill `cache` with the longest stored prefix of `prompt` (at least `_MIN_PREFIX`
        tokens, at most all but its last); returns how many tokens it covers."""
        best, length = None, 0
        for tokens in self._prefixes:
            common = _common_prefix(tokens, prompt)
            if common > length:
                best, length = tokens, common
        length = min(length, len(prompt) - 1)
        if best is None or length < _MIN_PREFIX:
            return 0
        self._prefixes.move_to_end(best)
        return _fill(cache, self._prefixes[best], length)

    def _select(self, keep: list[int]) -> None:
        """Keep only the rows `keep`, then drop the columns that are padding in all of them."""
        if not keep:
            self._reset_batch()
            return
        self._rows = [self._rows[i] for i in keep]
        index = torch.tensor(keep, device=self._mask.device)
        self._cache.batch_select_indices(index)
        self._mask, self._pending = self._mask[index], self._pending[index]
        self._positions = self._positions[index]
        start = int(self._mask.any(dim=0).to(torch.int8).argmax())  # first column anyone uses
        if start > 0:
            for layer in self._cache.layers:
                layer.keys, layer.values = layer.keys[:, :, start:], layer.values[:, :, start:]
            self._mask = self._mask[:, start:]

    def _choose(self, rows: list[_Row], logits: torch.Tensor) -> list[int]:
        """The next token of each row: argmax, or a sample from its own generator (among
        the tokens its tool names allow, where it is writing one)."""
        logits = logits.float()
        allowed = self._name_filter(rows, logits)
        tokens = allowed.argmax(dim=-1).tolist()
        want_logprobs = any(r.want_logprobs for r in rows)
        temperatures = torch.tensor([r.temperature or 1.0 for r in rows], device=logits.device)
        scaled = logits / temperatures[:, None]
        logprobs = torch.log_softmax(scaled, dim=-1) if want_logprobs else None
        for i, row in enumerate(rows):
            if row.temperature > 0:
                tokens[i] = _sample(allowed[i] / row.temperature, row.top_p, row.generator)
        if logprobs is not None:
            picked = logprobs.gather(1, torch.tensor(tokens, device=logits.device)[:, None])
            for row, value in zip(rows, picked[:, 0].tolist(), strict=True):
                row.logprobs.append(value)
        return tokens

    def _name_filter(self, rows: list[_Row], logits: torch.Tensor) -> torch.Tensor:
        """`logits` with every token a row may not write set to -inf: inside a tool name,
        those that cannot continue one of its `tool_names` (`mads_bench.tool_constraint`)."""
        filtered = logits
        for i, row in enumerate(rows):
            if not row.tool_names:
                continue
            if self._names is None:
                from mads_bench.tool_constraint import ToolNameFilter

                self._names = ToolNameFilter(self.tokenizer)
            allowed = self._names.allowed(self._names.text(row.tokens), row.tool_names)
            if allowed is None:
                continue
            if filtered is logits:
                filtered = logits.clone()
            index = torch.tensor(allowed, device=logits.device)
            kept = filtered[i, index]
            filtered[i] = float("-inf")
            filtered[i, index] = kept
        return filtered

    def _record(self, row: _Row, token: int) -> bool:
        """Append `token` to `row`; return whether the row is finished."""
        row.tokens.append(token)
        if token in self.eos_ids:
            row.finish_reason = "eos"
        elif row.stop_strings and _ends_with_stop(row, self.tokenizer):
            row.finish_reason = "stop"
        elif len(row.tokens) >= row.max_new_tokens:
            row.finish_reason = "length"
        return row.finish_reason is not None


def _decoder_layers(model: Any) -> Any:
    """The decoder layers of a transformers causal LM (`model.model.layers`)."""
    layers = getattr(getattr(model, "model", None), "layers", None)
    if layers is None:
        raise ValueError(f"capture_layer: {type(model).__name__} has no `model.layers`")
    return layers


def _fill(cache: DynamicCache, states: list[tuple[torch.Tensor, ...]], length: int) -> int:
    """Start a one-row `cache` with the first `length` columns of stored keys and values."""
    for layer, (keys, values) in zip(cache.layers, states, strict=True):
        layer.lazy_initialization(keys, values)
        layer.keys, layer.values = keys[:, :, :length], values[:, :, :length]
    return length


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


def _left_pad(tensor: torch.Tensor, width: int) -> torch.Tensor:
    """Zero-pad the sequence dimension (-2 for keys/values, -1 for a mask) on the left."""
    dim = -1 if tensor.dim() == 2 else -2
    missing = width - tensor.shape[dim]
    if missing == 0:
        return tensor
    pad = (missing, 0) if dim == -1 else (0, 0, missing, 0)
    return torch.nn.functional.pad(tensor, pad)


def _sample(scaled: torch.Tensor, top_p: float, generator: torch.Generator) -> int:
    probs = torch.softmax(scaled, dim=-1)
    if top_p < 1.0:
        sorted_probs, order = probs.sort(descending=True)
        # drop a token when the tokens more likely than it already hold top_p of the mass
        drop = sorted_probs.cumsum(-1) - sorted_probs >= top_p
        probs = probs.scatter(0, order[drop], 0.0)
    # an exponential race: the token with the smallest Exp(1) / p wins with probability p
    # (what `torch.multinomial` computes, whose generator-driven exponentials cost 0.75 ms per
    # 49k-token draw on CPU against 0.17 ms here); unlike an inverse-CDF draw, it is as
    # insensitive to rounding in `probs` as an argmax, so a row's sample does not move with
    # the other rows of its batch
    probs = probs.cpu()
    race = torch.rand(probs.shape, generator=generator).neg_().log1p_().neg_()  # -log(1 - U)
    return int(torch.where(probs > 0, probs / race, -1.0).argmax())


def _ends_with_stop(row: _Row, tokenizer: Any) -> bool:
    # A stop string first appears in a suffix that ends with the newest token; a token decodes
    # to at least one character (the margin covers the few that decode to nothing).
    window = max(len(s) for s in row.stop_strings) + 4
    tail = tokenizer.decode(row.tokens[-window:], skip_special_tokens=False)
    return any(s in tail for s in row.stop_strings)


def decode(
    model: Any,
    prompts: Sequence[Sequence[int]],
    *,
    max_new_tokens: int | Sequence[int],
    eos_ids: Sequence[int],
    stop_strings: Sequence[str] = (),
    tokenizer: Any = None,
    temperature: float = 0.0,
    top_p: float = 1.0,
    generator: int | torch.Generator | None = None,
    max_batch: int = 8,
    return_logprobs: bool = False,
    capture_layer: int | None = None,
    tool_names: Sequence[Sequence[str]] | None = None,
    drafts: Sequence[Sequence[int]] | None = None,
) -> list[DecodeResult]:
    """Generate for every prompt with continuous batching; results in input order.

    Args:
        model: A Hugging Face causal LM (see `DecodeEngine`).
        prompts (`Sequence[Sequence[int]]`): Token ids of each prompt.
        max_new_tokens (`int | Sequence[int]`): One bound for all, or one per prompt.
        eos_ids (`Sequence[int]`): Token ids that end a row.
        stop_strings (`Sequence[str]`): A row ends once its decoded text contains one.
        tokenizer (*optional*): Needed with stop strings.
        temperature (`float`): 0 for greedy, else sampling temperature.
        top_p (`float`): Nucleus sampling mass (1.0: off).
        generator (`int | torch.Generator | None`): Seed (or generator) the per-row generators
            are drawn from (`row_generators`); the same seed gives the same samples, whatever
            `max_batch`, up to floating-point differences between batch shapes.
        max_batch (`int`): Most rows decoding at once.
        return_logprobs (`bool`): Also return each token's log-probability.
        capture_layer (`int`, *optional*): Also return the hidden states entering this
            decoder layer (`DecodeResult.hidden`).
        tool_names (`Sequence[Sequence[str]]`, *optional*): Per prompt, the only tool names
            its tool steps may write (see `DecodeEngine.submit`); needs the tokenizer.
        drafts (`Sequence[Sequence[int]]`, *optional*): Per prompt, the tokens its reply is
            expected to start with (see `DecodeEngine.submit`): faster where they hold, the
            same replies.

    Returns:
        `list[DecodeResult]`: One per prompt.

    Example:
        >>> out = decode(model, [[1, 2], [3]], max_new_tokens=[4, 2], eos_ids=[0])  # doctest: +SKIP
        >>> [len(r.tokens) for r in out]  # doctest: +SKIP
        [4, 2]
    """
    bounds = [max_new_tokens] * len(prompts) if isinstance(max_new_tokens, int) else max_new_tokens
    if len(bounds) != len(prompts):
        raise ValueError(f"{len(bounds)} max_new_tokens for {len(prompts)} prompts")
    names = [()] * len(prompts) if tool_names is None else list(tool_names)
    if len(names) != len(prompts):
        raise ValueError(f"{len(names)} tool name lists for {len(prompts)} prompts")
    guesses = [()] * len(prompts) if drafts is None else list(drafts)
    if len(guesses) != len(prompts):
        raise ValueError(f"{len(guesses)} drafts for {len(prompts)} prompts")
    sampled = temperature > 0
    generators = row_generators(generator, len(prompts)) if sampled else [None] * len(prompts)
    engine = DecodeEngine(model, eos_ids=eos_ids, tokenizer=tokenizer, max_batch=max_batch,
                          capture_layer=capture_layer)  # fmt: skip
    tickets = [
        engine.submit(prompt, max_new_tokens=bound, stop_strings=stop_strings,
                      temperature=temperature, top_p=top_p, generator=row_generator,
                      return_logprobs=return_logprobs, tool_names=row_names, draft=guess)
        for prompt, bound, row_generator, row_names, guess in zip(
            prompts, bounds, generators, names, guesses, strict=True
        )
    ]  # fmt: skip
    results: dict[int, DecodeResult] = {}
    while not engine.idle:
        results.update(engine.step())
    return [results[t] for t in tickets]
