"""Run folders for the tests, made the way `rolebench evaluate` makes them: run.json (the run's definition
and record), the samples files, and results.json derived from them. For tests that need runs of
hand-written answers (a judge that must prefer one of two texts, two runs that share some items)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rolebench.evaluation.derive import write_derived
from rolebench.judging.sets import set_of
from rolebench.results.provenance import now_iso
from rolebench.results.schema import RunConfig, SampleRecord
from rolebench.run.definition import RunDefinition
from rolebench.run.folder import RunFolder
from rolebench.run.record import RunRecord


def make_run(
    folder: Path,
    spec: str,
    tasks: dict[str, list[dict[str, Any]]],
    *,
    elicitation: str = "zero-shot",
    shots: int | None = None,
    split: str = "demo_general",
) -> Path:
    """A finished run of `spec` with these samples per task (one group `all` of every task)."""
    definition = RunDefinition(
        model=spec, tasks=tuple(tasks), bootstrap=200, elicitation=elicitation, shots=shots
    )
    method = definition.elicitation_method()
    config = RunConfig(
        run=definition.record(),
        model={"spec": spec, "identity": {"spec": spec}},
        tasks={task: {"split": split, "version": 1} for task in tasks},
        elicitation=method.describe(),
        bootstrap=definition.bootstrap_settings().describe(),
    )
    run = RunFolder(folder)
    folder.mkdir(parents=True, exist_ok=True)
    record = RunRecord(definition, config, {"all": list(tasks)}, now_iso())
    for task, records in tasks.items():
        record.wrote(task, run.write_samples(task, [SampleRecord.model_validate(r) for r in records]))
    record.write(run)
    write_derived(run, record)
    return folder


def judgment_lines(folder: Path, task: str, block: dict[str, Any]) -> list[dict[str, Any]]:
    """One task's judgment lines, of the judging `block` (an entry of config.judge or config.versus) says."""
    path = set_of(RunFolder(folder), block).folder / f"{task}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
