"""`rolebench tasks`: list the tasks and groups, with their splits and versions."""

from __future__ import annotations

import argparse
from pathlib import Path

from rolebench.commands._arguments import Subparsers


def add_parser(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "tasks",
        help="list tasks and groups",
        description="List the tasks (one RoleBench split each: its language, metrics, answer length cap "
        "and version) and the groups of tasks, as `rolebench evaluate --tasks` and lm-eval name them.",
    )
    p.add_argument(
        "--include-path", type=Path, action="append", default=[], help="extra folder of task YAMLs"
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from rolebench.scoring.metrics import LABELS, metrics_for
    from rolebench.tasks.catalogue import catalogue

    tasks, groups = catalogue(tuple(args.include_path))
    rows = [
        [
            t.name,
            t.split.id,
            t.split.language,
            " ".join(LABELS[m.key] for m in metrics_for(t.split.kind)),
            t.max_new_tokens,
            t.version,
        ]
        for t in tasks.values()
    ]
    headers = ["task", "split", "lang", "metrics", "max new tokens", "version"]
    print(tabulate(rows, headers=headers, disable_numparse=True))
    print()
    print(tabulate([[g.name, ", ".join(g.members)] for g in groups.values()], headers=["group", "members"]))
    return 0
