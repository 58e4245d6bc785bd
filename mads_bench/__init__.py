"""MADS-Bench: domains, personas, scenarios and the Pre-Act format for tool-using dialogue agents.

The package holds the benchmark itself and the core every other package builds on. The
simulator lives in ``simulation``, GRPO rewards in ``rewards`` and the metrics in
``evaluators``.

| subpackage / module | holds |
| --- | --- |
| `data_model`, `pre_act` | the pydantic data model; the one Pre-Act format |
| `domains`, `catalog`, `database` | domain packs; finding and loading them; their state |
| `personas.yaml`, `generator` | personas; the seeded scenario generator |
| `tau2` | τ²-bench tools (`simulation.importers.tau2` builds their packs) |
| `text` | the value normaliser and the sentence splitter |
| `loading`, `files`, `errors` | YAML/JSON/JSONL reading; safe writes; the error family |
| `embedding` | the one sentence-encoder wrapper (cache, batches, cosines) |
| `models`, `model_builders` | the offline model resolver and the builders of its folders |
| `precision`, `adapters` | dtype choice; LoRA adapters merged for inference |
| `decoding`, `decode_attention`, `decode_worker` | the decode engine; its attention; its thread |
| `atod_data`, `atod_lifecycle` | the ATOD dialogue format and its lifecycle figures |
| `datasets` | trajectories into `trajectories` / `sft` / `grpo` DatasetDicts, cards, Hub |
| `training` | the SFT → GRPO library of `recipes/`, step and conversation rollouts |
| `cli`, `demo`, `demo_budget` | the command line; the end-to-end demo; its time and step budget |
| `manifest` | run manifests (the settings a run was made with) |
"""

__version__ = "0.1.0"
