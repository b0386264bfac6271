"""Step 1 of `rolebench evaluate`: each task's samples and one chat request per sample."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from model_adapters import GenerationConfig, Request
from rolebench.data.samples import Sample, load_samples
from rolebench.data.sampling import select
from rolebench.data.source import DataSource
from rolebench.evaluation.options import EvalOptions
from rolebench.prompts.roleplay import role_messages
from rolebench.tasks.spec import TaskSpec


@dataclass
class TaskPlan:
    spec: TaskSpec
    samples: list[Sample]
    requests: list[Request]
    config: GenerationConfig


def plan_tasks(options: EvalOptions, specs: Sequence[TaskSpec], source: DataSource) -> list[TaskPlan]:
    """Load each task's samples and build one chat request per sample."""
    plans = []
    for spec in specs:
        samples = select(
            load_samples(spec.split.id, source), options.limit, options.limit_mode, options.limit_seed
        )
        max_tokens = options.max_new_tokens or spec.max_new_tokens or options.generation.max_new_tokens
        config = replace(options.generation, max_new_tokens=max_tokens)
        requests = [
            Request(
                id=s.id,
                messages=role_messages(s.role, s.description, s.question, s.language),
                meta={
                    "baseline": s.baseline,
                    "role": s.role,
                    "question": s.question,
                    "description": s.description,
                    "split": s.split,
                },
            )
            for s in samples
        ]
        plans.append(TaskPlan(spec, samples, requests, config))
    return plans
