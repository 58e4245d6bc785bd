"""Rollouts from fast weights sample from the trained policy, and follow it as it trains.

The policy is tiny-lm quantised to NF4 with a LoRA adapter whose B matrices are random (a fresh
adapter is zero, which would hide a wrong merge). The trainer's log-probabilities are those of
the PEFT model in train mode (TRL scores completions so; no dropout here).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from transformers import GenerationConfig

from mads_bench.models import load_tokenizer
from mads_bench.training.fast_weights import RolloutWeights, use_rollout_weights
from mads_bench.training.step_rollout import StepRollout


def _policy(path, seed: int = 0, layers: list[int] | None = None):
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig

    torch.manual_seed(seed)
    quantization = BitsAndBytesConfig(
        load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=torch.float32,
    )  # fmt: skip
    model = AutoModelForCausalLM.from_pretrained(
        path, quantization_config=quantization, device_map="cpu",
        dtype=torch.float32,
    )  # fmt: skip
    lora = LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0, task_type="CAUSAL_LM",
                      target_modules=["q_proj", "v_proj", "down_proj"],
                      layers_to_transform=layers)  # fmt: skip
    model = get_peft_model(model, lora)
    for name, parameter in model.named_parameters():
        if "lora_B" in name:
            torch.nn.init.normal_(parameter, std=0.05)
    return model.train()


def _token_logps(model, ids: torch.Tensor) -> torch.Tensor:
    """Log-probability of each token after the first, as the trainer computes it."""
    with torch.no_grad():
        logits = model(input_ids=ids).logits[:, :-1].float()
    return logits.log_softmax(-1).gather(-1, ids[:, 1:, None])[..., 0]


@pytest.fixture(scope="module")
def policy(tiny_lm_path):
    return _policy(tiny_lm_path)


def test_the_copy_gives_the_trained_policys_log_probabilities(policy) -> None:
    ids = torch.randint(
        0, policy.config.vocab_size, (2, 40), generator=torch.Generator().manual_seed(1)
    )
    trained = _token_logps(policy, ids)
    fp32 = RolloutWeights(policy, dtype=torch.float32)
    # float32: the same weights summed in another order (the 4-bit layer and its adapter)
    assert (_token_logps(fp32.model, ids) - trained).abs().max() < 1e-3
    bf16 = RolloutWeights(policy, dtype=torch.bfloat16)
    # bf16 rounds each weight and activation to 8 bits of mantissa: close, not equal
    diff = (_token_logps(bf16.model, ids) - trained).abs()
    assert diff.mean() < 0.1 and diff.max() < 1.0
    # the adapter matters here: without it the policy is far from the copy
    with policy.disable_adapter():
        base_alone = _token_logps(policy, ids)
    assert (base_alone - trained).abs().max() > 0.05


def test_the_copy_is_refreshed_after_an_optimizer_step_only(tiny_lm_path) -> None:
    policy = _policy(tiny_lm_path, seed=2)
    ids = torch.randint(
        0, policy.config.vocab_size, (1, 30), generator=torch.Generator().manual_seed(3)
    )
    weights = RolloutWeights(policy, dtype=torch.float32)
    assert weights.model_for(0) is weights.model
    with torch.no_grad():
        for name, parameter in policy.named_parameters():
            if "lora_A" in name:
                parameter.add_(0.2)  # what an optimizer step does to the adapter
    trained = _token_logps(policy, ids)
    stale = _token_logps(weights.model_for(0), ids)  # same step: not copied again
    assert (stale - trained).abs().max() > 1e-2
    fresh = _token_logps(weights.model_for(1), ids)
    assert (fresh - trained).abs().max() < 1e-3


def _fake_trainer(policy, tokenizer, max_new: int):
    """What `StepRollout` reads of a `GRPOTrainer` (TRL 1.16 attribute names)."""

    def tokenize(prompts):
        rendered = tokenizer.apply_chat_template(
            prompts, add_generation_prompt=True, tokenize=True, return_dict=True
        )
        return rendered["input_ids"], None, {}

    config = GenerationConfig(
        do_sample=False, max_new_tokens=max_new, pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )  # fmt: skip
    return SimpleNamespace(
        model=policy, processing_class=tokenizer, generation_config=config,
        accelerator=SimpleNamespace(device=torch.device("cpu")),
        state=SimpleNamespace(global_step=0), args=SimpleNamespace(max_completion_length=max_new),
        eos_token_ids=[tokenizer.eos_token_id], _tokenize_prompts=tokenize,
    )  # fmt: skip


def test_step_rollouts_match_the_trained_models_greedy_tokens(
    policy, tiny_lm_path, monkeypatch
) -> None:
    monkeypatch.setenv("MADS_BENCH_BF16", "0")  # float32 copy: greedy tokens must agree
    tokenizer = load_tokenizer(str(tiny_lm_path))
    prompts = [
        [{"role": "user", "content": "Cancel order A-1001, please."}],
        [{"role": "system", "content": "You help with orders."},
         {"role": "user", "content": "Where is my parcel? It is order B-2002 and it is late."}],
    ]  # fmt: skip
    trainer = _fake_trainer(policy, tokenizer, max_new=12)
    out = StepRollout()(prompts, trainer)
    assert out["logprobs"] is None and out["prompt_ids"] == trainer._tokenize_prompts(prompts)[0]
    for prompt, completion in zip(out["prompt_ids"], out["completion_ids"], strict=True):
        with torch.no_grad():
            reference = policy.generate(
                input_ids=torch.tensor([prompt]), generation_config=trainer.generation_config
            )[0, len(prompt) :].tolist()
        assert completion == reference[: len(completion)] and len(completion) >= 1
        assert len(completion) == 12 or completion[-1] == tokenizer.eos_token_id


def test_rollout_weights_setting() -> None:
    cpu = SimpleNamespace(use_cpu=True, use_vllm=False)
    assert use_rollout_weights("auto", cpu) and not use_rollout_weights("trained", cpu)
    assert not use_rollout_weights("copy", SimpleNamespace(use_cpu=False, use_vllm=True))
    from mads_bench.errors import UsageError

    with pytest.raises(UsageError, match="rollout_weights 'fast'"):
        use_rollout_weights("fast", cpu)


def test_conversation_steps_from_the_copy_stop_where_generate_would(
    policy, tiny_lm_path, monkeypatch
) -> None:
    from mads_bench.training.rollout import HFPolicy

    monkeypatch.setenv("MADS_BENCH_BF16", "0")
    tokenizer = load_tokenizer(str(tiny_lm_path))
    trainer = _fake_trainer(policy, tokenizer, max_new=10)
    contexts = [tokenizer("Cancel order A-1001.").input_ids, tokenizer("Hi").input_ids]
    weights = RolloutWeights(policy, dtype=torch.float32)
    free = HFPolicy(trainer, weights, stop_strings=())(contexts, 10)
    stop = tokenizer.decode(free[0][2:4])  # closes at the fourth token of the first row
    rows = HFPolicy(trainer, weights, stop_strings=[stop])(contexts, 10)
    assert rows[0] == free[0][: len(rows[0])] and stop in tokenizer.decode(rows[0])
    assert len(rows[0]) <= 4 and rows[1] == free[1][: len(rows[1])]
    # TRL's sampling settings (temperature, no top-k): samples follow the global seed
    trainer.generation_config = GenerationConfig(
        do_sample=True, temperature=0.6, top_k=0, top_p=1.0, max_new_tokens=10,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
    )  # fmt: skip
    sample = HFPolicy(trainer, weights)
    torch.manual_seed(4)
    first = sample(contexts, 10)
    torch.manual_seed(4)
    assert sample(contexts, 10) == first and all(1 <= len(row) <= 10 for row in first)


def test_constrained_step_rollouts_give_each_row_its_prompts_tools(
    policy, tiny_lm_path, monkeypatch
) -> None:
    import mads_bench.decoding
    from mads_bench.decoding import DecodeResult
    from mads_bench.errors import UsageError
    from mads_bench.training.rollout import HFPolicy

    seen = {}

    def fake_decode(model, prompts, **options):
        seen.update(options)
        return [DecodeResult([7], "length") for _ in prompts]

    monkeypatch.setattr(mads_bench.decoding, "decode", fake_decode)
    tokenizer = load_tokenizer(str(tiny_lm_path))
    system = "Tools (name(arguments)):\n- list_cards(customer_id: string) [read]"
    prompts = [
        [{"role": "system", "content": system}, {"role": "user", "content": "My cards?"}],
        [{"role": "user", "content": "Hello."}],
    ]
    trainer = _fake_trainer(policy, tokenizer, max_new=4)
    out = StepRollout(constrain_tool_names=True)(prompts, trainer)
    assert seen["tool_names"] == [("list_cards",), ()] and out["completion_ids"] == [[7], [7]]
    StepRollout()(prompts, trainer)
    assert seen["tool_names"] is None
    with pytest.raises(UsageError, match="constrain_tool_names"):  # TRL's own generation
        HFPolicy(trainer)([[1, 2]], 4, tool_names=[("list_cards",)])
