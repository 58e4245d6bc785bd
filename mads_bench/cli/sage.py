"""``mads-bench sage``: build SGD benchmark slices, run SAGE, compare evaluators, calibrate S2.

    mads-bench sage bench --out DIR [--sgd DIR] [--n 300] [--seed 0] [--evaluate]
    mads-bench sage run --turns T.jsonl --schema schema.json --out V.jsonl [--labels L.jsonl]
                        [--config core|llm --judge SPEC] [--text-only] [--nli MODEL] [--gates G]
    mads-bench sage baseline --kind geval|single|single-state --judge SPEC --turns T.jsonl
                             --schema schema.json --out V.jsonl [--labels L.jsonl]
    mads-bench sage compare --labels L.jsonl --a V1.jsonl --b V2.jsonl
    mads-bench sage calibrate [--sgd DIR] [--n 300] [--seed 1] [--out G.json]
    mads-bench sage train-tagger --out W.safetensors [--sgd-train DIR] [--dialogues 12000]
    mads-bench sage build-lexicon --out L.json [--sgd-train DIR]
    mads-bench sage sgdx [--sgd DIR] [--sgdx DIR] [--n 300] [--seed 0] [--acts] [--out R.json]

``--schema`` is an SGD ``schema.json`` or ``mads:<domain>`` (the domain's tool specs).
``--encoder`` (bench, run, calibrate, train-tagger, sgdx) picks S2's sentence encoder:
``minilm-static`` (default, fast) or ``minilm``; the calibrated gates and the bundled act tagger
follow it (``--gates`` / ``--tagger`` override them).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from mads_bench.cli.args import (
    SGD_DATA,
    backend_from_flag,
    non_negative_float,
    positive_int,
    unit_interval,
)
from mads_bench.errors import UsageError
from mads_bench.files import atomic_write_text, check_outputs

DEFAULT_SGD = SGD_DATA / "dev"


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "sage",
        help="SAGE turn evaluation: bench, run, compare, calibrate, train-tagger, build-lexicon, "
        "baseline, sgdx.",
    )
    sub = parser.add_subparsers(dest="sage_command", metavar="ACTION", required=True)

    bench = sub.add_parser("bench", help="Build an SGD slice with injected failures (seeded).")
    bench.add_argument("--sgd", type=Path, default=DEFAULT_SGD, help="SGD split folder (dev).")
    bench.add_argument(
        "--n", type=positive_int, default=300, help="Turns in the slice (default 300)."
    )
    bench.add_argument("--seed", type=int, default=0, help="Sampling/injection seed.")
    bench.add_argument(
        "--inject-rate", type=unit_interval, default=0.5, help="Share injected (0.5)."
    )
    bench.add_argument(
        "--injector",
        choices=("copy", "varied"),
        default="copy",
        help="Failure operators: `copy` (real SGD turns copied in; the calibration injector) "
        "or `varied` (text composed per turn, PC in the last slot's turn, WNF through slot "
        "descriptions, UV values sharing words with the user's).",
    )
    bench.add_argument("--out", type=Path, required=True, help="Output folder.")
    _tagger_flag(bench)
    bench.add_argument(
        "--evaluate",
        action="store_true",
        help="Also run SAGE-Core with acts and text-only and write reports.",
    )
    bench.set_defaults(handler=run_bench)

    run = sub.add_parser("run", help="Evaluate a turn-record file; report if labels are given.")
    run.add_argument("--turns", type=Path, required=True, help="Turn records (JSONL).")
    run.add_argument("--schema", required=True, help="SGD schema.json or mads:<domain>.")
    run.add_argument("--out", type=Path, required=True, help="Verdicts (JSONL).")
    run.add_argument("--labels", type=Path, help="Labels (JSONL) for a report.")
    run.add_argument("--config", choices=["core", "llm"], default="core", help="SAGE config.")
    run.add_argument("--judge", help="S3 judge backend spec for --config llm (e.g. openai:m@url).")
    run.add_argument("--text-only", action="store_true", help="Ignore dialogue acts.")
    run.add_argument("--no-s1", action="store_true", help="Ablation: disable S1.")
    run.add_argument("--no-s2", action="store_true", help="Ablation: disable S2.")
    run.add_argument("--nli", help="NLI cross-encoder name/path for S2 (default: offline).")
    run.add_argument("--gates", type=Path, help="S2 gates JSON from `sage calibrate`.")
    run.add_argument("--batch-size", type=positive_int, default=64, help="Turns per S2 batch.")
    _tagger_flag(run)
    run.add_argument("--report", type=Path, help="Also write the report as JSON here.")
    run.set_defaults(handler=run_run)

    base = sub.add_parser("baseline", help="An LLM-judge baseline; same verdict files as run.")
    base.add_argument("--kind", choices=["geval", "single", "single-state"], required=True)
    base.add_argument("--judge", required=True, help="Backend spec (simulation.backends).")
    base.add_argument("--turns", type=Path, required=True, help="Turn records (JSONL).")
    base.add_argument("--schema", required=True, help="SGD schema.json or mads:<domain>.")
    base.add_argument("--out", type=Path, required=True, help="Verdicts (JSONL).")
    base.add_argument("--labels", type=Path, help="Labels (JSONL) for a report.")
    base.add_argument(
        "--threshold", type=non_negative_float, default=2.0, help="G-Eval: failure at <= this."
    )
    base.add_argument("--text-only", action="store_true", help="Ignore dialogue acts.")
    base.add_argument("--batch-size", type=positive_int, default=64, help="Turns per backend call.")
    base.add_argument("--report", type=Path, help="Also write the report as JSON here.")
    base.set_defaults(handler=run_baseline)

    compare = sub.add_parser("compare", help="Paired bootstrap ΔF1 between two verdict files.")
    compare.add_argument("--labels", type=Path, required=True)
    compare.add_argument("--a", type=Path, required=True, help="Verdicts of evaluator A.")
    compare.add_argument("--b", type=Path, required=True, help="Verdicts of evaluator B.")
    compare.add_argument("--seed", type=int, default=0)
    compare.set_defaults(handler=run_compare)

    calib = sub.add_parser("calibrate", help="Fit the S2 gates on the SGD dev calibration split.")
    calib.add_argument("--sgd", type=Path, default=DEFAULT_SGD)
    calib.add_argument("--n", type=positive_int, default=300)
    calib.add_argument("--seed", type=int, default=1)
    calib.add_argument("--out", type=Path, help="Write the gates as JSON.")
    _tagger_flag(calib)
    calib.set_defaults(handler=run_calibrate)

    train = sub.add_parser(
        "train-tagger", help="Train the text-only act tagger on SGD train (embeddings + MLP heads)."
    )
    train.add_argument("--sgd-train", type=Path, default=DEFAULT_SGD.parent / "train")
    train.add_argument(
        "--dialogues", type=positive_int, default=12000, help="Train dialogues sampled (12000)."
    )
    train.add_argument("--seed", type=int, default=0, help="Sampling and training seed.")
    train.add_argument("--epochs", type=positive_int, default=20)
    train.add_argument("--hidden", type=positive_int, default=256, help="MLP width.")
    train.add_argument("--out", type=Path, required=True, help="Weights (.safetensors).")
    _encoder_flag(train)
    train.set_defaults(handler=run_train_tagger)

    lexicon = sub.add_parser(
        "build-lexicon",
        help="Learn the values users say (read by the text-only extractor in any case) from SGD "
        "train's slot spans.",
    )
    lexicon.add_argument("--sgd-train", type=Path, default=DEFAULT_SGD.parent / "train")
    lexicon.add_argument(
        "--min-dialogues", type=positive_int, default=2, help="Dialogues a value is said in (2)."
    )
    lexicon.add_argument(
        "--min-precision",
        type=unit_interval,
        default=0.6,
        help="Share of its occurrences in user turns that supply it as a value (0.6).",
    )
    lexicon.add_argument("--out", type=Path, required=True, help="Lexicon (.json).")
    lexicon.set_defaults(handler=run_build_lexicon)

    sgdx = sub.add_parser("sgdx", help="SGD-X robustness: F1 per paraphrased schema variant.")
    sgdx.add_argument("--sgd", type=Path, default=DEFAULT_SGD, help="SGD split folder (dev).")
    sgdx.add_argument("--sgdx", type=Path, default=DEFAULT_SGD.parent / "sgd_x")
    sgdx.add_argument(
        "--n", type=positive_int, default=300, help="Turns in the slice (as `bench`)."
    )
    sgdx.add_argument("--seed", type=int, default=0, help="Slice seed (as `bench`).")
    sgdx.add_argument("--acts", action="store_true", help="Also run with dialogue acts.")
    sgdx.add_argument("--out", type=Path, help="Write the table as JSON here.")
    _tagger_flag(sgdx)
    sgdx.set_defaults(handler=run_sgdx)


def _encoder_flag(parser: argparse.ArgumentParser) -> None:
    from evaluators.sage.grounding import DEFAULT_ENCODER, GATES

    parser.add_argument(
        "--encoder",
        default=DEFAULT_ENCODER,
        help=f"S2's sentence encoder: a model name or folder (default {DEFAULT_ENCODER}; "
        f"calibrated gates and a bundled tagger exist for {', '.join(GATES)}).",
    )


def _tagger_flag(parser: argparse.ArgumentParser) -> None:
    _encoder_flag(parser)
    parser.add_argument(
        "--tagger",
        default="bundled",
        help="Act tagger for turns without acts: `bundled` (the weights trained on SGD train "
        "for --encoder, shipped), a .safetensors path from `sage train-tagger`, or `none` "
        "(lexical and embedding path only).",
    )


def _verifier(args: argparse.Namespace, gates: Any = None) -> Any:
    from evaluators.sage import OfflineGroundingVerifier

    return OfflineGroundingVerifier(encoder=args.encoder, gates=gates)


def _tagger(args: argparse.Namespace) -> Any:
    """The ``--tagger`` for ``--encoder`` (None for `none`, or `bundled` without weights)."""
    from evaluators.sage.tagger import load_tagger

    flag = args.tagger
    try:
        return load_tagger(None if flag == "none" else flag, args.encoder)
    except (OSError, ValueError) as err:
        raise UsageError(f"--tagger: {err}") from None


def _load_sgd(folder: Path) -> tuple[Any, list[dict]]:
    """An SGD split folder's workflow spec and dialogues; a bad folder is a usage error."""
    from evaluators.sage import WorkflowSpec
    from evaluators.sage.sgd import load_dialogues

    try:
        return WorkflowSpec.from_sgd_schema(folder / "schema.json"), load_dialogues(folder)
    except (OSError, ValueError) as err:
        raise UsageError(str(err)) from None


