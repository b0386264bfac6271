"""What a run's items cover, in lines under the summary: the items a data-only model (`baseline:rolegpt`,
`baseline:train`) leaves uncovered, and the numbers on the items the split's train file has not seen."""

from __future__ import annotations

from rolebench.data.splits import SPLITS
from rolebench.results.schema import RunResults
from rolebench.scoring.metrics import LABELS, METRIC_KEYS


def cell(value: object) -> str:
    """A value as the summary prints it: 4 decimals, "-" for none."""
    return "-" if value is None else f"{value:.4f}" if isinstance(value, float) else str(value)


# the data-only models whose coverage is the data's: spec -> (file of the split, what answers, the join)
COVERED_BY = {
    "baseline:rolegpt": ("rolegpt_baseline.jsonl", "answers", "joined on (role, question)"),
    "baseline:train": ("train.jsonl", "asks", "joined on the stripped question, any role"),
}


def coverage_notes(results: RunResults) -> list[str]:
    """Why `baseline:rolegpt` or `baseline:train` left items uncovered: their answers come from a file of
    the split, joined to the test items; name the file, and say when the data lacks it."""
    spec = str(results.config.model.get("spec") or "")
    if spec not in COVERED_BY:
        return []
    name_of, verb, join = COVERED_BY[spec]
    files = results.config.data.get("files") or {}
    notes = []
    for name, task in results.results.items():
        split = SPLITS.get(task.split)
        if not task.n_not_covered or split is None:
            continue
        path = split.file(name_of)
        covered = (task.n_baseline or 0) if spec == "baseline:rolegpt" else task.n_generated
        if path in files or (split.builtin and spec == "baseline:rolegpt"):
            notes.append(
                f"{name}: {task.n_not_covered:,} of {task.n:,} not covered: {path} {verb} "
                f"{covered:,} of the {task.n:,} questions ({join})"
            )
        else:
            notes.append(
                f"{name}: not covered: the data has no {path} (for some splits it is on the Hub only); "
                "add it to the data folder, or read the Hub"
            )
    return notes


def unseen_notes(results: RunResults) -> list[str]:
    """Per task whose split's train file was read: its numbers on the items whose question is not in
    that file, beside the numbers on all items, or one line saying no item is left."""
    notes = []
    for name, task in results.results.items():
        unseen, split = task.unseen, SPLITS.get(task.split)
        if unseen is None or split is None:
            continue
        train = split.file("train.jsonl")
        if not unseen.n:
            notes.append(
                f"{name}: unseen items: none, every test question is in {train} (no leak-free view of this "
                "split; read its numbers against the floor baseline:train)"
            )
            continue
        extra = unseen.model_extra or {}
        values = [
            f"{LABELS[m]} {cell(extra.get(m))} (all items {cell(task.value(m))})"
            for m in METRIC_KEYS
            if f"{m}_n" in extra
        ]
        notes.append(
            f"{name}: unseen items (question not in {train}): {unseen.n:,} of {task.n:,}: {', '.join(values)}"
        )
    return notes
