"""Runs side by side (a model before and after training): per task, the paper's recall and the
F-measure, the answer lengths against the references, the share cut at the token limit, the share
that loops, and the flags (`rolebench.scoring.flags`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tabulate import tabulate

from rolebench.results.schema import GroupResult, RunResults, TaskResult
from rolebench.scoring.flags import answer_flags, describe, sorted_flags
from rolebench.scoring.metrics import AVG, LABELS, METRIC_KEYS
from rolebench.scoring.protocols import F_MEASURE_PROTOCOL, PAPER_PROTOCOL

SHOWN = ((PAPER_PROTOCOL, "recall"), (F_MEASURE_PROTOCOL, "F"))
SCORES = (*METRIC_KEYS, AVG)


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _number(value: object, digits: int = 4) -> str:
    return f"{value:.{digits}f}" if isinstance(value, float) else "-"


def _block(results: RunResults, data: dict[str, Any], protocol: str) -> dict[str, Any]:
    """A task's or group's values under `protocol` (the headline protocol's sit at the top)."""
    if results.config.scoring.get("protocol") == protocol:
        return data
    block = data.get(protocol)
    return block if isinstance(block, dict) else {}


def entry_flags(entry: TaskResult | GroupResult | None) -> list[str]:
    """The flags a task or group carries: those recorded with it, else (a run from before flags were
    recorded) a task's length and looping flags from its lengths."""
    if entry is None:
        return []
    recorded = entry.value("flags")
    if isinstance(recorded, list):
        return sorted_flags([str(f) for f in recorded])
    lengths = entry.lengths if isinstance(entry, TaskResult) else None
    return answer_flags(lengths.model_dump() if lengths else None)


def _row(name: str, label: str, results: RunResults, key: str, group: bool) -> list[str]:
    entry = (results.groups if group else results.results).get(key)
    data = entry.model_dump() if entry is not None else {}
    cells = [name, label]
    for protocol, _ in SHOWN:
        block = _block(results, data, protocol)
        cells += [_number(block.get(c)) for c in SCORES]
    lengths = entry.lengths if isinstance(entry, TaskResult) else None
    if lengths is not None:
        cells += [
            _number(lengths.answer_words_mean, 1),
            _number(lengths.reference_words_mean, 1),
            _share(lengths.cut_at_limit),
            _share(lengths.looping),
        ]
    else:
        cells += ["", "", "", ""]
    cells.append(", ".join(entry_flags(entry)))
    return cells


def compare_table(runs: Mapping[str, RunResults]) -> str:
    """One row per task (then group) and run, the runs in the order given (e.g. before, after)."""
    last = list(runs.values())[-1]
    rows: list[list[str]] = []
    for group, keys in ((False, last.results), (True, last.groups)):
        for key in keys:
            for index, (label, results) in enumerate(runs.items()):
                name = "" if index else (f"[group] {key}" if group else key)
                rows.append(_row(name, label, results, key, group))
    headers = ["task", "run"]
    for _, measure in SHOWN:
        headers += [f"{LABELS[c]} {measure}" for c in SCORES]
    headers += ["answer len", "ref len", "cut", "looping", "flags"]
    # leave out score columns no run has a value in (a role-specific task has no CUS or RAW)
    keep = [
        i for i in range(len(headers)) if i < 2 or i >= 2 + 2 * len(SCORES) or any(r[i] != "-" for r in rows)
    ]
    table = tabulate(
        [[r[i] for i in keep] for r in rows], headers=[headers[i] for i in keep], tablefmt="github"
    )
    flags = sorted_flags([f for r in rows for f in r[-1].split(", ") if f])
    notes = [
        f"{PAPER_PROTOCOL}: the paper's ROUGE-L recall; {F_MEASURE_PROTOCOL}: the F-measure; lengths in "
        "words (characters for Chinese), answers and first references"
    ]
    return "\n".join([table, "", *notes, *(describe(f) for f in flags)])
