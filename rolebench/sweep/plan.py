"""What a sweep runs: one `ModelRun` per model (an evaluate run into its own folder), checked up front.

A job is one (model, task) pair. The jobs of one model share its run folder, so they run as one Ray
task that evaluates the model's tasks in order (the model loaded once, the folder written by one
process at a time); sweep.json still records each job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rolebench.evaluation.options import EvalOptions
from rolebench.judge.run import JudgeSettings
from rolebench.storage.records import content_key


@dataclass(frozen=True)
class JudgeStep:
    """`--judge` after evaluating: the judge spec and its settings (checked before the sweep starts)."""

    spec: str
    settings: JudgeSettings


@dataclass(frozen=True)
class ModelRun:
    """One model of a sweep: the evaluate run into DIR/<name>, and the Ray resources it asks for."""

    name: str
    options: EvalOptions  # output = DIR/<name>; the model's spec and options
    identity: dict[str, Any]  # model_adapters.model_identity of the spec and options
    tasks: tuple[str, ...]  # the tasks (groups expanded) = this model's jobs, in order
    judge: JudgeStep | None = None
    resources: dict[str, Any] = field(default_factory=dict)  # Ray options of the job's task
    replica_resources: dict[str, Any] | None = None  # with data_parallel > 1: each replica's

    @property
    def run_dir(self) -> Path:
        return self.options.output

    @property
    def spec(self) -> str:
        return self.options.model

    def job_ids(self) -> list[str]:
        return [job_id(self.name, task) for task in self.tasks]

    def key(self) -> str:
        """A digest of everything that decides this run's results: a finished run with the same key
        is not run again."""
        o = self.options
        judge = None
        if self.judge is not None:
            s = self.judge.settings
            judge = [self.judge.spec, s.limit, s.judge_config, s.seed, s.base_url, str(s.price_table)]
        return content_key(
            "sweep-run",
            o.model,
            self.identity,
            list(o.tasks),
            o.data_dir,
            o.revision,
            o.limit,
            o.limit_mode,
            o.limit_seed,
            o.protocol,
            o.generation.decoding_key(),
            o.max_new_tokens,
            o.bootstrap.describe(),
            [str(p) for p in o.include_paths],
            judge,
        )


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
