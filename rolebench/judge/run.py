"""GPT-judge win rate against the RoleGPT baseline, for a saved run: `judge_run(run_dir, spec, settings=...)`.

Reads DIR/samples/<task>.jsonl, asks the judge (any adapter spec) to rank the model's answer and
the RoleGPT baseline answer with the paper's prompt (anonymised, in both orders), and writes
- DIR/judgments/<task>.jsonl: per sample the outcome and, per order, the verdict and raw texts;
- DIR/results.json: the judge fields (`rolebench.judge_score.judge_fields`) on every task and
  group, and `config.judge` (spec, info, template hash, protocol, settings, tokens, cost).
Completions are cached in the user cache dir (`rolebench.judge_store`), so a re-run is free.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from model_adapters import ModelSpec, model_identity, preflight
from rolebench.cached_model import CachedModel
from rolebench.errors import ConfigError, ModelError
from rolebench.judge.calls import JudgeCaller, Slot
from rolebench.judge.config import DEFAULT_JUDGE, JudgeConfig, load_judge_config, load_price_table, run_cost
from rolebench.judge.outcomes import ORDERS, Pair, judge_fields, pair_line
from rolebench.judge.store import open_judgment_store
from rolebench.results.io import read_results, read_samples, write_results
from rolebench.results.provenance import command_line, now_iso
from rolebench.results.schema import GroupResult, RunResults, SampleRecord, TaskResult
from rolebench.storage.files import write_jsonl_atomic
from rolebench.storage.records import content_key

JUDGMENTS_DIR = "judgments"


@dataclass(frozen=True)
class JudgeSettings:
    """How to judge (everything but the judge spec). `limit`: a seeded sample of N pairs per task."""

    limit: int | None = None
    concurrency: int = 8
    base_url: str | None = None
    progress: bool = True
    price_table: Path | None = None
    reparse: bool = False
    judge_config: str = DEFAULT_JUDGE
    seed: int = 0
    model_options: Mapping[str, Any] = field(default_factory=dict)
    cache_dir: Path | None = None

    def adapter_options(self) -> dict[str, Any]:
        options = dict(self.model_options)
        if self.base_url:
            options["base_url"] = self.base_url
        return options


def select_pairs(task: str, records: Sequence[SampleRecord], settings: JudgeSettings) -> list[Pair]:
    """Every sample as a Pair against its RoleGPT baseline answer, limited by `limit_pairs`."""
    return limit_pairs(task, [Pair.of(r, r.baseline) for r in records], settings)


def limit_pairs(task: str, pairs: Sequence[Pair], settings: JudgeSettings) -> list[Pair]:
    """The pairs; with a limit, a seeded sample of N candidates (the rest `not_sampled`).

    The sample is the N candidates with the smallest hash of (seed, task, id): deterministic, and a
    larger N keeps every pair a smaller N chose.
    """
    if settings.limit is None:
        return list(pairs)
    candidates = [p for p in pairs if p.status == "candidate"]
    ranked = sorted(candidates, key=lambda p: content_key("judge-sample", settings.seed, task, p.id))
    chosen = {p.id for p in ranked[: settings.limit]}
    return [
        replace(p, status="not_sampled") if p.status == "candidate" and p.id not in chosen else p
        for p in pairs
    ]


def build_slots(task: str, pairs: Sequence[Pair], config: JudgeConfig, seed: int) -> dict[str, list[Slot]]:
    """The (pair, order) slots of a task's candidates: both orders, or one seeded order per pair."""
    slots: dict[str, list[Slot]] = {}
    for pair in pairs:
        if pair.status != "candidate":
            continue
        orders: tuple[str, ...] = ORDERS
        if not config.both_orders:
            orders = (ORDERS[int(content_key("judge-order", seed, task, pair.id), 16) % 2],)
        slots[pair.id] = [
            Slot(
                pair_id=f"{task}::{pair.id}",
                order=order,
                messages=config.messages(
                    role=pair.role,
                    description=pair.description,
                    question=pair.question,
                    language=pair.language,
                    answers=pair.answers(order),
                ),
            )
            for order in orders
        ]
    return slots


def leaf_tasks(name: str, results: RunResults, seen: tuple[str, ...] = ()) -> list[str]:
    """The tasks under a task or group name (a group's members, recursively)."""
    if name in results.results:
        return [name]
    group = results.groups.get(name)
    if group is None or name in seen:
        return []
    return [leaf for member in group.tasks for leaf in leaf_tasks(member, results, (*seen, name))]


def update_results(
    results: RunResults, lines: Mapping[str, list[dict[str, Any]]], block: dict[str, Any]
) -> dict[str, Any]:
    """Put the judge fields on every task and group and `block` in config.judge; return the fields."""
    bootstrap = results.config.bootstrap
    tasks = {task: judge_fields(task_lines, bootstrap) for task, task_lines in lines.items()}
    for task, fields in tasks.items():
        results.results[task] = TaskResult(**{**results.results[task].model_dump(), **fields})
    groups, by_members = {}, {}
    for name, group in results.groups.items():
        leaves = tuple(leaf for leaf in leaf_tasks(name, results) if leaf in lines)
        if leaves not in by_members:  # the same pooled lines give the same fields (seeded bootstrap)
            by_members[leaves] = (
                tasks[leaves[0]]
                if len(leaves) == 1
                else judge_fields([line for leaf in leaves for line in lines[leaf]], bootstrap)
            )
        groups[name] = by_members[leaves]
        results.groups[name] = GroupResult(**{**group.model_dump(), **groups[name]})
    results.config.judge = block
    return {"results": tasks, "groups": groups}