def run_bench(args: argparse.Namespace) -> int:
    from evaluators.sage import write_jsonl
    from evaluators.sage.inject import build_slice

    spec, dialogues = _load_sgd(args.sgd)
    check_outputs({"--sgd": args.sgd}, {"--out": args.out}, folders=["--out"])
    from evaluators.sage.inject_varied import inject_varied

    injector = inject_varied if args.injector == "varied" else None
    records, labels, injections = build_slice(
        dialogues, spec, args.n, args.seed, args.inject_rate, injector=injector
    )
    write_jsonl(args.out / "turns.jsonl", records)
    write_jsonl(args.out / "turns.text_only.jsonl", [r.without_acts() for r in records])
    write_jsonl(args.out / "labels.jsonl", labels)
    atomic_write_text(
        args.out / "injections.jsonl", "".join(json.dumps(i) + "\n" for i in injections)
    )
    manifest = {
        "sgd": str(args.sgd),
        "schema": str(args.sgd / "schema.json"),
        "n": len(records),
        "seed": args.seed,
        "injector": args.injector,
        "injected": sum(lb.label == "failure" for lb in labels),
    }
    atomic_write_text(args.out / "manifest.json", json.dumps(manifest, indent=2) + "\n")
    print(f"wrote {len(records)} turns ({manifest['injected']} injected) to {args.out}")
    if args.evaluate:
        from evaluators.sage import SageConfig, SageEvaluator
        from evaluators.sage.verdict_scoring import format_report, report

        evaluator = SageEvaluator(spec, SageConfig(verifier=_verifier(args), tagger=_tagger(args)))
        evaluator.warm_up()
        for name, rows in (("acts", records), ("text_only", [r.without_acts() for r in records])):
            verdicts = evaluator.evaluate(rows)
            write_jsonl(args.out / f"verdicts.{name}.jsonl", verdicts)
            rep = report(labels, verdicts)
            atomic_write_text(args.out / f"report.{name}.json", json.dumps(rep, indent=2) + "\n")
            print("\n" + format_report(rep, f"SAGE-Core, {name.replace('_', '-')}"))
    return 0


