"""`rolebench score`: re-score a run's saved generations under a ROUGE-L protocol, without a model."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "score",
        help="re-score saved generations (no model needed)",
        description="Re-score DIR/samples/*.jsonl and rewrite DIR/results.json in place.",
    )
    p.add_argument("run_dir", type=Path, help="a run folder written by `rolebench evaluate`")
    p.add_argument("--protocol", default="rolebench", help="rolebench (default) or opencompass")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from rolebench.evaluation.pipeline import rescore
    from rolebench.report.summary import summary_table

    results = rescore(args.run_dir, args.protocol)
    print(summary_table(results))
    return 0
