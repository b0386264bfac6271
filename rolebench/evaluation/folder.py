"""Which run a run folder holds (DIR/run.json), and what running `rolebench evaluate` into it again may do.

A run folder holds one run: one model and one set of settings (generation, prompt, protocol, data,
`--limit` sampling, bootstrap). `run.json` is written before any answer: the model (spec, identity),
the run's config as planned (every setting above, the tasks, the data files read) and its groups, so
that a damaged results.json can be rebuilt from it, the samples files and the generation store.

Running again with the same model and settings is the same run: more tasks are added, the same ones
resume (stored answers are reused). Another model or other settings are refused in one line naming
what differs, unless `--overwrite`: then the run's files go (the generation store stays when the model
is the same: its answers are keyed by every setting that changes them, so none is reused wrongly).
Every samples file the folder keeps is a task of its results.json; one left by another run goes.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rolebench.errors import ConfigError, DataError
from rolebench.evaluation.generate import GENERATIONS_FILE
from rolebench.prompts.elicitation import elicitation_label
from rolebench.results.io import RESULTS_FILE, SAMPLES_DIR, read_results
from rolebench.results.provenance import now_iso
from rolebench.results.schema import RunConfig, RunResults
from rolebench.storage.files import write_json_atomic
from rolebench.storage.jsonl import read_json

OWNER_FILE = "run.json"
RUN_FILES = (RESULTS_FILE, OWNER_FILE, SAMPLES_DIR, "judgments", "report.html")
STORE_FILES = (GENERATIONS_FILE, f"{GENERATIONS_FILE}-wal", f"{GENERATIONS_FILE}-shm")
# config.prompt keys that come from the model (its identity covers them), not from the run's settings
_MODEL_PROMPT_KEYS = ("system_role", "chat_template_sha256")


@dataclass
class Owner:
    """DIR/run.json: the model of the run and, since this version, its planned config and groups."""

    model: str | None = None
    identity: dict[str, Any] | None = None
    config: RunConfig | None = None
    groups: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def read(cls, run_dir: Path) -> Owner:
        """The folder's run.json; a missing or damaged one knows nothing (results.json then tells)."""
        path = Path(run_dir) / OWNER_FILE
        try:
            data = read_json(path) if path.is_file() else {}
            config = data.get("config")
            return cls(
                model=data.get("model"),
                identity=data.get("identity"),
                config=RunConfig.model_validate(config) if isinstance(config, dict) else None,
                groups={str(k): [str(m) for m in v] for k, v in (data.get("groups") or {}).items()},
            )
        except (DataError, ValidationError, AttributeError, TypeError):
            return cls()

    def write(self, run_dir: Path) -> None:
        config = self.config.model_dump(mode="json") if self.config is not None else None
        document = {"model": self.model, "identity": self.identity, "claimed": now_iso()}
        write_json_atomic(Path(run_dir) / OWNER_FILE, {**document, "config": config, "groups": self.groups})


@dataclass
class Previous:
    """What a folder already holds of the run that goes on in it."""

    results: RunResults | None = None  # its results.json (None: none, or damaged and rebuilt)
    config: RunConfig | None = None  # its config: as run.json recorded it (every task planned), or results'
    kept: list[str] = field(default_factory=list)  # tasks whose samples files stay (not re-run now)
    splits: dict[str, str] = field(default_factory=dict)  # task -> split id, of every task it knows
    limits: dict[str, int | None] = field(default_factory=dict)  # task -> max_new_tokens it was run with
    groups: dict[str, list[str]] = field(default_factory=dict)
    protocols: list[str] = field(default_factory=list)  # the protocols it holds


def _flat(prefix: str, values: Mapping[str, Any]) -> dict[str, Any]:
    return {f"{prefix}{key}": value for key, value in values.items()}


def settings(config: RunConfig) -> dict[str, Any]:
    """Every run-wide setting that changes a run's numbers, named as the user sets it."""
    generation = config.generation
    sampling = config.sampling or {}
    data = config.data
    found = {
        "--temperature": generation.get("temperature"),
        "--top-p": generation.get("top_p"),
        "--repetition-penalty": generation.get("repetition_penalty"),
        "--seed": generation.get("seed"),
        "--protocol": config.scoring.get("protocol"),
        "--elicitation/--shots": elicitation_label(config.elicitation),  # a run before it: zero-shot
        "--limit": config.limit,
        "--limit-mode/--limit-seed": f"{sampling.get('mode')}/{sampling.get('seed')}" if sampling else None,
        "--bootstrap": config.bootstrap.get("resamples"),
        "data": None if data.get("kind") == "builtin-demo" else _location(data),
    }
    prompt = {k: v for k, v in config.prompt.items() if k not in _MODEL_PROMPT_KEYS}
    return {**found, **_flat("prompt ", prompt)}