def run_run(args: argparse.Namespace) -> int:
    from evaluators.sage import (
        NLIGroundingVerifier,
        SageConfig,
        SageEvaluator,
        TurnLabel,
        read_keyed,
        read_turns,
    )

    if args.config == "llm" and not args.judge:
        raise UsageError("SAGE-LLM needs a judge backend: pass --judge SPEC (e.g. openai:m@url)")
    if args.judge and args.config != "llm":
        raise UsageError("--judge is used by --config llm only")
    _check_verdict_outputs(args)
    try:
        spec = _schema(args.schema)
        records = read_turns(args.turns, spec)
        labels = [lb for _, lb in read_keyed(args.labels, TurnLabel)] if args.labels else None
        gates = _gates(args.gates) if args.gates else None
        verifier = _verifier(args, gates)
        if args.nli:
            verifier = NLIGroundingVerifier(args.nli, fallback=verifier)
        config = SageConfig.core(verifier)
        if args.judge:
            config = SageConfig.llm(_backend(args.judge), verifier)
        config.use_s1, config.use_s2 = not args.no_s1, not args.no_s2
        config.tagger = _tagger(args)
        evaluator = SageEvaluator(spec, config)
    except (OSError, ValueError, KeyError) as err:
        raise UsageError(str(err).strip('"')) from None
    if args.text_only:
        records = [r.without_acts() for r in records]
    evaluator.warm_up()
    started = time.perf_counter()
    try:
        verdicts = evaluator.evaluate(records, batch_size=args.batch_size)
    except Exception as err:  # a judge backend failing (network, server): a clear error
        if not args.judge:
            raise
        raise UsageError(f"judge {args.judge!r}: {err}") from None
    seconds = time.perf_counter() - started
    return _write_and_report(args, verdicts, labels, seconds, f"SAGE-{args.config}")


