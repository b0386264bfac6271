"""Step 1 of `rolebench evaluate`: each task's samples and one chat request per sample.

Under a few-shot elicitation each question's demonstrations are retrieved here, from the role's own
script (`rolebench.data.scripts.ScriptLibrary`: one index per role, built once), before any model is
loaded, so a missing or broken script file stops the run at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from model_adapters import GenerationConfig, Request
from rolebench.data.samples import Sample, load_samples
from rolebench.data.sampling import select
from rolebench.data.scripts import ScriptLibrary
from rolebench.data.source import DataSource
from rolebench.evaluation.options import EvalOptions
from rolebench.prompts.elicitation import Elicitation
from rolebench.tasks.spec import TaskSpec


@dataclass
class TaskPlan:
    spec: TaskSpec
    samples: list[Sample]
    requests: list[Request]
    config: GenerationConfig
    elicitation: Elicitation = field(default_factory=Elicitation)
    shots: list[int] = field(default_factory=list)  # demonstrations given to each sample (few-shot)
    scripts: dict[str, dict[str, Any]] = field(default_factory=dict)  # role -> script file, usable pairs


def plan_tasks(options: EvalOptions, specs: Sequence[TaskSpec], source: DataSource) -> list[TaskPlan]:
    """Load each task's samples and build one chat request per sample."""
    plans = []
    elicitation = options.elicitation
    libraries: dict[str, ScriptLibrary] = {}  # by the splits' profiles folder: one index per role per run
    for spec in specs:
        samples = select(
            load_samples(spec.split.id, source, train=True),
            options.limit,
            options.limit_mode,
            options.limit_seed,
        )
        max_tokens = options.max_new_tokens or spec.max_new_tokens or options.generation.max_new_tokens
        config = replace(options.generation, max_new_tokens=max_tokens)
        library = None
        if elicitation.few_shot:
            library = libraries.setdefault(spec.split.profiles, ScriptLibrary(spec.split, source))
        requests, shots = [], []
        for s in samples:
            demos = library.demonstrations(s.role, s.question, elicitation.shots) if library else []
            shots.append(len(demos))
            requests.append(
                Request(
                    id=s.id,
                    messages=elicitation.messages(s.role, s.description, s.question, s.language, demos),
                    meta={
                        "baseline": s.baseline,
                        "role": s.role,
                        "question": s.question,
                        "description": s.description,
                        "train_answer": s.train_answer,
                        "split": s.split,
                    },
                )
            )
        scripts = library.describe({s.role for s in samples}) if library else {}
        plans.append(TaskPlan(spec, samples, requests, config, elicitation, shots, scripts))
    return plans
