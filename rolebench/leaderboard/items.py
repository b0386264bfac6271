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

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from rolebench.errors import DataError
from rolebench.results.schema import RunResults
from rolebench.run.folder import RunFolder
from rolebench.storage.files import write_text_atomic
from rolebench.storage.jsonl import parse_json, read_json

ITEM_SCORES_FILE = "item_scores.json"
DIGITS = 6


Column = npt.NDArray[np.float64]


@dataclass(frozen=True)
class TaskScores:
    """One task's items: their ids and, per protocol and metric, each item's score (NaN: no value)."""

    split: str
    samples_sha256: str
    ids: list[str]
    scores: dict[str, dict[str, Column]]


RunScores = dict[str, TaskScores]  # task -> its items


def _column(values: list[Any]) -> Column | None:
    """Scores as a rounded float column (None and null: NaN); None if a value is not a number."""
    try:
        column = np.array(values, dtype=np.float64)  # None becomes NaN
    except (TypeError, ValueError):
        return None
    return np.round(column, DIGITS) if column.ndim == 1 else None


_ID, _SCORES = '{"id": ', '"protocol_scores": '


def _line_scores(line: str, where: str) -> tuple[str, dict[str, Any]]:
    """A samples line's id and per-protocol scores. `rolebench` writes `id` first and `protocol_scores` last
    (the record's field order), so both are decoded where they stand and the answer, prompt and references
    between them are never parsed; a line written otherwise is parsed whole. (Inside a JSON string every
    quote is escaped, so the key with its quotes cannot be matched within a text.)"""
    start, end = line.startswith(_ID), line.rfind(_SCORES)
    if start and end > 0:
        decoder = json.JSONDecoder()
        item, _ = decoder.raw_decode(line, len(_ID))
        scores, _ = decoder.raw_decode(line, end + len(_SCORES))
        if isinstance(scores, dict):
            return str(item), scores
    record = parse_json(line, where)
    found = record.get("protocol_scores") if isinstance(record, dict) else None
    return str(record.get("id") if isinstance(record, dict) else None), found if isinstance(
        found, dict
    ) else {}


def _from_samples(path: Path, text: str, split: str, digest: str) -> TaskScores:
    parsed = [_line_scores(line, f"{path}:{n}") for n, line in enumerate(text.split("\n"), 1) if line.strip()]
    ids = [item for item, _ in parsed]
    lines = [scores for _, scores in parsed]
    columns = dict.fromkeys((p, m) for line in lines for p, block in line.items() for m in block or {})
    scores: dict[str, dict[str, Column]] = {}
    for protocol, metric in columns:
        column = _column([(line.get(protocol) or {}).get(metric) for line in lines])
        if column is not None:
            scores.setdefault(str(protocol), {})[str(metric)] = column
    return TaskScores(split, digest, ids, scores)


def _from_copy(entry: Any, split: str, digest: str) -> TaskScores | None:
    if not isinstance(entry, Mapping) or entry.get("samples_sha256") != digest:
        return None
    ids, scores = entry.get("ids"), entry.get("scores")
    if not isinstance(ids, list) or not isinstance(scores, Mapping):
        return None
    table: dict[str, dict[str, Column]] = {}
    for protocol, block in scores.items():
        for metric, values in block.items() if isinstance(block, Mapping) else ():
            column = _column(values) if isinstance(values, list) else None
            if column is None or len(column) != len(ids):
                return None
            table.setdefault(str(protocol), {})[str(metric)] = column
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
        source = RunFolder(folder).samples_path(task) if RunFolder(folder).samples_dir.is_dir() else None
        data = source.read_bytes() if source is not None and source.is_file() else b""
        if source is not None and hashlib.sha256(data).hexdigest() == digest:  # what results.json is from
            found[task] = _from_samples(source, data.decode("utf-8"), result.split, digest)
        elif isinstance(copy, Mapping) and (scores := _from_copy(copy.get(task), result.split, digest)):
            found[task] = scores
    return found


def _lists(scores: Mapping[str, Mapping[str, Column]]) -> dict[str, dict[str, list[float | None]]]:
    return {
        p: {m: [None if v != v else v for v in column.tolist()] for m, column in block.items()}
        for p, block in scores.items()
    }


def write_item_scores(folder: Path, scores: RunScores) -> Path | None:
    """OUT/results/<run>/item_scores.json (atomically); None when there is nothing to write."""
    if not scores:
        return None
    document = {
        "about": "per-item ROUGE-L scores behind results.json (rank intervals); no text",
        "tasks": {
            task: {
                "split": s.split,
                "samples_sha256": s.samples_sha256,
                "ids": s.ids,
                "scores": _lists(s.scores),
            }
            for task, s in sorted(scores.items())
        },
    }
    path = folder / ITEM_SCORES_FILE
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"
    if not (path.is_file() and path.read_text(encoding="utf-8") == text):  # a rebuild rewrites nothing
        write_text_atomic(path, text)
    return path
