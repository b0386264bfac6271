"""Step 2 of `rolebench evaluate`: answers for every request, each stored the moment it arrives.

Generations go into DIR/generations.sqlite keyed by the model's identity, the decoding settings, the exact
messages, any data the model reads, under a few-shot elicitation the method, its number of shots and the
retriever (zero-shot keys are as they always were), and under sampling the item's own seed
(`rolebench.evaluation.plan.decoding_record`: greedy keys are as they always were); a run started again
finds them there, generates only what is missing, and loads no model at all when nothing is. The loop itself
is the one every stage uses, `rolebench.cached_model.CachedModel.complete`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from model_adapters import GenerationConfig, Request
from rolebench.cached_model import CachedModel
from rolebench.data.source import DataSource, source_for
from rolebench.errors import RunFailed
from rolebench.evaluation.plan import TaskPlan, decoding_record
from rolebench.run.elicitation import Elicitation

BREAKER = 8  # consecutive failed requests that stop a run


def generation_key(
    model: CachedModel, config: GenerationConfig, request: Request, elicitation: Elicitation
) -> str:
    """The store key of one generation: the model, decoding, messages, any data the model reads, a
    few-shot elicitation (`Elicitation.key`; nothing for zero-shot), and under sampling the item's own
    seed (greedy keys are as they always were)."""
    meta = {key: request.meta.get(key) for key in model.meta_keys}
    parts: list[Any] = [decoding_record(config), request.messages, meta]
    method = elicitation.key()
    if method is not None:
        parts.append(method)
    if config.samples:
        parts.append({"item_seed": config.seed_for(request)})
    return model.key("generation", *parts)


def generate_task(
    plan: TaskPlan,
    model: CachedModel,
    *,
    progress: bool = True,
    stored_only: bool = False,
    timed: Callable[[int, float], None] | None = None,
) -> dict[str, dict[str, Any]]:
    """Outputs of every request of a task by request id, generating only what the store lacks
    (`stored_only`: none; the requests the store lacks are then absent from the result). `timed` hears
    how many answers were generated (read from the store: none; failed, or from a backend that times
    nothing, a `baseline:` reading data: not counted) in how many seconds of wall-clock time (loading the
    model, when this task loads it, included): the run's throughput."""
    started = time.perf_counter()
    keys = {r.id: generation_key(model, plan.config, r, plan.elicitation) for r in plan.requests}
    done = model.complete(
        {keys[r.id]: r for r in plan.requests},
        plan.config,
        desc=f"generate {plan.spec.name}",
        progress=progress,
        breaker=BREAKER,
        stored_only=stored_only,
    )
    if timed is not None:
        fresh = [done.records[key] for key in done.fresh]
        answered = sum(1 for r in fresh if not r.get("failed") and r.get("seconds"))  # data-only: untimed
        timed(answered, time.perf_counter() - started)
    return {rid: done.records[key] for rid, key in keys.items() if key in done.records}


def check_answered(
    model: str, plans: Sequence[TaskPlan], outputs: Sequence[dict[str, dict[str, Any]]], source: DataSource
) -> None:
    """A run in which not one sample got an answer is a failure (exit 1): one line saying why, naming the
    data files its tasks lack (e.g. the RoleGPT answers `baseline:rolegpt` answers with)."""
    records = [record for generated in outputs for record in generated.values()]
    if any(record.get("output") is not None for record in records):
        return
    tasks = ", ".join(plan.spec.name for plan in plans)
    failed = [record for record in records if record.get("failed")]
    if failed:
        raise RunFailed(
            f"all {len(records)} requests of {tasks} failed (first error: {failed[0].get('error')})",
            where=model,
            fix="every answer is asked again by the next run: fix the model or server, then run the same "
            "command again",
        )
    missing = missing_files(plans, source)
    reason = next((r.get("error") for r in records if r.get("error")), None)
    what = f"nothing to score: {model} answered none of the {len(records)} samples of {tasks}"
    if reason:
        what += f" ({reason})"
    if not missing:
        raise RunFailed(what, where=model, fix="check the model and the data of these tasks")
    where = source.describe_location()
    fix = (
        f"add them to {where} (rolebench data download --to {where}), or {source.hub_remedy()}"
        if source.kind == "local"
        else "use a revision or data folder that has them"
    )
    raise RunFailed(f"{what}: the data lacks {', '.join(missing)}", where=where, fix=fix)


def missing_files(plans: Sequence[TaskPlan], source: DataSource) -> list[str]:
    """The files of the tasks' splits that evaluation reads and planning found the data lacks (the train
    set, which only the train join reads, and the raw answers, which only RAW needs, aside): a file the
    source read is in its record of files read (`DataSource.files`)."""
    missing: set[str] = set()
    for plan in plans:
        split = plan.spec.split
        read = source_for(split, source).files
        names = (split.file("test.jsonl"), split.file("rolegpt_baseline.jsonl"), split.profiles)
        missing |= {name for name in names if name not in read}
    return sorted(missing)
