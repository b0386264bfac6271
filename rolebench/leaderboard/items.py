"""A run's per-item scores, as the leaderboard's rank intervals need them: read from the run's samples files,
or, in a built leaderboard folder, from the compact copy written beside each results.json.

```
OUT/results/<run>/item_scores.json   {"tasks": {task: {"split", "samples_sha256", "ids",
                                                         "scores": {protocol: {metric: [value or null]}}}}}
```
Scores are kept to 6 decimals (from either source, so a rebuild from OUT/results gives the same intervals)
and hold no text: a built folder never carries answers or the data's references. A task's scores are used
only when they come from the samples file its results.json was computed from (`samples_sha256`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rolebench.errors import DataError
from rolebench.results.io import SAMPLES_DIR, samples_path
from rolebench.results.schema import RunResults
from rolebench.storage.files import write_text_atomic
from rolebench.storage.jsonl import read_json, read_jsonl

ITEM_SCORES_FILE = "item_scores.json"
DIGITS = 6


@dataclass(frozen=True)
class TaskScores:
    """One task's items: their ids and, per protocol and metric, each item's score (None: no value)."""

    split: str
    samples_sha256: str
    ids: list[str]
    scores: dict[str, dict[str, list[float | None]]]


RunScores = dict[str, TaskScores]  # task -> its items


def _rounded(value: Any) -> float | None:
    return (
        round(float(value), DIGITS)
        if isinstance(value, int | float) and not isinstance(value, bool)
        else None
    )


def _from_samples(path: Path, split: str, digest: str) -> TaskScores:
    records = list(read_jsonl(path))
    ids = [str(record.get("id")) for record in records]
    lines = [record.get("protocol_scores") or {} for record in records]
    columns = dict.fromkeys((p, m) for line in lines for p, block in line.items() for m in block or {})
    scores: dict[str, dict[str, list[float | None]]] = {}
    for protocol, metric in columns:
        scores.setdefault(str(protocol), {})[str(metric)] = [
            _rounded((line.get(protocol) or {}).get(metric)) for line in lines
        ]
    return TaskScores(split, digest, ids, scores)


def _from_copy(entry: Any, split: str, digest: str) -> TaskScores | None:
    if not isinstance(entry, Mapping) or entry.get("samples_sha256") != digest:
        return None
    ids, scores = entry.get("ids"), entry.get("scores")
    if not isinstance(ids, list) or not isinstance(scores, Mapping):
        return None
    table = {
        str(p): {
            str(m): [_rounded(v) for v in values] for m, values in block.items() if isinstance(values, list)
        }
        for p, block in scores.items()
        if isinstance(block, Mapping)
    }
    if any(len(values) != len(ids) for block in table.values() for values in block.values()):
        return None
    return TaskScores(split, digest, [str(i) for i in ids], table)


def read_item_scores(results_file: Path, results: RunResults) -> RunScores:
    """Each task's per-item scores, where a source matching its results.json is found (else the task is
    absent): the run folder's samples file, else a built folder's item_scores.json."""
    folder = results_file.parent
    copy: Any = {}
    if (folder / ITEM_SCORES_FILE).is_file():
        try:
            document = read_json(folder / ITEM_SCORES_FILE)
        except DataError:  # a damaged copy only costs the rank intervals, never the tables
            document = {}
        copy = document.get("tasks") if isinstance(document, Mapping) else {}
    found: RunScores = {}
    for task, result in results.results.items():
        digest = result.samples_sha256
        if not digest:
            continue
        source = samples_path(folder, task) if (folder / SAMPLES_DIR).is_dir() else None
        if source is not None and source.is_file() and _digest(source) == digest:
            found[task] = _from_samples(source, result.split, digest)
        elif isinstance(copy, Mapping) and (scores := _from_copy(copy.get(task), result.split, digest)):
            found[task] = scores
    return found


def _digest(path: Path) -> str:
    from model_adapters.files import file_sha256

    return file_sha256(path)


def write_item_scores(folder: Path, scores: RunScores) -> Path | None:
    """OUT/results/<run>/item_scores.json (atomically); None when there is nothing to write."""
    if not scores:
        return None
    document = {
        "about": "per-item ROUGE-L scores behind results.json (rank intervals); no text",
        "tasks": {
            task: {"split": s.split, "samples_sha256": s.samples_sha256, "ids": s.ids, "scores": s.scores}
            for task, s in sorted(scores.items())
        },
    }
    path = folder / ITEM_SCORES_FILE
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"
    if not (path.is_file() and path.read_text(encoding="utf-8") == text):  # a rebuild rewrites nothing
        write_text_atomic(path, text)
    return path
