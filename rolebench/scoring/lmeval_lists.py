"""lm-eval's metric lists, written from `rolebench.scoring.metrics.METRICS` (the one list of the metrics).

lm-eval reads which metrics a task reports from its task files alone: each split kind's template
(`tasks/rolebench/_rolebench_<kind>.yaml`: `metric_list`) and the groups' template (`_rolebench_group.yaml`:
`aggregate_metric_list`). Those three files are written here from `METRICS`, so a new metric is one
`Metric(...)` and `python -m rolebench.scoring.lmeval_lists` (`make task-files`); `--check` (a test runs
it) fails, naming the file, when a file does not say what `METRICS` says.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from rolebench.scoring.metrics import METRICS, Metric
from rolebench.storage.files import write_text_atomic
from rolebench.tasks.catalogue import TASKS_DIR

KIND_FILES = {"general": "_rolebench_general.yaml", "role_specific": "_rolebench_specific.yaml"}
GROUP_FILE = "_rolebench_group.yaml"
_WRITTEN = (
    "# Written by `python -m rolebench.scoring.lmeval_lists` from rolebench/scoring/metrics.py: edit that.\n"
)


def _kind_file(kind: str, metrics: Sequence[Metric]) -> str:
    keys = ", ".join(m.label for m in metrics)
    lines = [
        _WRITTEN,
        f"# A task on a split of kind `{kind}`: the shared part, and the metrics lm-eval reports for it\n",
        f"# ({keys}: those of kind `{kind}`; hooks.process_results returns them).\n",
        "include: _rolebench_template.yaml\n",
        "metric_list:\n",
    ]
    for metric in metrics:
        lines.append(f"  - metric: {metric.key}\n    aggregation: mean\n    higher_is_better: true\n")
    return "".join(lines)


def _group_file(metrics: Sequence[Metric]) -> str:
    lines = [
        _WRITTEN,
        "# Shared part of every RoleBench group: each metric in lm-eval's group row, the mean over the\n",
        "# member tasks that have it (as `rolebench evaluate` reports it).\n",
        "aggregate_metric_list:\n",
    ]
    for metric in metrics:
        lines.append(f"  - metric: {metric.key}\n    aggregation: mean\n    weight_by_size: false\n")
    return "".join(lines)


def metric_list_files(metrics: Sequence[Metric] = METRICS) -> dict[str, str]:
    """Each template's name and its text, from `metrics`."""
    unknown = sorted({m.kind for m in metrics} - set(KIND_FILES))
    if unknown:
        raise ValueError(f"no lm-eval template for split kind {unknown[0]!r}: add it to KIND_FILES")
    files = {
        name: _kind_file(kind, [m for m in metrics if m.kind == kind]) for kind, name in KIND_FILES.items()
    }
    return {**files, GROUP_FILE: _group_file(metrics)}


def lagging_files(folder: Path = TASKS_DIR / "rolebench") -> list[Path]:
    """The templates in `folder` that do not say what `METRICS` says."""
    found = metric_list_files()
    return [
        folder / n
        for n, text in found.items()
        if not (folder / n).is_file() or (folder / n).read_text("utf-8") != text
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file lags")
    parser.add_argument("--folder", type=Path, default=TASKS_DIR / "rolebench", help="the task files' folder")
    options = parser.parse_args(argv)
    lagging = lagging_files(options.folder)
    if options.check:
        for path in lagging:
            print(
                f"{path}: does not list the metrics of rolebench/scoring/metrics.py; run `make task-files`",
                file=sys.stderr,
            )
        return 1 if lagging else 0
    for path in lagging:
        write_text_atomic(path, metric_list_files()[path.name])
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
