"""`rolebench report RUN_DIR`: a self-contained HTML page about one run, its results derived again first
(`rolebench.evaluation.api.refresh`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rolebench.commands._arguments import Subparsers
from rolebench.errors import ConfigError


def add_parser(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "report",
        help="write an HTML report of one run (sessions as transcripts)",
        description="Write a self-contained HTML page for a run folder: metrics, per-role "
        "bar charts, the worst-scoring samples of each task, each session task's numbers and every "
        "session as a transcript, and the run's config.",
    )
    p.add_argument("run_dir", type=Path, help="a run folder written by `rolebench evaluate`")
    p.add_argument("--out", type=Path, help="HTML file to write (default RUN_DIR/report.html)")
    p.add_argument("--worst", type=int, default=10, help="how many worst-scoring samples to list per task")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from rolebench.evaluation.api import refresh
    from rolebench.report.page import write_report
    from rolebench.run.folder import RunFolder

    if args.worst < 0:
        raise ConfigError("--worst must be 0 or more", where="--worst")
    folder = RunFolder(args.run_dir)
    with folder.lock():
        refresh(folder)
        written = write_report(args.run_dir, args.out, args.worst)
    print(f"wrote {written}")
    return 0