def _judge_block(
    spec: str, info: dict[str, Any], config: JudgeConfig, settings: JudgeSettings, spent: dict[str, Any]
) -> dict[str, Any]:
    return {
        "spec": spec,
        "info": info,
        **config.describe(),
        "limit": settings.limit,
        "seed": settings.seed,
        "concurrency": settings.concurrency,
        **spent,
        "judged_at": now_iso(),
        "command": command_line(),
    }


def _spending(
    spec: str, info: dict[str, Any], caller: JudgeCaller, prices: dict[str, tuple[float, float]] | None
) -> dict[str, Any]:
    """Tokens and cost of every completion behind the numbers, and of the calls made this time."""
    usage, this_run = caller.usage(), caller.stats.describe()
    spent: dict[str, Any] = {"usage": usage, "this_run": this_run, "cost_usd": None}
    if prices is not None:
        names = [str(info.get("name")), ModelSpec.parse(spec, where="--judge").name, spec]
        spent["cost_usd"] = run_cost(prices, names, usage)
        this_run["cost_usd"] = run_cost(prices, names, this_run)
        spent["price_per_1m"] = next(
            ({"input": prices[n][0], "output": prices[n][1], "model": n} for n in names if n in prices), None
        )
    return spent


def prepare_judge(
    judge_spec: str, settings: JudgeSettings, *, environment: bool = True
) -> tuple[JudgeConfig, dict[str, tuple[float, float]] | None]:
    """Check everything about a judge before any work (spec, options, judge file, price table and, with
    `environment`, what its backend needs from this machine: an API key, a local server that answers):
    one line for whatever is wrong. The judge's definition and the price table."""
    if settings.limit is not None and settings.limit < 1:
        raise ConfigError("--judge-limit must be at least 1", where="--judge-limit")
    if settings.concurrency < 1:
        raise ConfigError("--concurrency must be at least 1", where="--concurrency")
    spec = ModelSpec.parse(judge_spec, where="--judge")
    try:
        model_identity(spec, settings.adapter_options())
    except ConfigError as exc:
        raise ConfigError(
            exc.what, where=exc.where if exc.where != "--model" else "--judge", fix=exc.fix
        ) from None
    config = load_judge_config(settings.judge_config)
    prices = load_price_table(settings.price_table) if settings.price_table else None
    if environment:  # last: what this machine must give the judge (its key, its local server)
        try:
            preflight(spec, **settings.adapter_options())
        except (ConfigError, ModelError) as exc:
            where = f"--judge: {exc.where}" if exc.where else "--judge"
            raise type(exc)(exc.what, where=where, fix=exc.fix) from None
    return config, prices


@dataclass
class Judged:
    """Judge lines per task (one per pair, `pair_line`) and the `config.judge`-style block of the judging."""

    lines: dict[str, list[dict[str, Any]]]
    block: dict[str, Any]


def judge_pairs(
    pairs: Mapping[str, Sequence[Pair]], judge_spec: str, settings: JudgeSettings, started: float
) -> Judged:
    """Judge every candidate pair (both orders, or one seeded order) through the judgment cache."""
    config, prices = prepare_judge(judge_spec, settings)
    slots = {task: build_slots(task, task_pairs, config, settings.seed) for task, task_pairs in pairs.items()}
    all_slots = [slot for by_pair in slots.values() for pair_slots in by_pair.values() for slot in pair_slots]
    with open_judgment_store(settings.cache_dir) as store:
        judge = CachedModel(judge_spec, settings.adapter_options(), store)
        try:
            caller = JudgeCaller(
                judge,
                config,
                store,
                concurrency=settings.concurrency,
                reparse=settings.reparse,
                progress=settings.progress,
            )
            caller.settle(all_slots)
            info = judge.info()
        finally:
            judge.close()
        cache = str(store.path)
    lines = {
        task: [pair_line(p, slots[task].get(p.id, [])) for p in task_pairs]
        for task, task_pairs in pairs.items()
    }
    spent = _spending(judge_spec, info, caller, prices)
    block = _judge_block(judge_spec, info, config, settings, spent)
    block.update(
        cache=cache, judge_loaded=judge.loaded, timings={"judge_s": round(time.perf_counter() - started, 3)}
    )
    return Judged(lines, block)


def judge_run(run_dir: Path, judge_spec: str, *, settings: JudgeSettings = JudgeSettings()) -> dict[str, Any]:
    """Judge (or re-judge) a run folder's saved generations and update DIR/results.json atomically.

    Returns `{"judge": config.judge block, "results": {task: fields}, "groups": {group: fields}}`.
    """
    started = time.perf_counter()
    run_dir = Path(run_dir)
    prepare_judge(judge_spec, settings)  # a bad judge fails before any file is read
    results = read_results(run_dir)
    pairs = {task: select_pairs(task, read_samples(run_dir, task), settings) for task in results.results}
    judged = judge_pairs(pairs, judge_spec, settings, started)
    for task, task_lines in judged.lines.items():
        write_jsonl_atomic(run_dir / JUDGMENTS_DIR / f"{task}.jsonl", task_lines)
    fields = update_results(results, judged.lines, judged.block)
    write_results(run_dir, results)
    return {"judge": judged.block, **fields}
