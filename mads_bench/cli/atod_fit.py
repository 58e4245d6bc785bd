"""``mads-bench atod fit`` and the ``--part`` flag: the status model and the development split.

`atod fit` reads gold dialogues, keeps the fit part of the recorded split
(`evaluators/atod/dev_split.json`) and fits the tracker's status model on it
(`evaluators.atod.status_fitting`), writing `evaluators/atod/status_model.json` unless told
otherwise. With ``--cv-pred`` it writes no model: it cross-validates the fitting procedure over
dialogue folds of the fit part and writes each fit dialogue's held-out predictions (for `atod
score`). `atod track` and `atod score` take ``--part fit|validation`` to read one part only.

Example::

    mads-bench atod fit --dialogues ../shared/data/atod_dev/medium_dev.json \\
        ../shared/data/atod_dev/medium_dev_2.json
    mads-bench atod fit --dialogues ../shared/data/atod_dev/medium_dev*.json \\
        --cv-pred fit_held_out.jsonl --folds 5
    mads-bench atod track --dialogues ../shared/data/atod_dev/medium_dev*.json \\
        --part validation --out validation.jsonl
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mads_bench.cli.args import positive_int
from mads_bench.cli.output import print_json
from mads_bench.errors import UsageError
from mads_bench.files import check_outputs


def part_flag(parser: argparse.ArgumentParser) -> None:
    """Add ``--part`` (one part of the recorded development split)."""
    parser.add_argument(
        "--part",
        choices=["fit", "validation"],
        help="Only the dialogues of this part of the development split "
        "(evaluators/atod/dev_split.json, by dialogue_index).",
    )


def select(flag: str, dialogues: list, part: str | None) -> list:
    """``dialogues`` of ``part`` (all of them without one); a miss is one error line."""
    if part is None:
        return dialogues
    from evaluators.atod.dev_split import select_part

    try:
        return select_part(dialogues, part)
    except UsageError as err:
        raise UsageError(f"{flag} --part {part}: {err}") from None


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `fit` action to the `atod` command group."""
    from evaluators.atod.status_model import MODEL_FILE

    fit = sub.add_parser(
        "fit",
        help="Fit the tracker's status model on the fit part of the development split.",
    )
    fit.add_argument(
        "--dialogues",
        type=Path,
        nargs="+",
        required=True,
        help="Gold ATOD dialogues; only those of the fit part of the split are read.",
    )
    fit.add_argument(
        "--out",
        type=Path,
        default=MODEL_FILE,
        help="Model file to write (default: the one the tracker ships with).",
    )
    fit.add_argument("--rounds", type=positive_int, default=2, help="Fitting rounds (2).")
    fit.add_argument(
        "--cv-pred",
        type=Path,
        help="Write no model: cross-validate the fit over dialogue folds of the fit part and "
        "write each fit dialogue's held-out predictions here (score them with `atod score`).",
    )
    fit.add_argument("--folds", type=positive_int, default=5, help="Folds of --cv-pred (5).")
    fit.add_argument("--seed", type=int, default=0, help="Seed of the --cv-pred folds (0).")
    fit.add_argument("--json", action="store_true", help="Print the fit record as JSON.")
    fit.set_defaults(handler=run_fit)


def run_fit(args: argparse.Namespace) -> int:
    """Handler of `atod fit`; returns the exit status."""
    from tqdm.auto import tqdm

    from evaluators.atod.status_fitting import fit_status_model
    from mads_bench.cli.atod import load_gold

    if args.cv_pred is not None:
        return run_cross_validation(args)
    check_outputs({"--dialogues": args.dialogues}, {"--out": args.out})
    if args.out.is_dir():
        raise UsageError(f"--out {args.out} is a folder; give a .json file")
    dialogues = select("--dialogues", load_gold("--dialogues", args.dialogues), "fit")
    model = fit_status_model(
        dialogues,
        rounds=args.rounds,
        progress=lambda it: tqdm(it, desc="fitting rounds", file=sys.stderr),
    )
    model.save(args.out)
    record = {"out": str(args.out), "stay_margin": model.stay_margin, **model.fitted}
    if args.json:
        print_json(args, record)
    else:
        rows = ", ".join(f"{k} {v}" for k, v in model.fitted["rows"].items())
        print(
            f"fitted on {len(dialogues)} dialogues ({rows}); l2 {model.fitted['l2']}, "
            f"stay margin {model.stay_margin}; wrote {args.out}"
        )
    return 0


def run_cross_validation(args: argparse.Namespace) -> int:
    """`atod fit --cv-pred`: held-out predictions of the fit part; writes no model."""
    from tqdm.auto import tqdm

    from evaluators.atod.status_fitting import out_of_fold_predictions
    from mads_bench.atod_data import write_dialogues
    from mads_bench.cli.atod import load_gold

    check_outputs({"--dialogues": args.dialogues}, {"--cv-pred": args.cv_pred})
    if args.cv_pred.is_dir():
        raise UsageError(f"--cv-pred {args.cv_pred} is a folder; give a .jsonl or .json file")
    dialogues = select("--dialogues", load_gold("--dialogues", args.dialogues), "fit")
    if args.folds < 2 or args.folds > len(dialogues):
        raise UsageError(f"--folds must be in [2, {len(dialogues)}], got {args.folds}")
    predictions = out_of_fold_predictions(
        dialogues,
        folds=args.folds,
        seed=args.seed,
        rounds=args.rounds,
        progress=lambda it: tqdm(it, desc="folds", file=sys.stderr),
    )
    write_dialogues(predictions, args.cv_pred)
    record = {"cv_pred": str(args.cv_pred), "dialogues": len(dialogues), "folds": args.folds}
    if args.json:
        print_json(args, record | {"seed": args.seed})
    else:
        print(
            f"wrote held-out predictions of {len(dialogues)} fit dialogues ({args.folds} "
            f"folds, seed {args.seed}) to {args.cv_pred}; score them with `atod score`"
        )
    return 0