def _location(data: Mapping[str, Any]) -> str | None:
    if not data.get("location"):
        return None
    revision = f"@{data['revision']}" if data.get("revision") else ""
    return f"{data.get('kind')} {data['location']}{revision}"


def task_settings(config: RunConfig, task: str) -> dict[str, Any]:
    """A task's own settings: its definition (version, file) and its answer length cap."""
    described = config.tasks.get(task) or {}
    generation = described.get("generation") or {}
    return {
        f"--max-new-tokens ({task})": generation.get("max_new_tokens"),
        f"task {task} (version)": described.get("version"),
        f"task {task} (file sha256)": described.get("config_sha256"),
    }


def data_files(config: RunConfig) -> dict[str, str]:
    """relpath -> sha256 of every data file the run read (the packaged demo's marked "(demo)")."""
    data = config.data
    demo = data if data.get("kind") == "builtin-demo" else data.get("builtin") or {}
    files = {} if data is demo else dict(data.get("files") or {})
    return {**files, **{f"(demo) {k}": v for k, v in (demo.get("files") or {}).items()}}


# settings that may differ when one side has none (data: a run of packaged demo tasks reads no data;
# the sample of --limit: a run without a limit has none)
_UNSET_MATCHES = ("data", "--limit-mode/--limit-seed")


def differences(before: RunConfig, now: RunConfig, held: Iterable[str] = ()) -> list[str]:
    """What differs between a folder's run and a new one ("--seed 0 there, 1 now"), settings both know.
    `--limit` may change when the new run evaluates every task the folder `held` again (a larger limit
    keeps every sample of a smaller one: the stored answers are reused)."""
    lines = []
    old, new = settings(before), settings(now)
    if set(held) <= set(now.tasks):
        old.pop("--limit"), new.pop("--limit")
    for task in set(before.tasks) & set(now.tasks):
        old.update(task_settings(before, task))
        new.update(task_settings(now, task))
    for name in sorted(set(old) & set(new), key=list(new).index):
        if old[name] != new[name] and not (name in _UNSET_MATCHES and None in (old[name], new[name])):
            lines.append(f"{name} {_shown(old[name])} there, {_shown(new[name])} now")
    old_files, new_files = data_files(before), data_files(now)
    changed = sorted(f for f in set(old_files) & set(new_files) if old_files[f] != new_files[f])
    lines += [
        f"data file {f} changed (sha256 {old_files[f][:8]} there, {new_files[f][:8]} now)" for f in changed
    ]
    return lines


def _shown(value: Any) -> str:
    return "none" if value is None else str(value)


def merged_config(before: RunConfig | None, now: RunConfig, tasks: Iterable[str] | None = None) -> RunConfig:
    """`now` with the tasks and data files `before` recorded (the same run), limited to `tasks` if given."""
    if before is None:
        merged = now.model_copy(deep=True)
    else:
        data = merged_data(before.data, now.data)
        merged = now.model_copy(update={"tasks": {**before.tasks, **now.tasks}, "data": data}, deep=True)
        earlier = (before.elicitation or {}).get("tasks") or {}
        if merged.elicitation and earlier:  # the scripts of every task of the run
            merged.elicitation["tasks"] = {**earlier, **merged.elicitation.get("tasks", {})}
    if tasks is not None:
        wanted = set(tasks)
        merged.tasks = {t: d for t, d in merged.tasks.items() if t in wanted}
        if merged.elicitation and merged.elicitation.get("tasks"):
            merged.elicitation["tasks"] = {
                t: d for t, d in merged.elicitation["tasks"].items() if t in wanted
            }
    return merged


def merged_data(before: Mapping[str, Any], now: Mapping[str, Any]) -> dict[str, Any]:
    """One run's data provenance over both runs: the files either read; the packaged demo's under
    `builtin` when only some of its tasks are demo tasks."""
    demo = [d for d in (before, now) if d.get("kind") == "builtin-demo"]
    other = [d for d in (before, now) if d.get("kind") != "builtin-demo"]
    if not other:
        return {**now, "files": {**(before.get("files") or {}), **(now.get("files") or {})}}
    base = dict(other[-1])
    base["files"] = {f: s for d in other for f, s in (d.get("files") or {}).items()}
    builtins = [d.get("builtin") for d in other if d.get("builtin")] + [
        {**{k: v for k, v in d.items() if k != "baseline_join"}, "kind": "local"} for d in demo
    ]
    if builtins:
        files = {f: s for b in builtins for f, s in (b.get("files") or {}).items()}
        base["builtin"] = {**builtins[-1], "files": files}
    return base


