"""`rolebench tasks`: list the tasks and groups, with their splits and versions."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from rolebench.commands._arguments import Subparsers

if TYPE_CHECKING:
    from rolebench.tasks.sessions import SessionTask


def add_parser(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "tasks",
        help="list tasks and groups (the session tasks among them)",
        description="List the tasks (one RoleBench split each: its language, metrics, answer length cap "
        "and version) and the groups of tasks, as `rolebench evaluate --tasks` and lm-eval name them, then "
        "the session tasks (several turns against an opponent, judged turn by turn) with their items.",
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
    print()
    print(session_tasks_text())
    return 0


def _count(task: SessionTask) -> str:
    """The items of a session task: RPBench-Auto's shipped with rolebench; RoleBench's roles in the local
    RoleBench folder ($ROLEBENCH_DATA), "-" when the data is on the Hub (not fetched to list them)."""
    from rolebench.data.resolve import resolve_source
    from rolebench.errors import RoleBenchError
    from rolebench.sessions.data import ROLE_FILES, load_roles, load_rpbench
    from rolebench.tasks.sessions import RPBENCH_DIR

    try:
        if task.kind == "character" or task.kind == "scene":
            return str(len(load_rpbench(RPBENCH_DIR, task.kind)))
        source = resolve_source(None)
        if source.kind != "local" or source.path(ROLE_FILES[task.language], required=False) is None:
            return "-"
        return str(len(load_roles(source.location, task.language)))
    except RoleBenchError:
        return "-"


def session_tasks_text() -> str:
    """The session tasks (name, items, source, kind, language) and their groups, as two tables."""
    from tabulate import tabulate

    from rolebench.tasks.sessions import SESSION_GROUPS, SESSION_TASKS

    sources = {
        "rpbench": "RPBench-Auto (shipped, Apache-2.0)",
        "rolebench": "RoleBench profiles (the run's data)",
    }
    rows = [
        [t.name, _count(t), sources[t.source], t.kind, t.language, t.label] for t in SESSION_TASKS.values()
    ]
    headers = ["session task", "items", "source", "kind", "lang", "name"]
    groups = [[name, ", ".join(members)] for name, members in SESSION_GROUPS.items()]
    return "\n\n".join(
        [
            tabulate(rows, headers=headers, disable_numparse=True),
            tabulate(groups, headers=["session group", "members"]),
            "(run with --opponent SPEC --judge SPEC [--turns N]; see `rolebench evaluate --help`)",
        ]
    )
