"""`rolebench tasks`: list the tasks and groups, with their splits and versions."""

from __future__ import annotations

import argparse
from pathlib import Path

from rolebench.commands._arguments import Subparsers


def add_parser(subparsers: Subparsers) -> None:
    p = subparsers.add_parser("tasks", help="list tasks and groups")
    p.add_argument(
        "--include-path", type=Path, action="append", default=[], help="extra folder of task YAMLs"
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from rolebench.tasks.catalogue import catalogue

    tasks, groups = catalogue(tuple(args.include_path))
    print(
        tabulate([[t.name, t.split, t.version] for t in tasks.values()], headers=["task", "split", "version"])
    )
    print()
    print(tabulate([[g.name, ", ".join(g.members)] for g in groups.values()], headers=["group", "members"]))
    return 0
