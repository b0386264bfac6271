"""What a sweep runs: one `ModelRun` per model (an evaluate run into its own folder), checked up front.

A job is one (model, task) pair. The jobs of one model share its run folder, so they run as one Ray
task that evaluates the model's tasks in order (the model loaded once, the folder written by one
process at a time); sweep.json still records each job. A model's run is "already done" when its key,
the run definition's identity (`rolebench.run.definition.RunDefinition.identity`) and the judge's,
is the one the finished run was made with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rolebench.judging.settings import JudgeSettings
from rolebench.run.definition import Execution, RunDefinition
from rolebench.run.folder import RunFolder
from rolebench.storage.records import content_key

# judge settings that never change a verdict
_JUDGE_TRANSPORT = {"concurrency", "progress", "cache_dir", "reparse"}


@dataclass(frozen=True)
class ModelRun:
    """One model of a sweep: the evaluate run into DIR/<name>, and the Ray resources it asks for."""

    name: str
    definition: RunDefinition  # the file's options with this model's spec and options
    execution: Execution  # output = DIR/<name>
    tasks: tuple[str, ...]  # the tasks (groups expanded) = this model's jobs, in order
    task_facts: dict[str, Any] = field(default_factory=dict)  # task -> version, file digest, length cap
    judge: str | None = None
    judge_settings: JudgeSettings | None = None
    resources: dict[str, Any] = field(default_factory=dict)  # Ray options of the job's task
    replica_resources: dict[str, Any] | None = None  # with data_parallel > 1: each replica's

    @property
    def run_dir(self) -> Path:
        assert self.execution.output is not None  # noqa: S101 - load_sweep always sets it
        return self.execution.output

    @property
    def folder(self) -> RunFolder:
        return RunFolder(self.run_dir)

    @property
    def spec(self) -> str:
        return self.definition.model

    def key(self) -> str:
        """A digest of everything that decides this run's results: a finished run with the same key is
        not run again."""
        judge = None
        if self.judge is not None and self.judge_settings is not None:
            judge = [self.judge, self.judge_settings.model_dump(mode="json", exclude=_JUDGE_TRANSPORT)]
        how = self.execution
        identity = self.definition.identity(self.task_facts, how.base_url, how.opponent_base_url)
        return content_key("sweep-run", identity, judge)


def job_id(model: str, task: str) -> str:
    return f"{model}/{task}"


@dataclass(frozen=True)
class SweepPlan:
    """Every model of a sweep file, checked; `totals`: the samples of each task (the same for all)."""

    file: Path
    runs: tuple[ModelRun, ...]
    totals: dict[str, int]

    def jobs(self) -> int:
        return sum(len(run.tasks) for run in self.runs)
