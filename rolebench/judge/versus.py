"""`rolebench judge RUN --against OTHER`: one run's answers against another run's, head to head.

The items both runs hold (a task of both, joined by sample id, with the same role and question) are
judged by `rolebench.judge.run.judge_pairs`, the machinery of the baseline win rate: the judge file's
prompt (the paper's ranking prompt by default), anonymised, both orders, retries, cached completions,
a seeded `--judge-limit`. OTHER's answer takes the place of the RoleGPT baseline answer, so a win is an
item where RUN's answer is preferred, and `win_rate`, its interval and counts are RUN's
(`rolebench.judge.outcomes.judge_fields`). The fields go into RUN/results.json under
`results[task]["versus"][KEY]` and, pooled over a group's tasks, `groups[group]["versus"][KEY]`, where
KEY names OTHER's model spec and elicitation (`versus_key`); `config.versus[KEY]` says how they were
made, and RUN/judgments/versus/<KEY, file-safe>/<task>.jsonl holds every verdict.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rolebench.errors import ConfigError
from rolebench.judge.outcomes import Pair, judge_fields
from rolebench.judge.run import JUDGMENTS_DIR, JudgeSettings, judge_pairs, leaf_tasks, limit_pairs
from rolebench.prompts.elicitation import elicitation_label
from rolebench.results.io import read_results, read_samples, write_results
from rolebench.results.schema import GroupResult, RunResults, TaskResult
from rolebench.storage.files import write_jsonl_atomic

VERSUS = "versus"


def versus_key(results: RunResults) -> str:
    """A run named as an opponent: its model spec and elicitation, e.g. `smollm2:135m (zero-shot)`."""
    spec = results.config.model.get("spec") or results.config.model.get("name") or "unknown model"
    return f"{spec} ({elicitation_label(results.config.elicitation)})"


def shared_pairs(run_dir: Path, other_dir: Path, run: RunResults, other: RunResults) -> dict[str, list[Pair]]:
    """Per task both runs hold, a Pair per item both hold (same id, role and question), in RUN's order.

    One ConfigError line when they share no task, or no item.
    """
    tasks = [task for task in run.results if task in other.results]
    if not tasks:
        raise ConfigError(
            f"{run_dir} and {other_dir} share no task ({', '.join(run.results) or 'none'} vs "
            f"{', '.join(other.results) or 'none'})",
            where="--against",
            fix="compare two runs of the same tasks",
        )
    pairs: dict[str, list[Pair]] = {}
    for task in tasks:
        theirs = {r.id: r for r in read_samples(other_dir, task)}
        found = [
            Pair.of(mine, theirs[mine.id].output)
            for mine in read_samples(run_dir, task)
            if mine.id in theirs
            and (mine.role, mine.question) == (theirs[mine.id].role, theirs[mine.id].question)
        ]
        if found:
            pairs[task] = found
    if not pairs:
        raise ConfigError(
            f"{run_dir} and {other_dir} share no item of {', '.join(tasks)} (no sample id with the same "
            "role and question in both)",
            where="--against",
            fix="compare runs of the same data (a --limit sample is seeded: use the same --limit and seed)",
        )
    return pairs


def _slug(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", key).strip("_") or "other"


def _record(
    run: RunResults, key: str, lines: Mapping[str, list[dict[str, Any]]], block: dict[str, Any]
) -> dict[str, Any]:
    """Put the versus fields on RUN's tasks and groups (other opponents kept) and the block in config."""
    bootstrap = run.config.bootstrap
    fields: dict[str, Any] = {"results": {}, "groups": {}}
    for task, task_lines in lines.items():
        entry = {**judge_fields(task_lines, bootstrap), "n_shared": len(task_lines)}
        fields["results"][task] = entry
        data = run.results[task].model_dump()
        run.results[task] = TaskResult(**{**data, VERSUS: {**(data.get(VERSUS) or {}), key: entry}})
    for name, group in run.groups.items():
        leaves = [leaf for leaf in leaf_tasks(name, run) if leaf in lines]
        if not leaves:
            continue
        pooled = [line for leaf in leaves for line in lines[leaf]]
        entry = {**judge_fields(pooled, bootstrap), "n_shared": len(pooled)}
        fields["groups"][name] = entry
        data = group.model_dump()
        run.groups[name] = GroupResult(**{**data, VERSUS: {**(data.get(VERSUS) or {}), key: entry}})
    run.config.versus = {**(run.config.versus or {}), key: block}
    return fields


def judge_versus(
    run_dir: Path, other_dir: Path, judge_spec: str, *, settings: JudgeSettings | None = None
) -> dict[str, Any]:
    """Judge RUN's answers against OTHER's on the items both hold; update RUN/results.json atomically.

    Returns `{"key": KEY, "judge": the block, "folder": its judgments, "results": {task: fields},
    "groups": {group: fields}}`.
    """
    started = time.perf_counter()
    settings = settings or JudgeSettings()
    run_dir, other_dir = Path(run_dir), Path(other_dir)
    if run_dir.resolve() == other_dir.resolve():
        raise ConfigError(
            "a run cannot be judged against itself", where="--against", fix="name another run folder"
        )
    run, other = read_results(run_dir), read_results(other_dir)
    key = versus_key(other)
    shared = shared_pairs(run_dir, other_dir, run, other)
    pairs: dict[str, Sequence[Pair]] = {
        task: limit_pairs(task, task_pairs, settings) for task, task_pairs in shared.items()
    }
    judged = judge_pairs(pairs, judge_spec, settings, started)
    folder = run_dir / JUDGMENTS_DIR / VERSUS / _slug(key)
    for task, task_lines in judged.lines.items():
        write_jsonl_atomic(folder / f"{task}.jsonl", task_lines)
    block = {
        **judged.block,
        "against": {
            "run": str(other_dir.resolve()),
            "model": other.config.model.get("spec"),
            "elicitation": other.config.elicitation or {"method": "zero-shot", "shots": 0},
            "created": other.created,
        },
        "this_run_is": "model (a win: the judge prefers this run's answer)",
    }
    fields = _record(run, key, judged.lines, block)
    write_results(run_dir, run)
    return {"key": key, "judge": block, "folder": str(folder), **fields}
