"""Step 2 of `rolebench evaluate`: answers for every request, each stored the moment it arrives.

Generations go into DIR/generations.sqlite keyed by the model's identity, the decoding settings, the
exact messages and any data the model reads; a run started again finds them there, generates only
what is missing, and loads no model at all when nothing is.
"""

from __future__ import annotations

from typing import Any

from tqdm.auto import tqdm

from model_adapters import GenerationConfig, Request
from rolebench.cached_model import CachedModel
from rolebench.errors import ModelError
from rolebench.evaluation.plan import TaskPlan

GENERATIONS_FILE = "generations.sqlite"
GENERATIONS_TABLE = "generations"
BREAKER = 8  # consecutive failed requests that stop a run


def generation_key(model: CachedModel, config: GenerationConfig, request: Request) -> str:
    """The store key of one generation: the model, decoding, messages, and any data the model reads."""
    meta = {key: request.meta.get(key) for key in model.meta_keys}
    return model.key("generation", config.decoding_key(), request.messages, meta)


def generate_task(plan: TaskPlan, model: CachedModel, *, progress: bool = True) -> dict[str, dict[str, Any]]:
    """Outputs of every request of a task by request id, generating only what the store lacks.

    Answers are stored as they arrive; failed requests are not (the next run asks again). After
    `BREAKER` failures in a row the run stops with one line: the model or server is down, and every
    answer so far is kept.
    """
    keys = {r.id: generation_key(model, plan.config, r) for r in plan.requests}
    stored = model.store.get_many(keys.values())
    outputs = {rid: stored[key] for rid, key in keys.items() if key in stored}
    missing = [r for r in plan.requests if r.id not in outputs]
    if not missing:
        return outputs
    in_a_row = 0
    with tqdm(
        total=len(missing), desc=f"generate {plan.spec.name}", unit="sample", disable=not progress
    ) as bar:
        for request, generation in model.adapter().generate(missing, plan.config):
            record = {
                "output": generation.text,
                "error": generation.error,
                "seconds": generation.seconds,
                "usage": vars(generation.usage),
                "finish_reason": generation.finish_reason,
                "failed": generation.failed,
            }
            if generation.text is not None:
                model.store.put(keys[request.id], record)
            outputs[request.id] = record
            bar.update(1)
            in_a_row = in_a_row + 1 if generation.failed else 0
            if in_a_row >= BREAKER:
                raise ModelError(
                    f"{BREAKER} requests in a row failed (last: {generation.error})",
                    where=str(model.spec),
                    fix="the run stopped and every answer so far is stored; fix the model or server, "
                    "then run the same command again to resume",
                )
    return outputs
