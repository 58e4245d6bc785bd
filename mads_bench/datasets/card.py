"""The dataset card (README.md): Hub YAML metadata plus statistics computed from the data.

The YAML ``configs:`` block describes the Hub layout that :func:`~mads_bench.datasets.push_dataset`
creates (``DatasetDict.push_to_hub(config_name=c)`` writes ``<c>/<split>-*.parquet``); the
local ``save_to_disk`` folders are read with ``load_mads_dataset`` instead. Every figure in
the prose is counted from the built datasets and the build report, never typed in.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import TYPE_CHECKING

import yaml

from mads_bench.datasets.splits import SPLITS

if TYPE_CHECKING:
    from datasets import DatasetDict

    from mads_bench.datasets.build import BuildReport

_COLUMN_DOCS = {
    "prompt": "messages before the step, `{role, content}`; roles system/user/assistant/tool",
    "completion": "one message `{role: assistant, content: <Pre-Act step>}`",
    "gold_action_type": '"tool" or "say", from the parsed step',
    "gold_tool_name": 'tool name ("" for say)',
    "gold_tool_arguments": 'canonical JSON of the arguments ("" for say)',
    "gold_say": 'user-facing text ("" for tool)',
    "scenario_id": "scenario that was simulated (the split unit)",
    "domain": "domain pack",
    "complexity": "normal, unhappy or impossible",
    "turn_index": "0-based user turn of the step",
    "step_index": "0-based assistant step within the turn",
    "conversation_id": "trajectory id `<scenario>/r<repetition>/s<run seed>`",
    "persona": "persona id of the simulated user",
    "seed": "per-conversation seed",
    "backends": "JSON: backend spec per agent (user, assistant, tool)",
    "end_reason": "done, turn_cap, loop, error or truncated",
    "num_turns": "user turns",
    "num_assistant_steps": "assistant steps",
    "messages": "role, content, turn/step index, tool_call and tool_result (JSON or "
    '""), parse_problems',
    "injections": "adversities applied: kind, turn, tool, call index, seed, detail",
    "verdict": 'validator verdict as JSON ("" when unvalidated)',
}
_UNITS = {"trajectories": "conversation", "sft": "assistant step", "grpo": "assistant step"}


def size_category(n: int) -> str:
    """The Hub ``size_categories`` label for ``n`` examples (e.g. ``1K<n<10K``)."""
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")]
    bounds += [(1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")]
    return next((label for bound, label in bounds if n < bound), "n>10M")


def front_matter(configs: dict[str, DatasetDict], license_id: str = "apache-2.0") -> str:
    """The YAML metadata block (without the ``---`` fences)."""
    largest = max(sum(len(d[s]) for s in d) for d in configs.values())
    meta = {
        "pretty_name": "MADS-Bench simulated dialogues",
        "license": license_id,
        "language": ["en"],
        "task_categories": ["text-generation"],
        "task_ids": ["dialogue-modeling"],
        "size_categories": [size_category(largest)],
        "tags": ["synthetic", "tool-calling", "function-calling", "task-oriented-dialogue"]
        + ["pre-act", "mads"],
        "configs": [
            {
                "config_name": name,
                "data_files": [
                    {"split": split, "path": f"{name}/{split}-*"} for split in configs[name]
                ],
            }
            for name in configs
        ],
    }
    return yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)


def _table(header: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def render_card(
    configs: dict[str, DatasetDict], report: BuildReport, license_id: str | None = None
) -> str:
    """The full README.md: YAML front matter and the prose sections.

    Args:
        configs (`dict[str, DatasetDict]`): the built ``trajectories``/``sft``/``grpo``.
        report (`BuildReport`): selection counts and split settings.
        license_id (`str`, *optional*): Hub licence id. Default: ``cc-by-sa-4.0`` when a
            scripted agent spoke in any conversation (its phrasebank is mined from SGD,
            CC BY-SA 4.0, so the dataset shares alike), else ``apache-2.0``.

    Returns:
        `str`: markdown with ``---`` fenced YAML at the top.
    """
    cols = ["scenario_id", "domain", "complexity", "conversation_id", "backends"]
    convs = {
        s: configs["trajectories"][s].select_columns([*cols, "injections", "verdict"]).to_list()
        for s in SPLITS
    }
    everything = convs["train"] + convs["test"]
    n_conv, n_scen = len(everything), len({c["scenario_id"] for c in everything})
    unhappy = sum(c["complexity"] != "normal" for c in everything)
    steps = {s: len(configs["sft"][s]) for s in SPLITS}
    domains = sorted({c["domain"] for c in everything})
    scripted = _uses_scripted_agents(everything)
    license_id = license_id or ("cc-by-sa-4.0" if scripted else "apache-2.0")
    out = [f"---\n{front_matter(configs, license_id)}---\n", "# MADS-Bench simulated dialogues\n"]
    out.append(
        f"{n_conv} simulated task-oriented conversations ({n_scen} scenarios, {len(domains)} "
        f"domains: {', '.join(domains)}) with {sum(steps.values())} assistant steps in the "
        f"Pre-Act format (`<think>`, `<plan>`, one `<action>`). {unhappy} of {n_conv} "
        f"conversations ({_pct(unhappy, n_conv)}) are unhappy-path or impossible scenarios "
        "(injected user behaviors or tool failures). Built with the MADS-Bench framework "
        "(multi-agent simulation after the MADS paper); this card is generated from the data.\n"
    )
    out.append("## Configs\n")
    out.append(
        _table(
            ["config", "one row per", "train", "test"],
            [
                [f"`{n}`", _UNITS[n], len(configs[n]["train"]), len(configs[n]["test"])]
                for n in configs
            ],
        )
    )
    out.append(
        "\n\n- `trajectories`: whole conversations with scenario metadata, injections and the "
        "validator verdict.\n- `sft`: TRL conversational prompt-completion rows: everything "
        "before a step as the prompt, the step as the completion.\n- `grpo`: the same prompts "
        "with the gold action of the step, for verifiable rewards (action type, tool call, "
        "semantic similarity).\n\n"
        f"Steps the Pre-Act parser flagged are left out of `sft`/`grpo`: "
        f"{report.excluded_steps} step(s) in this build.\n\n" + _CONTEXT_NOTE[report.context]
    )
    out.append("## Columns\n")
    for name, dataset in configs.items():
        feats = dataset["train"].features
        rows = [[f"`{c}`", _type_name(feats[c]), _COLUMN_DOCS.get(c, "")] for c in feats]
        out.append(f"### `{name}`\n\n" + _table(["column", "type", "meaning"], rows) + "\n")
    out.append(_splits_section(convs, steps, report))
    out.append(_behaviors_section(convs))
    out.append(_generation_section(everything, report))
    out.append(_variety_section(report))
    out.append(_LIMITATIONS)
    out.append(_licence_section(license_id, scripted))
    return "\n".join(out)


def _uses_scripted_agents(conversations: list[dict]) -> bool:
    """Whether a scripted user or assistant spoke in any of the conversations."""
    for conversation in conversations:
        backends = json.loads(conversation["backends"] or "{}")
        if any(backends.get(role) == "scripted" for role in ("user", "assistant")):
            return True
    return False


def _licence_section(license_id: str, scripted: bool) -> str:
    text = f"## Licence\n\n`{license_id}`."
    if scripted:
        text += (
            " The scripted agents' wording draws on phrases mined from the Schema-Guided "
            "Dialogue dataset (Rastogi et al., AAAI 2020; train split, delexicalised by its "
            "dialogue-act annotations and refilled with the scenarios' values), which is "
            "licensed CC BY-SA 4.0; this dataset is shared under the same licence."
        )
    return text + "\n"


_CONTEXT_NOTE = {
    "full": "Step prompts: `full` context (the conversation exactly as simulated).\n",
    "compact": "Step prompts: `compact` context (tools listed by signature without "
    "descriptions; assistant steps of earlier turns reduced to their action). The "
    "`trajectories` config keeps the full text.\n",
}


def _type_name(feature: object) -> str:
    text = re.sub(r"Value\('(\w+)'\)", r"\1", repr(feature))
    return text.replace("List(", "list(").replace("|", "\\|")


def _splits_section(convs: dict, steps: dict[str, int], report: BuildReport) -> str:
    held = ", ".join(report.held_out_domains) or "none"
    text = [
        "## Splits\n",
        f"Split by scenario (no scenario in both splits). Held-out domain(s), test only: {held}. "
        f"Of the other scenarios a seeded share of {report.test_size} goes to test, stratified "
        f"by domain and complexity (seed {report.seed}).\n",
    ]
    for key in ("domain", "complexity"):
        values = sorted({c[key] for s in SPLITS for c in convs[s]})
        rows = []
        for value in values:
            row: list[object] = [value]
            for split in SPLITS:
                picked = [c for c in convs[split] if c[key] == value]
                row += [len(picked), len({c["scenario_id"] for c in picked})]
            rows.append(row)
        header = [key, "train conv.", "train scen.", "test conv.", "test scen."]
        text.append(_table(header, rows) + "\n")
    rows = []
    for split in SPLITS:
        n = len(convs[split])
        unhappy = sum(c["complexity"] != "normal" for c in convs[split])
        rows.append([split, n, steps[split], unhappy, _pct(unhappy, n)])
    text.append(
        _table(["split", "conversations", "steps", "unhappy or impossible", "share"], rows) + "\n"
    )
    return "\n".join(text)


def _behaviors_section(convs: dict) -> str:
    per_split = {s: Counter() for s in SPLITS}
    totals: Counter[str] = Counter()
    for split in SPLITS:
        for conv in convs[split]:
            kinds = [i["kind"] for i in conv["injections"]]
            totals.update(kinds)
            per_split[split].update(set(kinds))
    rows = [[k, per_split["train"][k], per_split["test"][k], totals[k]] for k in sorted(totals)]
    header = ["behavior", "train conv.", "test conv.", "injections (all)"]
    body = _table(header, rows) if rows else "No injections were recorded."
    return "## Behaviors and injections\n\n" + body + "\n"


def _generation_section(everything: list[dict], report: BuildReport) -> str:
    backends = Counter(c["backends"] for c in everything)
    run_seeds = Counter(_run_seed(c["conversation_id"]) for c in everything)
    judges = Counter(json.loads(c["verdict"]).get("judge", "?") for c in everything if c["verdict"])
    rows = [[f"`{b}`", n] for b, n in sorted(backends.items())]
    seeds = ", ".join(f"{s} ({n})" for s, n in sorted(run_seeds.items(), key=str))
    validator = (
        ", ".join(f"`{j}` ({n} conversations)" for j, n in sorted(judges.items()))
        if judges
        else "none (built with --include-unvalidated)"
    )
    return (
        "## How it was generated\n\n"
        "User, assistant and tool agents simulate each scenario (MADS §3.1); the tool agent "
        "executes calls against the scenario's seeded backend state and applies execution "
        "adversities; the user agent acts out the conversational behaviors.\n\n"
        + _table(["backends (per agent)", "conversations"], rows)
        + f"\n\nRun seeds (conversations): {seeds}.\n\nValidator judge: {validator}.\n\n"
        f"Input selection: {report.selection.summary()}.\n"
    )


def _variety_section(report: BuildReport) -> str:
    from evaluators.realism import realism_stats

    used = list(report.selection.used)
    if not used:
        return ""
    stats = realism_stats(used)
    rows = [
        [f"`{kind}`", f["utterances"], f"{f['distinct_1']:.3f}", f"{f['distinct_2']:.3f}",
         f"{f['distinct_3']:.3f}", f"{f['exact_dup']:.3f}", f"{f['mean_tokens']:.1f}"]
        for kind, f in stats["texts"].items()
    ]  # fmt: skip
    same = stats["identical_repetitions"]
    return (
        "## Language variety\n\n"
        "`mads-bench stats` on the conversations used (distinct-n and exact duplicates over a "
        "seeded sample of at most 1,500 utterances per kind; word tokens). For scale: SGD dev "
        "user turns give distinct-2 0.369, exact-dup 0.096 with the same definitions.\n\n"
        + _table(
            [
                "text",
                "utterances",
                "distinct-1",
                "distinct-2",
                "distinct-3",
                "exact-dup",
                "mean tokens",
            ],
            rows,
        )  # fmt: skip
        + f"\n\n{same['scenarios']} of {same['of_repeated']} scenarios simulated more than once "
        "have identical repetitions.\n"
    )


def _run_seed(conversation_id: str) -> str:
    match = re.search(r"/s(-?\d+)$", conversation_id)
    return match.group(1) if match else "unknown"


_LIMITATIONS = """## Limitations

- Simulated, not human, dialogues: with the scripted backends the wording is templated and
  the assistant follows the scenario's gold workflow, so the language is less varied than
  real users and LLM agents produce.
- Tool results come from a deterministic backend over hand-written seed data; execution
  failures are injected, not observed.
- The validator's rule-based checks can miss subtle faithfulness errors; rejected
  conversations are not in this dataset (the build counts them above).
- Small: meant for method development and for the MADS-Bench evaluations, not as a broad
  training corpus. The held-out domain only measures cross-domain transfer on one domain.
- The backend's final state is not included; it stays in the trajectory JSONL files.
"""
