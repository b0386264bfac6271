"""Reading a sweep file (`rolebench sweep`): its models, tasks and evaluate options, checked like
`rolebench evaluate --config FILE`, into a `SweepPlan` (one `ModelRun` per model), before any job starts."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rolebench.commands._arguments import read_yaml_mapping
from rolebench.errors import ConfigError, RoleBenchError
from rolebench.storage.files import is_safe_name

if TYPE_CHECKING:
    from rolebench.sweep.plan import ModelRun, SweepPlan

RESERVED_NAMES = ("leaderboard", "sweep.json")


class ModelEntry(BaseModel):
    """One item of `models:`: a spec, or a mapping."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    spec: str
    name: str | None = None
    model_args: dict[str, Any] | str | None = None
    num_cpus: float = Field(1, ge=0)
    num_gpus: float = Field(0, ge=0)
    resources: dict[str, float] = {}


def read_sweep_file(file: Path) -> dict[str, Any]:
    data = read_yaml_mapping(file, "sweep file", "a YAML mapping with `models:` and `tasks:`")
    models = data.get("models")
    if not isinstance(models, list) or not models:
        raise ConfigError(
            "no models", where=str(file), fix="list model specs (or mappings with `spec:`) under `models:`"
        )
    return data


def model_entry(raw: Any, where: str) -> ModelEntry:
    try:
        return ModelEntry.model_validate({"spec": raw} if isinstance(raw, str) else raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(map(str, first["loc"])) or "?"
        if first["type"] == "extra_forbidden":
            close = difflib.get_close_matches(key, list(ModelEntry.model_fields), n=1)
            hint = f"did you mean {close[0]}? " if close else ""
            fix = hint + "known keys: " + ", ".join(ModelEntry.model_fields)
            raise ConfigError(f"unknown key {key!r} in a model", where=where, fix=fix) from None
        raise ConfigError(
            f"{key}: {first['msg']}", where=where, fix="write a spec, or a mapping with spec:"
        ) from None


def evaluate_options(data: dict[str, Any], file: Path) -> dict[str, Any]:
    """The file's `rolebench evaluate` options (every key but `models:`), by flag name in snake_case,
    with local paths made absolute (a job's worker may run in another folder, or on another node)."""
    options = {str(k).strip().lstrip("-").replace("-", "_"): v for k, v in data.items() if k != "models"}
    for key, fix in (
        ("model", "list them under `models:`"),
        ("output", "give --output DIR to `rolebench sweep`"),
    ):
        if key in options:
            raise ConfigError(f"a sweep file has no `{key}:`", where=str(file), fix=fix)
    if not options.get("tasks"):
        raise ConfigError("no tasks", where=str(file), fix="name tasks or groups under `tasks:`")
    data_dir = options.get("data_dir")
    if isinstance(data_dir, str) and "://" not in data_dir and Path(data_dir).expanduser().exists():
        options["data_dir"] = str(Path(data_dir).expanduser().resolve())
    paths = options.get("include_path")
    if paths:
        listed = paths if isinstance(paths, list) else [paths]
        options["include_path"] = [str(Path(str(p)).expanduser().resolve()) for p in listed]
    if options.get("price_table"):
        options["price_table"] = str(Path(str(options["price_table"])).expanduser().resolve())
    return options


def merged_model_args(options: dict[str, Any], entry: ModelEntry) -> dict[str, str]:
    """The file's `model_args` with the model's own over them."""
    from rolebench.settings_model import key_values

    merged = key_values(options.get("model_args") or {}, where="model_args")
    if entry.model_args:
        merged.update(key_values(entry.model_args, where="model_args"))
    return merged


def run_name(entry: ModelEntry, where: str, options: dict[str, Any]) -> str:
    """The model's run folder: its `name:`, else from its spec (and a few-shot method: one folder per
    method, as `rolebench evaluate` names them)."""
    from rolebench.evaluation.api import default_run_folder

    try:
        folder = default_run_folder(entry.spec, options.get("elicitation"), options.get("shots"))
    except (ConfigError, TypeError):
        folder = default_run_folder(entry.spec)  # a bad method is refused, naming it, when options are read
    name = entry.name or folder.name
    if not is_safe_name(name) or name in RESERVED_NAMES:
        raise ConfigError(
            f"run folder name {name!r} is not allowed",
            where=where,
            fix="give the model a `name:` of letters, digits, '_', '-' and '.' (not leaderboard)",
        )
    return name


def load_sweep(file: Path, output: Path) -> SweepPlan:
    """Read and check a sweep file completely (every model, option, task, the data and the judge): the
    `rolebench.sweep.plan.SweepPlan` to run."""
    from rolebench.sweep.plan import SweepPlan

    data = read_sweep_file(file)
    options = evaluate_options(data, file)
    output = Path(output).expanduser().resolve()
    runs = []
    for i, raw in enumerate(data["models"]):
        where = f"{file}: models[{i}]"
        runs.append(model_run(options, model_entry(raw, where), output, where, file))
    names = [run.name for run in runs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(
            f"two models would share the run folder {twice[0]!r}",
            where=str(file),
            fix="give each model its own `name:`",
        )
    return SweepPlan(file=Path(file), runs=tuple(runs), totals=task_totals(runs[0]))


def in_file(exc: RoleBenchError, where: str) -> ConfigError:
    """The same line, placed in the sweep file (`where`), keeping the option it names."""
    inner = exc.where if exc.where and exc.where not in ("--model", "--tasks") else None
    return ConfigError(exc.what, where=f"{where}, {inner}" if inner else where, fix=exc.fix)


def model_run(options: dict[str, Any], entry: ModelEntry, output: Path, where: str, file: Path) -> ModelRun:
    """One model's checked evaluate run (its spec, options and the file's options)."""
    from model_adapters import adapter_class
    from rolebench.evaluation.api import check_players, checked_judge, session_facts, split_options
    from rolebench.sweep.plan import ModelRun
    from rolebench.tasks.catalogue import resolve
    from rolebench.tasks.sessions import split_tasks

    name = run_name(entry, where, options)
    values = {**options, "model": entry.spec, "model_args": merged_model_args(options, entry)}
    values.update(output=output / name, progress=False)
    definition, execution, judging = split_options(values, str(file), flag_style=True)
    try:
        definition = definition.checked()
        identity_options = definition.adapter_options(execution.base_url)
        definition.model_identity(execution.base_url)
        validated = adapter_class(definition.model).Options.parse(identity_options, entry.spec)
        single, sessions = split_tasks(definition.tasks)
        specs, _ = resolve(single, tuple(Path(p) for p in definition.include_path)) if single else ([], [])
        check_players(definition, judging.judge)
    except RoleBenchError as exc:
        raise in_file(exc, where) from None
    try:  # not the key or a local server: those are the Ray nodes' (a job checks them where it runs)
        settings = checked_judge(judging, definition, execution)
    except ConfigError as exc:
        raise in_file(exc, f"{file}: judge") from None
    resources: dict[str, Any] = {"num_cpus": _number(entry.num_cpus), "num_gpus": _number(entry.num_gpus)}
    if entry.resources:
        resources["resources"] = dict(entry.resources)
    data_parallel = int(getattr(validated, "data_parallel", 1))
    facts = {
        s.name: {**s.describe(), "max_new_tokens": definition.max_new_tokens or s.max_new_tokens}
        for s in specs
    } | {task: session_facts(task) for task in sessions}
    return ModelRun(
        name=name,
        definition=definition,
        execution=execution,
        tasks=(*(spec.name for spec in specs), *sessions),
        task_facts=facts,
        judge=judging.judge,
        judge_settings=settings,
        resources=resources if data_parallel == 1 else {"num_cpus": 0},  # the replicas hold the resources
        replica_resources=None if data_parallel == 1 else resources,
    )


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def task_totals(run: ModelRun) -> dict[str, int]:
    """The samples of each task (the same for every model): the data is read and checked here."""
    from rolebench.evaluation.api import plan_run

    return plan_run(run.definition, run.execution).calls()  # a session task's total: its turns to play
