"""`rolebench compare RUN_A RUN_B`: is A really above B? Paired differences on the items both runs hold."""

from __future__ import annotations

import argparse
import json
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
        "one judge judged both runs. On session tasks both runs played the same way: each run's win rate "
        "against the opponent and, over the sessions both played, A - B of the per-session win shares with "
        "its paired bootstrap interval and permutation p-value. Runs of different data or protocols, or "
        "sessions played differently, are refused.",
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
    from rolebench.report.comparison import compare_folders, comparison_text
    from rolebench.storage.files import write_text_atomic

    document = compare_folders(args.run_a, args.run_b, resamples=args.bootstrap, seed=args.seed)
    print(comparison_text(document))
    if args.json_file is not None:
        write_text_atomic(args.json_file, json.dumps(document, ensure_ascii=False, indent=1) + "\n")
        print(f"\nwrote {args.json_file}")
    return 0
