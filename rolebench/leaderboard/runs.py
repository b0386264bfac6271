"""From a run's results.json to leaderboard rows, what makes two rows comparable, and rows grouped by it.

Two rows may share a board (a ranking) only when they agree on the split, the scoring protocol
(name, reference handling, tokenizers), the judge (spec, prompt hash, protocol) and, for every task
they both have, the task version and the checksums of the data files read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import Any

from rolebench.data.splits import DEMO_ROOT, SPLITS
from rolebench.leaderboard.comparable import (
    data_block,
    dataset_label,
    family_of,
    judge_key,
    judge_label,
    protocol_key,
    split_fingerprints,
)
from rolebench.leaderboard.rows import (
    FLOOR,
    OURS,
    SPLIT_LABELS,
    Row,
    display_name,
    reference_data,
    split_members,
)
from rolebench.results.schema import RunResults
from rolebench.run.elicitation import elicitation_label
from rolebench.scoring.aggregate import GroupDef, flags_of, group_results
from rolebench.scoring.floors import FLOOR_SPECS
from rolebench.scoring.metrics import AVG, METRIC_KEYS
from rolebench.scoring.protocols import F_MEASURE_PROTOCOL, PAPER_PROTOCOL


def rows_from_run(run: RunResults, name: str, names: Mapping[str, str] | None = None) -> list[Row]:
    """One row per split (task group) the run covers; `names`: the names a user gives models (by run name
    or spec; `rows.display_name`)."""
    by_group: dict[str, list[str]] = {}
    for task, result in run.results.items():
        group = family_of(result.split)
        if group in SPLIT_LABELS:
            by_group.setdefault(group, []).append(task)
    return [_group_row(run, group, tasks, name, names or {}) for group, tasks in sorted(by_group.items())]


Entry = tuple[tuple[str, ...], dict[str, str], list[Row]]


def _matches(group: Entry, common: tuple[str, ...], parts: dict[str, str], width: int) -> bool:
    return group[0][:width] == common[:width] and all(group[1].get(k, v) == v for k, v in parts.items())


def group_rows(runs: Sequence[tuple[RunResults, str]], names: Mapping[str, str] | None = None) -> list[Entry]:
    """Rows grouped by comparability; complete rows claim boards first, rows missing a task join a match.
    A floor run's rows join every board that agrees on split, protocol and data, whatever its judge."""
    entries = [
        (row, *comparability(run.config.model_dump(), row))
        for run, name in runs
        for row in rows_from_run(run, name, names)
    ]
    entries.sort(key=lambda entry: (entry[0].source == FLOOR, bool(entry[0].missing_tasks)))
    grouped: list[Entry] = []
    for row, common, parts in entries:
        if row.source == FLOOR:
            boards = [g for g in grouped if _matches(g, common, parts, 2)]
            for group in boards:
                group[2].append(row)
            if boards:
                continue
        match = next((g for g in grouped if _matches(g, common, parts, len(common))), None)
        if match is None:
            grouped.append((common, dict(parts), [row]))
        else:
            match[1].update(parts)
            match[2].append(row)
    return grouped


def board_protocol(run: RunResults) -> str:
    """The protocol a run's rows show: the paper's (`rolellm`) when the run holds it, else its headline
    (results written before every run carried the paper's metric)."""
    held = run.config.scoring.get("protocols") or {}
    return PAPER_PROTOCOL if PAPER_PROTOCOL in held else str(run.config.scoring.get("protocol") or "unknown")