def _schema(source: str) -> Any:
    """The ``--schema`` workflow: ``mads:<domain>`` is resolved here, through the catalog, and
    the loaded pack handed down; a file that cannot be read is named with the flag."""
    from evaluators.sage import WorkflowSpec, mads_domain
    from mads_bench.catalog import load_domain

    try:
        name = mads_domain(source)
        return WorkflowSpec.from_source(load_domain(name) if name is not None else source)
    except OSError as err:
        raise UsageError(f"--schema {source}: {err.strerror or err}") from None


def _gates(path: Path) -> dict[str, Any]:
    """The ``--gates`` file of `sage calibrate`: ``{class: {theta, delta, low_fires}}``."""
    from evaluators.sage import Gate
    from mads_bench.loading import CatalogError, read_data_file

    try:
        data = read_data_file(path)
        if not isinstance(data, dict):
            raise CatalogError(path, "", "expected an object of gates by class")
        gates = {}
        for name, fields in data.items():
            try:
                gates[name] = Gate(**fields)
            except TypeError as err:
                reason = f"not a gate {{theta, delta, low_fires}} ({err})"
                raise CatalogError(path, name, reason) from None
        return gates
    except CatalogError as err:
        raise UsageError(f"--gates {err}") from None


def _backend(spec: str) -> Any:
    return backend_from_flag("--judge", spec)


