"""The leaderboard: results.json files collected into boards, beside the paper's reported rows.

A row is one model on one split (a task group: `rolebench_eng_instruct`, `rolebench_eng_role`,
`rolebench_zh`, or the packaged demo `rolebench_demo`). Rows are ranked only against rows made the
same way: a **board** is one (split, scoring protocol, judge, and per task its version and data
files; see `rolebench.leaderboard.runs.comparability`). Rows of different boards are shown in separate
tables and never share a ranking. The paper's numbers form their own board per split ("reported
(paper)"), shown beside ours. Inside a board only complete rows are ranked (no `--limit` cut, every
task of the split present); partial rows are listed after them, flagged, without a rank.

Rendering lives in `rolebench.leaderboard.tables` (Markdown, CSV, LaTeX) and `webpage` (the web page).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rolebench.errors import DataError
from rolebench.leaderboard.items import RunScores, read_item_scores
from rolebench.leaderboard.ranking import add_rank_intervals
from rolebench.leaderboard.rows import (
    FLOOR,
    OURS,
    REPORTED,
    SPLIT_LABELS,
    Board,
    Row,
    n_display,
    reference_data,
    reference_rows,
)
from rolebench.leaderboard.runs import group_rows
from rolebench.results.schema import RunResults
from rolebench.run.folder import RESULTS_FILE, read_results
from rolebench.scoring.floors import FLOOR_NAMES
from rolebench.scoring.metrics import AVG, LABELS, METRIC_KEYS, named
from rolebench.scoring.protocols import F_MEASURE_PROTOCOL

__all__ = [
    "FLOOR",
    "OURS",
    "REPORTED",
    "SPLIT_LABELS",
    "Board",
    "Row",
    "build_boards",
    "collect",
    "collect_scored",
    "find_results",
    "n_display",
    "rank_rows",
    "reference_rows",
]


def find_results(paths: Iterable[str | Path]) -> list[tuple[Path, str]]:
    """Every results.json under the given files or folders (recursively), with a short run name each."""
    found: dict[Path, str] = {}
    for given in map(Path, paths):
        if given.is_file():
            found.setdefault(given.resolve(), given.parent.name or str(given))
        elif given.is_dir():
            for path in sorted(given.rglob(RESULTS_FILE)):
                relative = path.parent.relative_to(given).as_posix()
                found.setdefault(path.resolve(), relative if relative != "." else given.resolve().name)
        else:
            raise DataError(
                "no such file or folder", where=str(given), fix="pass run folders or results.json files"
            )
    if not found:
        raise DataError(
            f"no {RESULTS_FILE} found",
            where=", ".join(map(str, paths)),
            fix="pass folders written by `rolebench evaluate`",
        )
    return list(found.items())


def _board_id(split: str, key: tuple[str, ...]) -> str:
    return f"{split}-{hashlib.sha256(json.dumps(key).encode()).hexdigest()[:8]}"


def _competition_ranks(rows: Sequence[Row], value: Callable[[Row], float | None]) -> dict[int, int]:
    """Competition ranks (1, 2, 2, 4) of the rows by `value`, highest first: {id(row): rank}."""
    ordered = sorted(rows, key=lambda r: -(value(r) or 0.0))
    ranks: dict[int, int] = {}
    previous: tuple[float | None, int] = (None, 0)
    for position, row in enumerate(ordered, 1):
        rank = previous[1] if value(row) == previous[0] else position
        ranks[id(row)] = rank
        previous = (value(row), rank)
    return ranks


def measured(row: Row) -> tuple[tuple[str, ...], int]:
    """What a row's avg is the mean of: its metrics with a value, and the number of items it covers."""
    return tuple(m for m in METRIC_KEYS if getattr(row, m) is not None), (row.n or 0) - (
        row.n_not_covered or 0
    )


def describe_measured(key: tuple[tuple[str, ...], int]) -> str:
    """`CUS and SPE over 1,690 items`."""
    return f"{named([LABELS[m] for m in key[0]] or ['no metric'])} over {key[1]:,} items"


def _reference_measure(rows: Sequence[Row]) -> tuple[tuple[str, ...], int] | None:
    """What the board's ranked rows average: the measure most complete rows share (ties: more metrics,
    then more items); without complete rows, that of the rows of ours; None without either."""
    complete = [r for r in rows if not r.partial and r.avg is not None and r.source != FLOOR]
    pool = complete or [r for r in rows if r.avg is not None and r.source != FLOOR]
    if not pool:
        return None
    keys = [measured(r) for r in pool]
    return max(set(keys), key=lambda k: (keys.count(k), len(k[0]), k[1]))


def mark_comparable(rows: Sequence[Row]) -> None:
    """A row (a floor included) whose avg is the mean of other metrics or over other items than the board's
    ranked rows' is not ranked against them nor drawn beside them, and its note says why."""
    reference = _reference_measure(rows)
    if reference is None:
        return
    kind = "partial" if all(r.partial for r in rows if r.source != FLOOR) else "ranked"
    for row in rows:
        if row.avg is not None and not row.partial and measured(row) != reference:
            row.not_comparable = (
                f"not comparable: its avg is over {describe_measured(measured(row))}, the {kind} rows' over "
                f"{describe_measured(reference)}"
            )


