"""`rolebench evaluate` as a pipeline of named steps: resolve -> claim -> check -> run -> write -> derive.

`evaluate_run` takes the run definition (what to compute), the execution (how) and the run folder (where)
and writes the folder: run.json first (the record), then each part of the run (`RunPart`: the single-turn
tasks, `rolebench.evaluation.single_turn`; the session tasks, `rolebench.evaluation.sessions`) makes its
calls, each answer stored as it arrives and each turn kept as it is played, and writes its files; the
earlier tasks' files are mended (`rolebench.evaluation.repair.repair_samples`), then results.json is
derived from all of it (`rolebench.evaluation.derive`). The pipeline knows the parts only through
`RunPart`: a new kind of task is one more entry in `TASK_KINDS`.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Protocol

from rolebench.cached_model import CachedModel
from rolebench.data.resolve import resolve_source
from rolebench.data.source import DataSource
from rolebench.evaluation.config import merged_config, run_config, timings, with_model_info
from rolebench.evaluation.derive import write_derived
from rolebench.evaluation.guard import Planned, claim
from rolebench.evaluation.models import ModelHandle
from rolebench.evaluation.repair import repair_samples
from rolebench.evaluation.sessions import SessionJudge, SessionPart
from rolebench.evaluation.single_turn import SingleTurnPart
from rolebench.judging.sets import adopt_legacy
from rolebench.results.provenance import now_iso
from rolebench.results.schema import RunConfig, RunResults
from rolebench.run.definition import Execution, RunDefinition
from rolebench.run.folder import RunFolder
from rolebench.run.record import RunRecord


class RunPart(Protocol):
    """The tasks of one kind in a run, planned before any folder is touched or model loaded (a bad task,
    option or data file fails there): what they add to the config as planned, what they refuse before any
    call, the calls they make (each answer stored as it arrives), the files they write after."""

    groups: dict[str, list[str]]

    def configure(self, config: RunConfig) -> None: ...

    def check(self, folder: RunFolder, model: CachedModel) -> None: ...

    def run(self, folder: RunFolder, model: CachedModel, record: RunRecord) -> None: ...

    def write(self, folder: RunFolder, record: RunRecord) -> None: ...

    def calls(self) -> dict[str, int]: ...


class TaskKind(Protocol):
    """A kind of task: plans the run's tasks of its kind (their names picked from the definition's) into
    one part, with the data source the run reads and the judge of its session tasks."""

    def plan(
        self, definition: RunDefinition, execution: Execution, source: DataSource, judge: SessionJudge | None
    ) -> RunPart: ...


# each plans the run's tasks of its kind (none: an empty part)
TASK_KINDS: tuple[TaskKind, ...] = (SingleTurnPart, SessionPart)


@dataclass
class Resolved:
    """A definition resolved: the model, the run's parts planned and their groups."""

    model: ModelHandle
    parts: list[RunPart]
    groups: dict[str, list[str]]

    def calls(self) -> dict[str, int]:
        """Each task's calls to make: its requests, or its turns to play (a sweep's progress)."""
        return {task: n for part in self.parts for task, n in part.calls().items()}


def resolve_run(
    definition: RunDefinition,
    execution: Execution,
    model: ModelHandle | None = None,
    judge: SessionJudge | None = None,
) -> Resolved:
    """Everything a run needs before its folder is touched: a bad task, spec, option or data file fails
    here, in one line, before any model loads."""
    if model is None:
        options = definition.adapter_options(execution.base_url)
        model = ModelHandle(definition.model, options, definition.model_identity(execution.base_url))
    source = resolve_source(definition.data_dir, revision=definition.revision)
    parts = [kind.plan(definition, execution, source, judge) for kind in TASK_KINDS]
    groups = {name: members for part in parts for name, members in part.groups.items()}
    return Resolved(model, parts, groups)


def continued(before: RunRecord | None, planned: Planned) -> RunRecord:
    """The record of the run going on: the new definition and plans over what the folder's run held."""
    if before is None:
        return RunRecord(planned.definition, planned.config, dict(planned.groups), now_iso())
    tasks = tuple(dict.fromkeys([*before.definition.tasks, *planned.definition.tasks]))
    return RunRecord(
        planned.definition.model_copy(update={"tasks": tasks}),
        merged_config(before.config, planned.config),
        {**before.groups, **planned.groups},
        before.created,
        dict(before.finished),
        dict(before.generation_time),
    )


def drop_strays(folder: RunFolder, record: RunRecord) -> None:
    """Remove the samples files of tasks this run does not know (left by another run), saying so."""
    for task in folder.sample_tasks():
        if task not in record.config.tasks:
            folder.drop_samples(task)
            print(
                f"rolebench: removed samples/{task}.jsonl of {folder.path}: no task of this run (left by "
                "another run; its answers stay in the generation store)",
                file=sys.stderr,
            )


def evaluate_run(
    definition: RunDefinition,
    execution: Execution,
    folder: RunFolder,
    model: ModelHandle | None = None,
    judge: SessionJudge | None = None,
) -> RunResults:
    """Run the whole pipeline into the run folder and return the results.json written; `judge`: the
    judge of the run's session tasks (they need one, and an opponent: the caller asks `check_players`)."""
    started = time.perf_counter()
    resolved = resolve_run(definition, execution, model, judge)
    with folder.lock(create=True):
        adopt_legacy(folder)
        config = run_config(definition, resolved.model.identity)
        for part in resolved.parts:
            part.configure(config)
        planned = Planned(definition, config, resolved.groups)
        record = continued(claim(folder, planned, execution.overwrite), planned)
        drop_strays(folder, record)
        with folder.generation_store() as store:
            cached = resolved.model.cached(store)
            try:
                for part in resolved.parts:  # before any call: nothing is refused once run.json is written
                    part.check(folder, cached)
                record.write(folder)
                for part in resolved.parts:
                    part.run(folder, cached, record)
                info = cached.info()
            finally:
                cached.close()
        generated = time.perf_counter()
        for part in resolved.parts:
            part.write(folder, record)
        record.config = with_model_info(record.config, info)
        record.config.timings = timings(started, generated, time.perf_counter())
        record.write(folder)
        for line in repair_samples(folder, record, execution):  # the earlier tasks' files
            print(f"rolebench: {line}", file=sys.stderr)
        return write_derived(folder, record)
