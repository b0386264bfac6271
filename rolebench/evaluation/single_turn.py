"""A run's single-turn tasks, one part of `rolebench evaluate` (`rolebench.evaluation.pipeline.RunPart`):
each sample one request, answered through the run's cached model, scored and written into its samples file.

Planning reads the task files (`rolebench.tasks.catalogue`), each task's samples and builds their requests
(`rolebench.evaluation.plan`); the answers come from the store or the model (`rolebench.evaluation.generate`);
the samples files are scored by the protocols the run holds (`rolebench.evaluation.records`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rolebench.cached_model import CachedModel
from rolebench.data.source import DataSource
from rolebench.evaluation.config import single_turn_config
from rolebench.evaluation.generate import check_answered, generate_task
from rolebench.evaluation.plan import TaskPlan, plan_tasks
from rolebench.evaluation.records import scored_records
from rolebench.evaluation.sessions import SessionJudge
from rolebench.results.schema import RunConfig
from rolebench.run.definition import Execution, RunDefinition
from rolebench.run.folder import RunFolder
from rolebench.run.record import RunRecord
from rolebench.scoring.protocols import held_protocols
from rolebench.tasks.catalogue import resolve
from rolebench.tasks.sessions import split_tasks


@dataclass
class SingleTurnPart:
    """The run's single-turn tasks: their plans (samples and requests), groups, and answers once run."""

    definition: RunDefinition
    execution: Execution
    source: DataSource
    plans: list[TaskPlan]
    groups: dict[str, list[str]]
    outputs: list[dict[str, dict[str, Any]]] = field(default_factory=list)

    @classmethod
    def plan(
        cls, definition: RunDefinition, execution: Execution, source: DataSource, judge: SessionJudge | None
    ) -> SingleTurnPart:
        """The task files read (task and group names, `--include-path`), each task's samples and requests."""
        names = split_tasks(definition.tasks)[0]
        specs, groups = resolve(names, tuple(map(Path, definition.include_path))) if names else ([], [])
        plans = plan_tasks(definition, specs, source, execution)
        return cls(definition, execution, source, plans, {g.name: list(g.members) for g in groups})

    def configure(self, config: RunConfig) -> None:
        single_turn_config(config, self.definition, self.source, self.plans)

    def check(self, folder: RunFolder, model: CachedModel) -> None:
        """Nothing to refuse before the calls: each answer is stored under its own key."""

    def run(self, folder: RunFolder, model: CachedModel, record: RunRecord) -> None:
        """Every request answered (from the store where it holds them); a run in which none got an answer
        fails, naming why."""
        self.outputs = [
            generate_task(
                plan,
                model,
                progress=self.execution.progress,
                timed=functools.partial(record.timed, plan.spec.name),
            )
            for plan in self.plans
        ]
        if self.plans:
            check_answered(self.definition.model, self.plans, self.outputs, self.source)

    def write(self, folder: RunFolder, record: RunRecord) -> None:
        """Each task's samples file, scored by every protocol the run holds."""
        protocols = held_protocols(record.definition.protocol, record.config.scoring)
        for task, rows in scored_records(self.plans, self.outputs, protocols).items():
            record.wrote(task, folder.write_samples(task, rows))

    def calls(self) -> dict[str, int]:
        """Each task's requests (a sweep's progress)."""
        return {plan.spec.name: len(plan.samples) for plan in self.plans}