def rank_rows(rows: list[Row]) -> list[Row]:
    """Complete rows by avg (highest first) with competition ranks, and their ranks by the F-measure's
    avg (`rank_f`); partial rows after them, then the floors and the rows not comparable with the ranked
    ones (`mark_comparable`), unranked."""
    mark_comparable(rows)

    def order(row: Row) -> tuple[Any, ...]:
        floor = row.source == FLOOR
        apart = bool(row.not_comparable)
        return (floor, apart, row.partial, row.avg is None, -(row.avg or 0.0), row.model.lower(), row.run)

    ordered = sorted(rows, key=order)
    ranked = [
        r
        for r in ordered
        if not r.partial and r.avg is not None and r.source != FLOOR and not r.not_comparable
    ]
    by_avg = _competition_ranks(ranked, lambda r: r.avg)
    with_f = [r for r in ranked if r.f_avg is not None]
    by_f = _competition_ranks(with_f, lambda r: r.f_avg)
    for row in ordered:
        row.rank = by_avg.get(id(row))
        row.rank_f = by_f.get(id(row))
    return ordered


def floor_rows(rows: Sequence[Row], protocol: str) -> list[Row]:
    """The floors of a board that no floor run on the ranked rows' items shows (`_reference_measure`): each
    row records them on the items it answered, so they are taken from a row on those items (else the
    row that answered the most), and say so."""
    reference = _reference_measure(rows)
    items = reference[1] if reference else None
    present = {r.spec for r in rows if r.source == FLOOR and measured(r)[1] == items}
    candidates = [r for r in rows if r.floors and r.source != FLOOR]
    if not candidates:
        return []
    source = max(candidates, key=lambda r: (measured(r)[1] == items, measured(r)[1], not r.partial))
    found = []
    for spec, block in source.floors.items():
        if spec in present or not any(v is not None for v in (block.get(protocol) or {}).values()):
            continue
        row = Row(
            model=FLOOR_NAMES.get(spec, spec),
            spec=spec,
            source=FLOOR,
            split=source.split,
            n=(source.n or 0) - (source.n_not_covered or 0),
            protocol=protocol,
            dataset=source.dataset,
            date=source.date,
            run=source.run,
            missing_tasks=list(source.missing_tasks),
            notes=[f"scored on the items {source.run} answered"],
        )
        values, f_values = block.get(protocol) or {}, block.get(F_MEASURE_PROTOCOL) or {}
        for metric in (*METRIC_KEYS, AVG):
            setattr(row, metric, values.get(metric))
            setattr(row, f"f_{metric}", f_values.get(metric))
        found.append(row)
    return found


def build_boards(
    runs: Sequence[tuple[RunResults, str]],
    *,
    reference: bool = True,
    names: Mapping[str, str] | None = None,
) -> list[Board]:
    """Group rows into boards (see the module docstring), ordered by split, ours before the paper's.

    With `reference`, the paper's board of each split that has rows of ours is added. `names`: the names a
    user gives models, by model spec or run name. Rank intervals are `collect_scored`'s.
    """
    boards = []
    for common, parts, rows in group_rows(runs, names):
        first = rows[0]
        rows = rows + floor_rows(rows, first.protocol)
        name = first.dataset.split(" · ")[0]
        digest = hashlib.sha256(json.dumps(sorted(parts.items())).encode()).hexdigest()[:8]
        boards.append(
            Board(
                _board_id(first.split, (*common, *(f"{k}={v}" for k, v in sorted(parts.items())))),
                first.split,
                first.protocol,
                f"{name} · {digest}",
                first.judge,
                False,
                rank_rows(rows),
            )
        )
    if reference:
        for group in sorted({b.split for b in boards}):
            rows = [r for r in reference_rows() if r.split == group]
            if rows:
                boards.append(
                    Board(
                        f"{group}-paper",
                        group,
                        rows[0].protocol,
                        rows[0].dataset,
                        reference_data()["splits"][group]["judge"],
                        True,
                        rank_rows(rows),
                    )
                )
    order = list(SPLIT_LABELS)
    boards.sort(key=lambda b: (order.index(b.split), b.reference, b.protocol, b.dataset, b.judge, b.id))
    for board in boards:
        for row in board.rows:
            row.board = board.id
    return boards


def ranked_together(board: Board) -> list[str]:
    """The runs of a board's ranked rows when there are two or more (one alone is first, no resampling)."""
    runs = [r.run for r in board.rows if r.rank is not None]
    return runs if len(runs) > 1 else []


def collect_scored(
    paths: Iterable[str | Path], *, reference: bool = True, names: Mapping[str, str] | None = None
) -> tuple[list[Board], dict[str, RunScores]]:
    """Read every results.json under `paths`, build the boards, and give their ranked rows rank intervals
    from their runs' per-item scores (read only for boards of two or more ranked rows); the boards and the
    scores read."""
    found = find_results(paths)
    runs = [(read_results(path), name) for path, name in found]
    boards = build_boards(runs, reference=reference, names=names)
    ranked = {run for b in boards if not b.reference for run in ranked_together(b)}
    scores = {
        name: read_item_scores(path, results)
        for (path, name), (results, _) in zip(found, runs, strict=True)
        if name in ranked
    }
    for board in boards:
        add_rank_intervals(board, scores)
    return boards, scores


def collect(
    paths: Iterable[str | Path], *, reference: bool = True, names: Mapping[str, str] | None = None
) -> list[Board]:
    """Read every results.json under `paths` (and the ranked runs' per-item scores) and build the boards."""
    return collect_scored(paths, reference=reference, names=names)[0]
