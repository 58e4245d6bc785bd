"""The multi-agent simulator (MADS §3.1–3.3): agents, tool backend, runner, validator.

| subpackage / module | holds |
| --- | --- |
| `agents` | user, assistant and tool agents behind one `respond(view)` protocol |
| `agents/*.json` | the agents' wording as data (phrase sets, prompt text, cue words) |
| `tool_backend`, `adversity` | the stateful tool backend and its seeded execution adversities |
| `environment` | one conversation as an environment (loaded domain, scenario, seed; reset/step) |
| `runner` | the conversation loop and its rules (called by `environment` alone) |
| `parallel`, `simulate_run` | many conversations, sharded, in parallel; to a file |
| `trajectory_io` | append-only, resumable trajectory JSONL |
| `validator` | syntax, faithfulness, role confusion, task success; `validate_run` |
| `validator.rubric` | the one graded outcome of a finished conversation |
| `backends` | the LLM backend registry (`transformers:`, `openai:`, `fake:`): the layer below |
| `importers` | APIGen-MT conversations into Pre-Act trajectories; τ²-bench domains as packs |
| `atod_generation` | ATOD dialogues from SGD goal sequences |
"""
