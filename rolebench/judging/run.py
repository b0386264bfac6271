"""GPT-judge win rate against the RoleGPT baseline, for a saved run (`judge_run`).

Asks the judge (any adapter spec) to rank the model's answer and the RoleGPT baseline answer with the
paper's prompt (anonymised, in both orders) and writes one judge folder of the run
(`rolebench.judging.sets`): per task, per sample, the outcome and, per order, the verdict and raw texts,
and judge.json (spec, info, template hash, protocol, settings, tokens, cost). The win-rate fields of
results.json are derived from these files (`rolebench.judging.results`). Completions are cached in the
user cache dir (`rolebench.judging.store`), so a re-run is free.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from model_adapters import ModelSpec, model_identity, preflight
from rolebench.cached_model import CachedModel
from rolebench.errors import ConfigError, ModelError
from rolebench.judging.calls import JudgeCaller, Slot
from rolebench.judging.config import JudgeConfig, load_judge_config, load_price_table, run_cost
from rolebench.judging.outcomes import ORDERS, Pair, pair_line
from rolebench.judging.sets import endpoint, judge_identity, judge_model_identity, judge_set, write_pass
from rolebench.judging.settings import JudgeSettings
from rolebench.judging.store import open_judgment_store
from rolebench.results.provenance import command_line, now_iso
from rolebench.results.schema import SampleRecord
from rolebench.run.folder import JudgmentSet, RunFolder
from rolebench.storage.records import content_key


def limit_pairs(task: str, pairs: Sequence[Pair], settings: JudgeSettings) -> list[Pair]:
    """The pairs; with a limit, a seeded sample of N candidates (the rest `not_sampled`).

    The sample is the N candidates with the smallest hash of (seed, task, id): deterministic, and a
    larger N keeps every pair a smaller N chose.
    """
    if settings.judge_limit is None:
        return list(pairs)
    candidates = [p for p in pairs if p.status == "candidate"]
    ranked = sorted(candidates, key=lambda p: content_key("judge-sample", settings.seed, task, p.id))
    chosen = {p.id for p in ranked[: settings.judge_limit]}
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
    """One judging pass: its lines per task (one per pair, `pair_line`), how it was made (judge.json),
    and the set of judgments it went into."""

    lines: dict[str, list[dict[str, Any]]]
    block: dict[str, Any]
    judgments: JudgmentSet | None = None


def judge_pairs(pairs: Mapping[str, Sequence[Pair]], judge_spec: str, settings: JudgeSettings) -> Judged:
    """Judge every candidate pair (both orders, or one seeded order) through the judgment cache."""
    started = time.perf_counter()
    config, prices = prepare_judge(judge_spec, settings)
    identity = judge_identity(judge_spec, settings, config)
    slots = {task: build_slots(task, task_pairs, config, settings.seed) for task, task_pairs in pairs.items()}
    all_slots = [slot for by_pair in slots.values() for pair_slots in by_pair.values() for slot in pair_slots]
    with open_judgment_store(settings.cache_dir) as store:
        judge = CachedModel(
            judge_spec, settings.adapter_options(), store, judge_model_identity(judge_spec, settings)
        )
        try:
            caller = JudgeCaller(
                judge,
                config,
                concurrency=settings.concurrency,
                endpoint=endpoint(judge_spec, settings),
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
    block = {
        "spec": judge_spec,
        "key": content_key("judge", identity),
        "endpoint": identity["endpoint"],
        "info": info,
        **config.describe(),
        "limit": settings.judge_limit,
        "seed": settings.seed,
        "concurrency": settings.concurrency,
        **_spending(judge_spec, info, caller, prices),
        "judged_at": now_iso(),
        "judged_unix": time.time(),  # orders passes within a second (the last judge run is shown)
        "command": command_line(),
        "cache": cache,
        "judge_loaded": judge.loaded,
        "timings": {"judge_s": round(time.perf_counter() - started, 3)},
    }
    return Judged(lines, block)


def judge_run(
    folder: RunFolder, records: Mapping[str, Sequence[SampleRecord]], judge_spec: str, settings: JudgeSettings
) -> Judged:
    """Judge a run's answers (`records`: task -> its samples) against the RoleGPT baseline answers and
    write the judge's folder of the run (a pass never replaces a verdict with a failure)."""
    pairs = {
        task: limit_pairs(task, [Pair.of(r, r.baseline) for r in rows], settings)
        for task, rows in records.items()
    }
    judged = judge_pairs(pairs, judge_spec, settings)
    judged.judgments = judge_set(folder, judge_spec, str(judged.block["key"]))
    judged.lines = write_pass(judged.judgments, judged.lines, judged.block)
    return judged