def _check_verdict_outputs(args: argparse.Namespace, *more_inputs: Path | None) -> None:
    check_outputs(
        {
            "--turns": args.turns,
            "--labels": args.labels,
            "--gates": more_inputs[0] if more_inputs else None,
        },
        {"--out": args.out, "--report": args.report},
    )


def _write_and_report(
    args: argparse.Namespace, verdicts: list, labels: list | None, seconds: float, title: str
) -> int:
    from evaluators.sage import write_jsonl
    from evaluators.sage.verdict_scoring import format_report, report

    write_jsonl(args.out, verdicts)
    counts = {
        k: sum(v.verdict == k for v in verdicts) for k in ("failure", "acceptable", "undecided")
    }
    print(
        f"wrote {len(verdicts)} verdicts to {args.out} {counts} in {seconds:.1f} s "
        f"({len(verdicts) / max(seconds, 1e-9):.1f} turns/s)"
    )
    if labels is not None:
        try:
            rep = report(labels, verdicts)
        except ValueError as err:
            raise UsageError(f"{args.labels}: {err}") from None
        print("\n" + format_report(rep, f"{title} on {args.turns.name}"))
        if args.report:
            atomic_write_text(args.report, json.dumps(rep, indent=2) + "\n")
    return 0


def run_baseline(args: argparse.Namespace) -> int:
    from evaluators.sage import TurnLabel, read_keyed, read_turns
    from evaluators.sage.baselines import BaselineJudge

    _check_verdict_outputs(args)
    try:
        spec = _schema(args.schema)
        records = read_turns(args.turns, spec)
        labels = [lb for _, lb in read_keyed(args.labels, TurnLabel)] if args.labels else None
        judge = BaselineJudge(args.kind, _backend(args.judge), spec, args.threshold)
    except (OSError, ValueError, KeyError) as err:
        raise UsageError(str(err).strip('"')) from None
    if args.text_only:
        records = [r.without_acts() for r in records]
    started = time.perf_counter()
    try:
        verdicts = judge.evaluate(records, batch_size=args.batch_size)
    except Exception as err:  # the backend failing (network, server, exhausted script)
        raise UsageError(f"judge {args.judge!r}: {err}") from None
    seconds = time.perf_counter() - started
    return _write_and_report(args, verdicts, labels, seconds, f"baseline {args.kind}")


def run_compare(args: argparse.Namespace) -> int:
    from evaluators.sage import TurnLabel, Verdict, read_keyed
    from evaluators.sage.verdict_scoring import align, paired_f1_bootstrap

    labels = [lb for _, lb in read_keyed(args.labels, TurnLabel)]
    aligned = []
    for flag, path in (("--a", args.a), ("--b", args.b)):
        verdicts = [v for _, v in read_keyed(path, Verdict)]
        try:
            aligned.append(align(labels, verdicts))
        except ValueError as err:  # labelled turns this evaluator gave no verdict
            raise UsageError(f"{flag} {path}: {err} in {args.labels}") from None
    a, b = aligned
    gold = [lb.label == "failure" for lb, _ in a]
    result = paired_f1_bootstrap(
        gold,
        [v.verdict == "failure" for _, v in a],
        [v.verdict == "failure" for _, v in b],
        seed=args.seed,
    )
    print(
        f"ΔF1 (A − B) = {result['delta_f1']:+.3f}, 95% CI [{result['ci_low']:+.3f}, "
        f"{result['ci_high']:+.3f}], p = {result['p_value']:.3f} (paired bootstrap, "
        f"10,000 resamples, seed {args.seed})"
    )
    return 0


def run_calibrate(args: argparse.Namespace) -> int:
    from evaluators.sage.calibration import calibrate
    from evaluators.sage.inject import build_slice

    spec, dialogues = _load_sgd(args.sgd)
    records, _, injections = build_slice(dialogues, spec, args.n, args.seed, split="calibration")
    check_outputs({"--sgd": args.sgd}, {"--out": args.out})
    gates, counts = calibrate(
        spec, records, injections, verifier=_verifier(args), tagger=_tagger(args)
    )
    table = {
        k: {"theta": g.theta, "delta": g.delta, "low_fires": g.low_fires} for k, g in gates.items()
    }
    for k, g in table.items():
        print(f"{k:<7} theta {g['theta']:+.3f}  delta {g['delta']:.2f}  criteria {counts[k]}")
    if args.out:
        atomic_write_text(args.out, json.dumps(table, indent=2) + "\n")
    return 0


