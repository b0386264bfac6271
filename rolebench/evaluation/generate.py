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
from rolebench.evaluation.plan import TaskPlan

GENERATIONS_FILE = "generations.sqlite"
GENERATIONS_TABLE = "generations"


def generation_key(model: CachedModel, config: GenerationConfig, request: Request) -> str:
    """The store key of one generation: the model, decoding, messages, and any data the model reads."""
    meta = {key: request.meta.get(key) for key in model.meta_keys}
    return model.key("generation", config.decoding_key(), request.messages, meta)


def generate_task(plan: TaskPlan, model: CachedModel, *, progress: bool = True) -> dict[str, dict[str, Any]]:
    """Outputs of every request of a task by request id, generating only what the store lacks."""
    keys = {r.id: generation_key(model, plan.config, r) for r in plan.requests}
    stored = model.store.get_many(keys.values())
    outputs = {rid: stored[key] for rid, key in keys.items() if key in stored}
    missing = [r for r in plan.requests if r.id not in outputs]
    if not missing:
        return outputs
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
            }
            if generation.text is not None:
                model.store.put(keys[request.id], record)
            outputs[request.id] = record
            bar.update(1)
    return outputs
