"""`rolebench score`: score a saved run again (adding a ROUGE-L protocol's numbers), without a model; a thin
layer over `rolebench.score` (rolebench/evaluation/api.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rolebench.commands._arguments import Subparsers


def add_parser(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "score",
        help="score saved generations under another protocol (no model needed)",
        description="Score DIR/samples/*.jsonl again and write DIR/results.json, adding a ROUGE-L protocol's "
        "numbers with --protocol. The run's other protocols and its judgments are kept. A damaged "
        "results.json is rebuilt, and a missing or damaged samples file is rebuilt from the generation "
        "store.",
    )
    p.add_argument("run_dir", type=Path, help="a run folder written by `rolebench evaluate`")
    p.add_argument("--protocol", help="add this protocol: rolellm, rolebench or opencompass")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from rolebench.evaluation.api import score
    from rolebench.report.summary import summary_text

    results = score(args.run_dir, args.protocol)
    print(summary_text(results))
    return 0
