"""`rolebench score`: add a ROUGE-L protocol's numbers to a saved run, without a model."""

from __future__ import annotations

import argparse
from pathlib import Path

from rolebench.commands._arguments import Subparsers


def add_parser(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "score",
        help="score saved generations under another protocol (no model needed)",
        description="Score DIR/samples/*.jsonl under a ROUGE-L protocol and add its numbers to "
        "DIR/results.json. The run's headline numbers, its other protocols, timings and judge fields "
        "are kept. A damaged results.json is rebuilt first, from run.json, the samples files and the "
        "generation store.",
    )
    p.add_argument("run_dir", type=Path, help="a run folder written by `rolebench evaluate`")
    p.add_argument("--protocol", default="rolellm", help="rolellm (default), rolebench or opencompass")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from rolebench.commands._runs import open_run
    from rolebench.evaluation.rescore import rescore
    from rolebench.report.summary import summary_text

    with open_run(args.run_dir, rebuild_damaged=True):
        results = rescore(args.run_dir, args.protocol)
    print(summary_text(results))
    return 0
