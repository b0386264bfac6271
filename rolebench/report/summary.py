"""The table printed at the end of a run: one row per task and group."""

from __future__ import annotations

from tabulate import tabulate

from rolebench.results.schema import RunResults

COLUMNS = ("cus", "raw", "spe", "avg", "win_rate")


def _cell(value: object) -> str:
    return "-" if value is None else f"{value:.4f}" if isinstance(value, float) else str(value)


def summary_table(results: RunResults) -> str:
    rows = []
    for name, task in results.results.items():
        data = task.model_dump()
        rows.append([name, data["n"], data["n_not_covered"], *(_cell(data.get(c)) for c in COLUMNS)])
    for name, group in results.groups.items():
        data = group.model_dump()
        rows.append([f"[group] {name}", data["n"], "", *(_cell(data.get(c)) for c in COLUMNS)])
    return tabulate(rows, headers=["task", "n", "not covered", *COLUMNS], tablefmt="github")
