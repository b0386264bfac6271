"""`rolebench compare RUN_A RUN_B`: is A really above B? Paired differences on the items both runs hold."""

from __future__ import annotations

import argparse
import json
from contextlib import ExitStack
from pathlib import Path

from rolebench.commands._arguments import Subparsers


def add_parser(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "compare",
        help="compare two runs on the items both hold: differences, intervals, p-values",
        description="Compare two run folders on the items both hold (joined by sample id, role and "
        "question): per task and group and per metric (CUS, RAW, SPE, avg), under the headline protocol and "
        "the F-measure, A's and B's means, A - B, its paired bootstrap interval and a paired permutation "
        "p-value (exact over at most 16 items), the number of items, and a verdict naming the higher run "
        "only where the interval and p agree and the items are enough (else why not); the win rates too when "
        "one judge judged both runs. Runs of "
        "different data or protocols are refused.",
    )
    p.add_argument("run_a", type=Path, help="run folder A (written by `rolebench evaluate`)")
    p.add_argument("run_b", type=Path, help="run folder B")
    p.add_argument(
        "--json",
        type=Path,
        dest="json_file",
        metavar="FILE",
        help="also write the comparison to this JSON file",
    )
    p.add_argument(
        "--bootstrap",
        type=int,
        metavar="N",
        help="resamples of the bootstrap and of the permutation test (default: run A's bootstrap setting)",
    )
    p.add_argument(
        "--seed", type=int, metavar="N", help="seed of the resamples (default: run A's bootstrap seed)"
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from rolebench.report.compare import comparison_table
    from rolebench.report.paired import compare_runs, load_run, shared_tasks
    from rolebench.run.definition import check_resampling
    from rolebench.run.folder import RunFolder
    from rolebench.scoring.resampling import Resampling
    from rolebench.storage.files import write_text_atomic

    check_resampling(args.bootstrap or 0, args.seed or 0, where="rolebench compare")
    where = f"{args.run_a} vs {args.run_b}"
    with ExitStack() as stack:  # each folder's lock while it is read (once when A and B are one folder)
        folder_a = stack.enter_context(RunFolder(args.run_a).lock())
        same = folder_a.path.resolve() == Path(args.run_b).resolve()
        folder_b = folder_a if same else stack.enter_context(RunFolder(args.run_b).lock())
        results_a, results_b = folder_a.read_results(), folder_b.read_results()
        tasks = shared_tasks(results_a, results_b, where)
        run_a, run_b = load_run(folder_a.path, results_a, tasks), load_run(folder_b.path, results_b, tasks)
    boot = {**results_a.config.bootstrap}
    resamples = int(args.bootstrap if args.bootstrap is not None else boot.get("resamples", 1000))
    seed = int(args.seed if args.seed is not None else boot.get("seed", 0))
    check_resampling(resamples, seed, where=f"{args.run_a}/results.json (give --bootstrap and --seed)")
    settings = Resampling(resamples=resamples, confidence=float(boot.get("confidence", 0.95)), seed=seed)
    document = compare_runs(run_a, run_b, settings)
    print(comparison_table(document))
    if args.json_file is not None:
        write_text_atomic(args.json_file, json.dumps(document, ensure_ascii=False, indent=1) + "\n")
        print(f"\nwrote {args.json_file}")
    return 0
