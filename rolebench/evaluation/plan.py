"""Step 1 of `rolebench evaluate`: each task's samples and one chat request per sample.

Under a few-shot elicitation each question's demonstrations are retrieved here, from the role's own
script (`rolebench.data.scripts.ScriptLibrary`: one index per role, built once), before any model is
loaded, so a missing or broken script file stops the run at once. Requests come from the one request
builder, `rolebench.run.elicitation.sample_request`; each has its own sampling seed, from the run's
seed and the sample's id (`model_adapters.item_seed`), which greedy decoding ignores.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from model_adapters import GenerationConfig, Request
from rolebench.data.samples import Sample, read_split
from rolebench.data.sampling import select
from rolebench.data.scripts import ScriptLibrary
from rolebench.data.source import DataSource
from rolebench.run.definition import Execution, RunDefinition
from rolebench.run.elicitation import Elicitation, sample_request
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


ITEM_SEEDS = "per item: model_adapters.item_seed(seed, sample id)"


def decoding_record(config: GenerationConfig) -> dict[str, Any]:
    """The decoding settings as results.json records them and generation keys hold them: under sampling,
    with the rule of the items' seeds (each item draws with its own seed; runs sampled before that rule,
    with one seed for every item, differ here, so their answers are neither reused nor resumed into)."""
    key = config.decoding_key()
    return {**key, "item_seeds": ITEM_SEEDS} if config.samples else key


def task_cap(definition: RunDefinition, spec: TaskSpec) -> int:
    """A task's answer length cap: `--max-new-tokens`, else the task file's, else the backend default."""
    return definition.max_new_tokens or spec.max_new_tokens or GenerationConfig().max_new_tokens


def plan_tasks(
    definition: RunDefinition,
    specs: Sequence[TaskSpec],
    source: DataSource,
    execution: Execution | None = None,
) -> list[TaskPlan]:
    """Load each task's samples (the `--limit` sample) and build one chat request per sample."""
    plans = []
    elicitation = definition.elicitation_method()
    libraries: dict[str, ScriptLibrary] = {}  # by the splits' profiles folder: one index per role per run
    for spec in specs:
        samples = select(
            read_split(spec.split, source, train=True),
            definition.limit,
            definition.limit_mode,
            definition.limit_seed,
        )
        config = definition.decoding(task_cap(definition, spec), execution)
        library = None
        if elicitation.few_shot:
            library = libraries.setdefault(spec.split.profiles, ScriptLibrary(spec.split, source))
        built = [sample_request(s, elicitation, library, config.seed) for s in samples]
        requests, shots = [r for r, _ in built], [n for _, n in built]
        scripts = library.describe({s.role for s in samples}) if library else {}
        plans.append(TaskPlan(spec, samples, requests, config, elicitation, shots, scripts))
    return plans
