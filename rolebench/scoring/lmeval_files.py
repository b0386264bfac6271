"""lm-eval's task files, written from the one definition of each benchmark and each metric.

lm-eval reads tasks from files alone: a task file per split (`tasks/rolebench/rolebench_<split>.yaml`), a
group file per benchmark (`<group>.yaml`), each split kind's metric list (`_rolebench_<kind>.yaml`) and the
groups' (`_rolebench_group.yaml`). They are written here from `rolebench.data.splits.BENCHMARKS` and
`rolebench.scoring.metrics.METRICS`, so a new benchmark or metric is one definition and
`python -m rolebench.scoring.lmeval_files` (`make task-files`); `--check` (run by `make checks` and a test)
fails, naming the file, while a file does not say what the definitions say. The shared
`_rolebench_template.yaml` (the prompt and scoring hooks) and the umbrella group `rolebench.yaml` are
written by hand.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from rolebench.data.splits import BENCHMARKS, Benchmark, SplitDef
from rolebench.scoring.metrics import METRICS, Metric
from rolebench.storage.files import write_text_atomic

KIND_FILES = {"general": "_rolebench_general.yaml", "role_specific": "_rolebench_specific.yaml"}
KIND_WORDS = {"general": "general instructions", "role_specific": "role-specific questions"}
GROUP_FILE = "_rolebench_group.yaml"
FOLDER = Path(__file__).resolve().parents[1] / "_tasks" / "rolebench"  # rolebench.tasks.catalogue.TASKS_DIR's
_WRITTEN = "# Written by `make task-files` from rolebench/{} (edit that, not this file).\n"


def _labels(metrics: Sequence[Metric], kind: str) -> str:
    return ", ".join(m.label for m in metrics if m.kind == kind)


def _kind_file(kind: str, metrics: Sequence[Metric]) -> str:
    lines = [
        _WRITTEN.format("scoring/metrics.py"),
        f"# A task on a split of kind `{kind}`: the shared part, and the metrics lm-eval reports for it\n",
        f"# ({_labels(metrics, kind)}; hooks.process_results returns them).\n",
        "include: _rolebench_template.yaml\nmetric_list:\n",
    ]
    for metric in (m for m in metrics if m.kind == kind):
        lines.append(f"  - metric: {metric.key}\n    aggregation: mean\n    higher_is_better: true\n")
    return "".join(lines)


def _groups_file(metrics: Sequence[Metric]) -> str:
    lines = [
        _WRITTEN.format("scoring/metrics.py"),
        "# Shared part of every RoleBench group: each metric in lm-eval's group row, the mean over the\n",
        "# member tasks that have it (as `rolebench evaluate` reports it).\naggregate_metric_list:\n",
    ]
    for metric in metrics:
        lines.append(f"  - metric: {metric.key}\n    aggregation: mean\n    weight_by_size: false\n")
    return "".join(lines)


def _task_file(benchmark: Benchmark, split: SplitDef, metrics: Sequence[Metric]) -> str:
    return (
        _WRITTEN.format("data/splits.py")
        + f"# {benchmark.label}, {KIND_WORDS[split.kind]} ({_labels(metrics, split.kind)}).\n"
        + f"include: {KIND_FILES[split.kind]}\ntask: rolebench_{split.id}\n"
        + f"dataset_kwargs:\n  split: {split.id}\n"
        + f"generation_kwargs:\n  until: []\n  max_gen_toks: {split.max_new_tokens}\n  do_sample: false\n"
        + f"metadata:\n  version: {benchmark.version}\n"
    )


def _group_file(benchmark: Benchmark) -> str:
    members = "".join(f"  - rolebench_{split.id}\n" for split in benchmark.splits)
    return (
        _WRITTEN.format("data/splits.py")
        + f"# {benchmark.label}.\ninclude: {GROUP_FILE}\ngroup: {benchmark.group}\ntask:\n{members}"
        + f"metadata:\n  version: {benchmark.version}\n"
    )


def task_files(
    benchmarks: Sequence[Benchmark] = BENCHMARKS, metrics: Sequence[Metric] = METRICS
) -> dict[str, str]:
    """Each written file's name and its text, from `benchmarks` and `metrics`."""
    kinds = {m.kind for m in metrics} | {s.kind for b in benchmarks for s in b.splits}
    unknown = sorted(kinds - set(KIND_FILES))
    if unknown:
        raise ValueError(f"no lm-eval template for split kind {unknown[0]!r}: add it to KIND_FILES")
    files = {name: _kind_file(kind, metrics) for kind, name in KIND_FILES.items()}
    files[GROUP_FILE] = _groups_file(metrics)
    for benchmark in benchmarks:
        for split in benchmark.splits:
            files[f"rolebench_{split.id}.yaml"] = _task_file(benchmark, split, metrics)
        files[f"{benchmark.group}.yaml"] = _group_file(benchmark)
    return files


def lagging_files(folder: Path = FOLDER) -> list[Path]:
    """The files in `folder` that do not say what the definitions say (or are not there)."""
    found = task_files()
    return [
        folder / name
        for name, text in found.items()
        if not (folder / name).is_file() or (folder / name).read_text("utf-8") != text
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="lm-eval's task files, written from rolebench's definitions")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file lags")
    parser.add_argument("--folder", type=Path, default=FOLDER, help="the task files' folder")
    options = parser.parse_args(argv)
    lagging = lagging_files(options.folder)
    if options.check:
        for path in lagging:
            print(
                f"{path}: does not say what rolebench/data/splits.py and rolebench/scoring/metrics.py say; "
                "run `make task-files`",
                file=sys.stderr,
            )
        return 1 if lagging else 0
    texts = task_files()
    for path in lagging:
        write_text_atomic(path, texts[path.name])
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