def _lengths(tasks: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    """Mean answer and reference lengths, and the shares cut at the token limit and looping, over a
    split's tasks, weighted by answers (Row field names)."""
    measured = [(t["lengths"], t.get("n_generated") or 0) for t in tasks if t.get("lengths")]
    answered = sum(n for _, n in measured)
    if not answered:
        return {}

    def weighted(key: str) -> float | None:
        found = [(lengths[key], n) for lengths, n in measured if lengths.get(key) is not None and n]
        return sum(v * n for v, n in found) / sum(n for _, n in found) if found else None

    return {
        "answer_words": weighted("answer_words_mean"),
        "reference_words": weighted("reference_words_mean"),
        "cut_at_limit": sum(lengths.get("n_cut") or 0 for lengths, _ in measured) / answered,
        "looping": sum(lengths.get("n_looping") or 0 for lengths, _ in measured) / answered,
    }


def _context(tasks: Sequence[Mapping[str, Any]]) -> tuple[float | None, float | None, float | None]:
    """(mean prompt tokens, mean seconds per answer, answers per second of wall-clock time) of a split's
    tasks: the means weighted by answers measured, the throughput over the tasks' generated answers and
    wall seconds together (None where a task of the split was not timed)."""
    found = [t["context"] for t in tasks if t.get("context")]
    tokens = [(c["prompt_tokens_mean"], c["n_prompt_tokens"]) for c in found if c.get("prompt_tokens_mean")]
    seconds = [(c["seconds_mean"], c["n_timed"]) for c in found if c.get("seconds_mean")]
    walls = [(c.get("n_wall") or 0, c.get("wall_seconds")) for c in found]
    timed = bool(walls) and len(found) == len(tasks) and all(n and s for n, s in walls)
    return (
        sum(v * n for v, n in tokens) / sum(n for _, n in tokens) if tokens else None,
        sum(v * n for v, n in seconds) / sum(n for _, n in seconds) if seconds else None,
        sum(n for n, _ in walls) / sum(float(s or 0) for _, s in walls) if timed else None,
    )


def _group_row(run: RunResults, group: str, tasks: list[str], name: str, names: Mapping[str, str]) -> Row:
    config = run.config.model_dump()
    model = config.get("model") or {}
    protocol = board_protocol(run)
    tasks_data = {t: _as_protocol(run.results[t].model_dump(), protocol) for t in tasks}
    stored = run.groups.get(group)
    if stored is None or sorted(stored.tasks) != sorted(tasks):
        stored = group_results(
            [GroupDef(group, tuple(tasks))],
            {t: run.results[t] for t in tasks},
            list(config["scoring"].get("protocols") or {}),
            str(model.get("spec") or ""),
        )[group]
    totals = _as_protocol(stored.model_dump(), protocol)
    f_measure = stored.model_dump().get(F_MEASURE_PROTOCOL) or {}
    present = {d["split"] for d in tasks_data.values()}
    spec = str(model.get("spec") or "")
    tokens, seconds, rate = _context(list(tasks_data.values()))
    row = Row(
        model=display_name(spec, name, names),
        spec=spec,
        source=FLOOR if spec in FLOOR_SPECS else OURS,
        split=group,
        flags=row_flags(tasks_data.values(), totals, protocol, spec),
        floors=dict(totals.get("floors") or {}),
        elicitation="" if spec.startswith("baseline:") else elicitation_label(config.get("elicitation")),
        prompt_tokens=tokens,
        seconds_per_answer=seconds,
        answers_per_s=rate,
        judge=judge_label(config.get("judge")),
        n=totals.get("n"),
        n_full=full_size([d["split"] for d in tasks_data.values()]),
        n_not_covered=sum(d.get("n_not_covered") or 0 for d in tasks_data.values()),
        limit=config.get("limit"),
        protocol=protocol,
        date=str(run.created)[:10],
        run=name,
        missing_tasks=[f"rolebench_{s}" for s in split_members(group) if s not in present],
        per_role=merge_per_role(tasks_data.values()),
    )
    values = {**_floats(totals, ""), **_floats(f_measure, "f_"), **_lengths(list(tasks_data.values()))}
    for field, value in values.items():
        setattr(row, field, value)
    row.dataset = dataset_label(config, group, split_fingerprints(config, group, present_splits(row)))
    row.revision = data_block(config, group).get("revision")
    _set_win_rate(row, totals, list(tasks_data.values()))
    judge = config.get("judge")
    if row.win_rate is not None and isinstance(judge, Mapping) and judge.get("limit"):
        row.notes.append(f"win rate on a judged sample of {judge['limit']} per task")
    return row


def row_flags(
    tasks: Iterable[Mapping[str, Any]], totals: Mapping[str, Any], protocol: str, spec: str
) -> list[str]:
    """The row's flags, recomputed under the board's protocol (it may not be the run's headline, and
    results written before flags existed have none): each task's, and `below-floor` for the split's."""
    inherited = [flag for task in tasks for flag in flags_of(task, task.get("floors") or {}, protocol, spec)]
    return flags_of(totals, totals.get("floors") or {}, protocol, spec, inherited)


def _floats(values: Mapping[str, Any], prefix: str) -> dict[str, float | None]:
    """The metric and avg values of a block, as Row fields (`prefix` + name)."""
    return {f"{prefix}{m}": values.get(m) for m in (*METRIC_KEYS, AVG)}


def _as_protocol(result: dict[str, Any], protocol: str) -> dict[str, Any]:
    """A task's or group's fields with `protocol`'s block as its metric values (the headline ones when
    that is the run's headline protocol, or the run predates protocol blocks)."""
    block = result.get(protocol)
    return {**result, **block} if isinstance(block, Mapping) else result


def merge_per_role(task_results: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per-role metrics of a split's tasks side by side: {role: {"n", "cus", "raw", "spe"}}."""
    merged: dict[str, dict[str, Any]] = {}
    for result in task_results:
        for role, values in (result.get("per_role") or {}).items():
            entry = merged.setdefault(role, {"n": 0})
            entry["n"] += values.get("n") or 0
            entry.update({m: values[m] for m in METRIC_KEYS if m in values})
    return dict(sorted(merged.items()))


def _set_win_rate(row: Row, totals: Mapping[str, Any], tasks: Sequence[Mapping[str, Any]]) -> None:
    """The group's win rate if the judge wrote one; else one task's, or the tasks' pooled rate (no CI)."""
    source: Mapping[str, Any] | None = totals if totals.get("win_rate") is not None else None
    judged = [t for t in tasks if t.get("win_rate") is not None]
    if source is None and len(judged) == 1:
        source = judged[0]
    if source is not None:
        row.win_rate, row.win_rate_ci = source["win_rate"], source.get("win_rate_ci")
        row.win_rate_lc, row.win_rate_lc_ci = source.get("win_rate_lc"), source.get("win_rate_lc_ci")
        row.wins, row.ties, row.losses = (source.get(k) for k in ("wins", "ties", "losses"))
    elif judged:
        counts = [sum(t.get(k) or 0 for k in ("wins", "ties", "losses")) or t.get("n") or 0 for t in judged]
        if sum(counts):
            row.win_rate = sum(t["win_rate"] * c for t, c in zip(judged, counts, strict=True)) / sum(counts)
            row.wins, row.ties, row.losses = (
                sum(t.get(k) or 0 for t in judged) for k in ("wins", "ties", "losses")
            )
            row.notes.append("win rate pooled over the split's tasks (no interval)")
    if row.win_rate is not None and not row.judge:
        row.judge = (
            judge_label(next((t.get("judge") for t in tasks if t.get("judge")), None)) or "unknown judge"
        )


def present_splits(row: Row) -> list[str]:
    return [s for s in split_members(row.split) if f"rolebench_{s}" not in row.missing_tasks]


def comparability(config: Mapping[str, Any], row: Row) -> tuple[tuple[str, str, str], dict[str, str]]:
    """What must match for two rows to share a board: (split, protocol, judge), and per task split its
    version and data files. A row missing a task joins any board that agrees on the tasks it has."""
    versions = {
        v.get("split"): v.get("version")
        for v in (config.get("tasks") or {}).values()
        if isinstance(v, Mapping)
    }
    splits = present_splits(row)
    fingerprints = split_fingerprints(config, row.split, splits)
    parts = {s: f"v{versions.get(s)}|{fingerprints[s]}" for s in splits}
    return (
        row.split,
        protocol_key(config.get("scoring"), row.protocol),
        judge_key(config.get("judge")),
    ), parts


@cache
def full_sizes() -> dict[str, int]:
    """Test-set sizes of every split: the packaged demo counted, RoleBench's from reference_results.yaml."""
    sizes = dict(reference_data().get("test_sizes", {}).get("splits", {}))
    for split in SPLITS.values():
        if split.builtin:
            test = DEMO_ROOT / split.file("test.jsonl")
            sizes[split.id] = sum(1 for line in test.read_text(encoding="utf-8").splitlines() if line.strip())
    return sizes


def full_size(split_ids: Sequence[str]) -> int | None:
    sizes = [full_sizes().get(s) for s in split_ids]
    return None if None in sizes else sum(sizes)  # type: ignore[arg-type]