def refuse(output: Path, owner: Owner, model: str, lines: Sequence[str]) -> ConfigError:
    if owner.model not in (None, model) or not lines:
        what = f"{output} holds a run of {owner.model} (another model or other options)"
    else:
        what = f"{output} holds a run made with other settings: {'; '.join(lines)}"
    return ConfigError(
        what,
        where="--output",
        fix="choose another output folder, or pass --overwrite to replace that run",
    )


def clear(output: Path, keep_store: bool) -> None:
    """Remove a run's files (its generation store too unless `keep_store`)."""
    for name in RUN_FILES + (() if keep_store else STORE_FILES):
        path = output / name
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)


def samples_tasks(output: Path) -> list[str]:
    folder = output / SAMPLES_DIR
    return sorted(p.stem for p in folder.glob("*.jsonl")) if folder.is_dir() else []


def drop_strays(output: Path, known: Iterable[str], reason: str) -> None:
    """Remove the samples files of tasks this run does not know (left by another run), saying so."""
    wanted = set(known)
    for task in samples_tasks(output):
        if task not in wanted:
            (output / SAMPLES_DIR / f"{task}.jsonl").unlink(missing_ok=True)
            print(f"rolebench: removed {SAMPLES_DIR}/{task}.jsonl of {output}: {reason}", file=sys.stderr)


def damaged_results(output: Path) -> tuple[RunResults | None, DataError | None]:
    """The folder's results.json, or the error that says it is damaged (None, None: there is none)."""
    if not (output / RESULTS_FILE).is_file():
        return None, None
    try:
        return read_results(output), None
    except DataError as exc:
        return None, exc


def rebuild_fix(output: Path) -> str:
    return (
        f"pass --overwrite to rebuild it from the samples files and {GENERATIONS_FILE} (or run "
        f"`rolebench score {output}`)"
    )


def claim(
    output: Path,
    model: str,
    identity: dict[str, Any],
    planned: RunConfig,
    groups: Mapping[str, Sequence[str]],
    overwrite: bool,
) -> Previous:
    """Make `output` this run's folder (call under its lock) and say what it keeps of the run in it.

    Another model's run, or the same model's run with other settings (`planned` is the new run's config
    before generating), is refused in one line, or removed with `overwrite`; so is a damaged results.json
    (`overwrite` rebuilds it from the samples files and the store). run.json is written last."""
    owner = Owner.read(output)
    results, damage = damaged_results(output)
    if owner.model is None and results is not None:  # a folder of a rolebench without run.json
        owner.model, owner.identity = results.config.model.get("spec"), results.config.model.get("identity")
    before = owner.config or (results.config if results is not None else None)
    same_model = owner.model in (None, model) and owner.identity in (None, identity)
    held = set(samples_tasks(output)) | set(results.results if results is not None else ())
    holds_run = damage is not None or bool(held)
    lines = differences(before, planned, held) if before is not None and same_model and holds_run else []
    unknown = damage is not None and before is None  # damaged, and no run.json says what the run was
    if not same_model or lines or unknown:
        if not overwrite:
            if unknown and damage is not None:
                fix = "pass --overwrite to replace it (its stored answers are reused for this model)"
                raise DataError(damage.what, where=damage.where, fix=fix)
            raise refuse(output, owner, model, lines)
        clear(output, keep_store=same_model)
        owner, results, damage, before = Owner(), None, None, None
    elif damage is not None and not overwrite:
        raise DataError(damage.what, where=damage.where, fix=rebuild_fix(output))
    previous = previous_run(output, results, owner, before)
    all_groups = {**previous.groups, **{name: list(members) for name, members in groups.items()}}
    Owner(model, identity, merged_config(before, planned), all_groups).write(output)
    return previous


def previous_run(
    output: Path, results: RunResults | None, owner: Owner, before: RunConfig | None
) -> Previous:
    """What the folder keeps of its run: tasks with samples files that results.json or run.json know
    (others are removed), their splits and length caps, groups and protocols."""
    splits: dict[str, str] = {}
    limits: dict[str, int | None] = {}
    if results is not None:
        for task, result in results.results.items():
            splits[task] = result.split
            limits[task] = result.lengths.max_new_tokens if result.lengths else None
    for task, described in (before.tasks if before is not None else {}).items():
        if task not in splits and described.get("split"):
            splits[task] = str(described["split"])
            limits[task] = (described.get("generation") or {}).get("max_new_tokens")
    drop_strays(
        output, splits, f"no task of this run (left by another run; answers stay in {GENERATIONS_FILE})"
    )
    present = set(samples_tasks(output))
    groups = {n: list(g.tasks) for n, g in results.groups.items()} if results is not None else owner.groups
    held = (results.config if results is not None else before or RunConfig()).scoring.get("protocols") or {}
    return Previous(
        results=results,
        config=before,
        kept=[task for task in splits if task in present],
        splits=splits,
        limits=limits,
        groups=dict(groups),
        protocols=list(held),
    )
