"""Reading a sweep file (`rolebench sweep`): its models, tasks and evaluate options, checked like
`rolebench evaluate --config FILE`, into a `SweepPlan` (one `ModelRun` per model), before any job starts."""

from __future__ import annotations

import argparse
import difflib
import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rolebench.commands import evaluate
from rolebench.commands._arguments import (
    Subparsers,
    config_defaults,
    model_options,
    parse_model_args,
    read_yaml_mapping,
)
from rolebench.errors import ConfigError, RoleBenchError

if TYPE_CHECKING:
    from rolebench.sweep.plan import JudgeStep, ModelRun, SweepPlan

RESERVED_NAMES = ("leaderboard", "sweep.json")
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


class ModelEntry(BaseModel):
    """One item of `models:`: a spec, or a mapping."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    spec: str
    name: str | None = None
    model_args: dict[str, Any] | str | None = None
    num_cpus: float = Field(1, ge=0)
    num_gpus: float = Field(0, ge=0)
    resources: dict[str, float] = {}


class _FileParser(argparse.ArgumentParser):
    """`rolebench evaluate`'s parser reading a sweep file: a bad value is one ConfigError naming the file."""

    where = ""

    def error(self, message: str) -> NoReturn:
        raise ConfigError(message, where=self.where)


def evaluate_parser(file: Path) -> argparse.ArgumentParser:
    """A fresh copy of `rolebench evaluate`'s parser, plus `models` (read here, not by argparse)."""
    root = _FileParser(prog="rolebench")
    subparsers = root.add_subparsers(parser_class=_FileParser)
    evaluate.add_parser(cast(Subparsers, subparsers))
    parser = subparsers.choices["evaluate"]
    parser.add_argument("--models", help=argparse.SUPPRESS)
    for p in (root, parser):
        if isinstance(p, _FileParser):
            p.where = str(file)
    return parser


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


def evaluate_arguments(file: Path) -> argparse.Namespace:
    """The file's evaluate options as `rolebench evaluate --config FILE` would read them."""
    parser = evaluate_parser(file)
    defaults = config_defaults(file, parser)
    for key, fix in (
        ("model", "list them under `models:`"),
        ("output", "give --output DIR to `rolebench sweep`"),
    ):
        if key in defaults:
            raise ConfigError(f"a sweep file has no `{key}:`", where=str(file), fix=fix)
    if not defaults.get("tasks"):
        raise ConfigError("no tasks", where=str(file), fix="name tasks or groups under `tasks:`")
    parser.set_defaults(**defaults)
    return absolute_paths(parser.parse_args([]))


def absolute_paths(args: argparse.Namespace) -> argparse.Namespace:
    """Local paths made absolute: a job's worker may run in another folder (or on another node)."""
    data_dir = args.data_dir
    if data_dir and "://" not in data_dir and Path(data_dir).expanduser().exists():
        args.data_dir = str(Path(data_dir).expanduser().resolve())
    args.include_path = [Path(p).expanduser().resolve() for p in args.include_path]
    if args.price_table is not None:
        args.price_table = Path(args.price_table).expanduser().resolve()
    return args


def _option_text(value: Any) -> str:
    """A model_args value as the command line would give it (so runs match `rolebench evaluate` runs)."""
    if value is None:
        return "none"
    return str(value).lower() if isinstance(value, bool) else str(value)


def merged_model_args(args: argparse.Namespace, entry: ModelEntry) -> dict[str, Any]:
    options = model_options(args)
    if isinstance(entry.model_args, str):
        options.update(parse_model_args(entry.model_args))
    elif entry.model_args:
        options.update({str(k): _option_text(v) for k, v in entry.model_args.items()})
    return options


