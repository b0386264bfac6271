"""DIR/run.json: which run a folder holds, written before any answer and kept up to date by the commands
(`evaluate`: each finished task and the time its answers took; `score`: a protocol added).

The record is the run's definition (`rolebench.run.definition.RunDefinition`), its config as planned and
resolved (the model's identity and what it said about itself, the data source and the sha256 of every
file read, each task's version, split and length cap, the prompt hash, the elicitation's scripts,
timings), its groups, the tasks that finished (with the sha256 of the samples file each wrote) and the
answers each task generated in how many seconds. results.json is derived from it and the folder's other
files; when run.json is missing or damaged, the record is read back from results.json's config, and
folders written before run definitions existed get theirs from their recorded config
(`definition_from_config`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from rolebench.errors import DataError, RoleBenchError
from rolebench.results.provenance import command_line, now_iso
from rolebench.results.schema import RunConfig
from rolebench.run.definition import RunDefinition
from rolebench.run.folder import RunFolder

RECORD_VERSION = 3


@dataclass
class RunRecord:
    """What run.json holds (see the module docstring)."""

    definition: RunDefinition
    config: RunConfig
    groups: dict[str, list[str]] = field(default_factory=dict)
    created: str = ""
    finished: dict[str, str | None] = field(default_factory=dict)  # task -> sha256 of the samples written
    # task -> {"answers", "seconds"}: the answers generated and the wall-clock seconds generating them took,
    # added up over every command that generated some (answers read from the store cost none): throughput
    generation_time: dict[str, dict[str, float]] = field(default_factory=dict)

    def finished_tasks(self) -> list[str]:
        """The tasks with results, in the order the run planned them."""
        return [task for task in self.config.tasks if task in self.finished]

    def wrote(self, task: str, digest: str) -> None:
        """A task's samples file was written (its results are those of this file)."""
        self.finished[task] = digest

    def timed(self, task: str, answers: int, seconds: float) -> None:
        """`answers` of `task` were generated in `seconds` of wall-clock time (none: nothing to add)."""
        if answers <= 0:
            return
        before = self.generation_time.get(task) or {}
        self.generation_time[task] = {
            "answers": int(before.get("answers", 0)) + answers,
            "seconds": round(float(before.get("seconds", 0.0)) + seconds, 3),
        }

    def splits(self) -> dict[str, str]:
        """task -> split id, for every task the run planned."""
        return {task: str(d.get("split")) for task, d in self.config.tasks.items() if d.get("split")}

    def max_new_tokens(self, task: str) -> int | None:
        value = (self.config.tasks.get(task, {}).get("generation") or {}).get("max_new_tokens")
        return value if isinstance(value, int) else None

    def add_protocol(self, name: str, description: dict[str, Any]) -> None:
        """Hold one more scoring protocol (`rolebench score --protocol`), as its `describe()` says it: its
        numbers join every result."""
        held = dict(self.config.scoring.get("protocols") or {})
        held[name] = description
        self.config.scoring = {**self.config.scoring, "protocols": held}
        self.config.rescored = {"at": now_iso(), "command": command_line(), "added": name}

    def write(self, folder: RunFolder) -> None:
        folder.write_record_data(
            {
                "version": RECORD_VERSION,
                "created": self.created,
                "definition": self.definition.record(),
                "config": self.config.model_dump(mode="json"),
                "groups": self.groups,
                "finished": self.finished,
                "generation_time": self.generation_time,
            }
        )

    @classmethod
    def read(cls, folder: RunFolder) -> RunRecord | None:
        """The folder's record: from run.json, else from results.json (None: the folder holds no run)."""
        found = cls._from_run_json(folder)
        if found is not None:
            return found
        if not folder.results_path.is_file():
            return None
        try:
            results = folder.read_results()
        except DataError:
            return None
        definition = definition_from_config(results.config)
        if definition is None:
            return None
        groups = {name: list(g.tasks) for name, g in results.groups.items()}
        config = results.config.model_copy(update={"judge": None, "judges": None, "versus": None})
        finished = {task: result.samples_sha256 for task, result in results.results.items()}
        timing = {
            task: {"answers": result.context.n_wall, "seconds": result.context.wall_seconds}
            for task, result in results.results.items()
            if result.context is not None and result.context.wall_seconds is not None
        }
        return cls(definition, config, groups, results.created, finished, timing)

    @classmethod
    def _from_run_json(cls, folder: RunFolder) -> RunRecord | None:
        data = folder.read_record_data()
        if data is None or not isinstance(data.get("config"), dict):
            return None
        try:
            config = RunConfig.model_validate(data["config"])
            definition = (
                RunDefinition.model_validate(data["definition"])
                if isinstance(data.get("definition"), dict)
                else definition_from_config(config)
            )
        except (ValidationError, RoleBenchError):
            return None
        if definition is None:
            return None
        groups = data.get("groups")
        clean = (
            {str(k): [str(m) for m in v] for k, v in groups.items() if isinstance(v, list)}
            if isinstance(groups, dict)
            else {}
        )
        finished = data.get("finished")
        if not isinstance(finished, dict):  # written before the record said: the tasks with samples files
            finished = {task: None for task in config.tasks if folder.samples_path(task).is_file()}
        created = str(data.get("created") or data.get("claimed") or "")
        digests = {str(t): (d if isinstance(d, str) else None) for t, d in finished.items()}
        return cls(definition, config, clean, created, digests, generation_times(data.get("generation_time")))


def generation_times(value: Any) -> dict[str, dict[str, float]]:
    """run.json's `generation_time`, the well-formed entries only (an older run.json has none)."""
    if not isinstance(value, dict):
        return {}
    kept = {}
    for task, entry in value.items():
        answers = entry.get("answers") if isinstance(entry, dict) else None
        seconds = entry.get("seconds") if isinstance(entry, dict) else None
        if isinstance(answers, int) and answers > 0 and isinstance(seconds, int | float) and seconds >= 0:
            kept[str(task)] = {"answers": answers, "seconds": float(seconds)}
    return kept


def definition_from_config(config: RunConfig) -> RunDefinition | None:
    """The definition a results config records (`config.run`), or the one an older rolebench's config
    implies (its model, generation, scoring, sampling, elicitation and bootstrap blocks); None when it
    names no model."""
    if config.run:
        try:
            return RunDefinition.model_validate(config.run)
        except ValidationError:
            return None
    spec = config.model.get("spec")
    if not spec or not config.tasks:
        return None
    generation, sampling = config.generation, config.sampling or {}
    elicitation = config.elicitation or {}
    given = config.model.get("options")
    options = {k: v for k, v in given.items() if k != "base_url"} if isinstance(given, dict) else {}
    data = config.data
    values: dict[str, Any] = {
        "model": spec,
        "tasks": list(config.tasks),
        "model_args": options,
        "data_dir": data.get("location") if data.get("kind") == "local" else None,
        "revision": data.get("revision") if data.get("kind") == "hub" else None,
        "limit": config.limit,
        "limit_mode": sampling.get("mode", "stratified"),
        "limit_seed": sampling.get("seed", 0),
        "protocol": config.scoring.get("protocol", "rolellm"),
        "elicitation": elicitation.get("method", "zero-shot"),
        "shots": elicitation.get("shots") or None,
        "temperature": generation.get("temperature", 0.0),
        "top_p": generation.get("top_p", 1.0),
        "repetition_penalty": generation.get("repetition_penalty", 1.0),
        "seed": generation.get("seed", 0),
        "bootstrap": config.bootstrap.get("resamples", 1000),
    }
    try:
        return RunDefinition.model_validate(values)
    except ValidationError:
        return None