def run_train_tagger(args: argparse.Namespace) -> int:
    import random

    from tqdm.auto import tqdm

    from evaluators.sage.sgd import dialogue_turns
    from evaluators.sage.tagger import train_tagger

    spec, dialogues = _load_sgd(args.sgd_train)
    check_outputs({"--sgd-train": args.sgd_train}, {"--out": args.out})
    random.Random(args.seed).shuffle(dialogues)
    picked = dialogues[: args.dialogues]
    records = [r for d in picked for r in dialogue_turns(d)]
    verifier = _verifier(args)
    verifier.CACHE_SIZE = 10**7  # every text of the training set is embedded once
    from evaluators.sage.tagger import previous_agent, slot_prompt

    texts = sorted(
        {t for r in records for t in (r.user, r.agent, previous_agent(r)) if t}
        | {slot_prompt(svc, s) for svc in spec.services.values() for s in svc.slots}
    )
    chunks = range(0, len(texts), 2048)
    for start in tqdm(chunks, desc=f"embedding {len(records)} turns of {len(picked)} dialogues"):
        verifier.encode(texts[start : start + 2048])
    tagger = train_tagger(
        records,
        spec,
        verifier.encode,
        encoder=args.encoder,
        hidden=args.hidden,
        epochs=args.epochs,
        seed=args.seed,
        metadata={
            "data": f"SGD train ({args.sgd_train.name}), {len(picked)} dialogues, seed {args.seed}",
        },
        progress=lambda it: tqdm(it, desc="epochs"),
    )
    tagger.save(args.out)
    print(f"wrote {args.out} ({tagger.metadata['pairs']} slot pairs, {len(records)} turns)")
    return 0


def run_build_lexicon(args: argparse.Namespace) -> int:
    from evaluators.sage.lexicon import build_lexicon

    spec, dialogues = _load_sgd(args.sgd_train)
    check_outputs({"--sgd-train": args.sgd_train}, {"--out": args.out})
    lexicon = build_lexicon(dialogues, spec, args.min_dialogues, args.min_precision)
    lexicon.save(args.out)
    print(f"wrote {args.out} ({len(lexicon.values)} values from {len(dialogues)} dialogues)")
    return 0


def run_sgdx(args: argparse.Namespace) -> int:
    from evaluators.sage import WorkflowSpec
    from evaluators.sage import sgdx as robustness
    from evaluators.sage.inject import build_slice
    from evaluators.sage.sgd import load_dialogues

    try:
        original = json.loads((args.sgd / "schema.json").read_text())
        variants = robustness.load_variant_schemas(args.sgdx, args.sgd.name)
        dialogues = load_dialogues(args.sgd)
        spec = WorkflowSpec.from_sgd_schema(original)
        records, labels, _ = build_slice(dialogues, spec, args.n, args.seed)
        for name, schema in variants.items():  # fail early on a variant that does not line up
            robustness.build_name_map(original, schema, str(args.sgdx / name))
    except (OSError, ValueError) as err:
        raise UsageError(str(err)) from None
    verifier = _verifier(args)
    tagger = _tagger(args)
    table: dict[str, Any] = {"n": len(records), "seed": args.seed, "conditions": {}}
    for condition in ("text_only", "acts") if args.acts else ("text_only",):
        rows, verdicts = robustness.run_sgdx(
            records, labels, original, variants, condition == "text_only", verifier, tagger
        )
        stable = robustness.stable_share(verdicts)
        table["conditions"][condition] = {"rows": rows, "stable_all": stable}
        title = f"SAGE-Core under SGD-X, {condition.replace('_', '-')} (n={len(records)})"
        print("\n" + robustness.format_table(rows, stable, title))
    if args.out:
        atomic_write_text(args.out, json.dumps(table, indent=2) + "\n")
    return 0