def run_name(entry: ModelEntry, where: str) -> str:
    name = entry.name or evaluate.default_output(entry.spec).name
    if not _SAFE_NAME.match(name) or ".." in name or name in RESERVED_NAMES:
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
    args = evaluate_arguments(file)
    output = Path(output).expanduser().resolve()
    tasks = task_names(args, file)
    try:
        judge = judge_step(args)
    except ConfigError as exc:
        raise in_file(exc, f"{file}: judge") from None
    runs = []
    for i, raw in enumerate(data["models"]):
        where = f"{file}: models[{i}]"
        runs.append(model_run(args, model_entry(raw, where), output, where, tasks, judge))
    names = [run.name for run in runs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(
            f"two models would share the run folder {twice[0]!r}",
            where=str(file),
            fix="give each model its own `name:`",
        )
    return SweepPlan(file=Path(file), runs=tuple(runs), totals=task_totals(runs[0]))


def task_names(args: argparse.Namespace, file: Path) -> tuple[str, ...]:
    """The file's tasks, groups expanded (each one is a job of every model)."""
    from rolebench.tasks.catalogue import resolve

    names = [t.strip() for t in args.tasks.split(",") if t.strip()]
    try:
        specs, _ = resolve(names, tuple(args.include_path))
    except ConfigError as exc:
        raise in_file(exc, f"{file}: tasks") from None
    return tuple(spec.name for spec in specs)


def in_file(exc: RoleBenchError, where: str) -> ConfigError:
    """The same line, placed in the sweep file (`where`), keeping the option it names."""
    inner = exc.where if exc.where and exc.where not in ("--model", "--tasks") else None
    return ConfigError(exc.what, where=f"{where}, {inner}" if inner else where, fix=exc.fix)


def judge_step(args: argparse.Namespace) -> JudgeStep | None:
    """`judge:` of the sweep file, checked now (spec, options, judge file, price table)."""
    if not args.judge:
        return None
    from rolebench.judge.run import prepare_judge
    from rolebench.sweep.plan import JudgeStep

    settings = replace(evaluate.judge_settings(args, args.judge_base_url), progress=False)
    # Not the key or a local server: those are the Ray nodes' (a job checks them where it runs).
    prepare_judge(args.judge, settings, environment=False)
    return JudgeStep(args.judge, settings)


def model_run(
    args: argparse.Namespace,
    entry: ModelEntry,
    output: Path,
    where: str,
    tasks: tuple[str, ...],
    judge: JudgeStep | None,
) -> ModelRun:
    """One model's checked evaluate run (its spec, options and the file's options)."""
    from model_adapters import adapter_class, model_identity
    from rolebench.sweep.plan import ModelRun

    name = run_name(entry, where)
    try:
        options = evaluate.eval_options(
            args,
            model=entry.spec,
            model_args=merged_model_args(args, entry),
            output=output / name,
            progress=False,
        )
        identity = model_identity(options.model, options.model_options)
        validated = adapter_class(options.model).Options.parse(options.model_options, entry.spec)
    except RoleBenchError as exc:
        raise in_file(exc, where) from None
    resources: dict[str, Any] = {"num_cpus": _number(entry.num_cpus), "num_gpus": _number(entry.num_gpus)}
    if entry.resources:
        resources["resources"] = dict(entry.resources)
    data_parallel = int(getattr(validated, "data_parallel", 1))
    return ModelRun(
        name=name,
        options=options,
        identity=identity,
        tasks=tasks,
        judge=judge,
        resources=resources if data_parallel == 1 else {"num_cpus": 0},  # the replicas hold the resources
        replica_resources=None if data_parallel == 1 else resources,
    )


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def task_totals(run: ModelRun) -> dict[str, int]:
    """The samples of each task (the same for every model): the data is read and checked here."""
    from rolebench.data.resolve import resolve_source
    from rolebench.evaluation.plan import plan_tasks
    from rolebench.tasks.catalogue import resolve

    options = run.options
    specs, _ = resolve(list(options.tasks), options.include_paths)
    plans = plan_tasks(options, specs, resolve_source(options.data_dir, revision=options.revision))
    return {plan.spec.name: len(plan.samples) for plan in plans}
