"""Task and group definitions, read from the lm-eval-schema YAML files in `tasks/`.

`rolebench evaluate` reads the same files lm-eval reads: a task file names its RoleBench split in
`dataset_kwargs.split`, its version in `metadata.version` and its generation defaults in
`generation_kwargs`; a group file lists its members under `task:`. `!function` hooks are kept as
names (only lm-eval calls them), `include:` is resolved relative to the including file.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from rolebench.data.splits import get_split
from rolebench.errors import ConfigError, DataError
from rolebench.storage.files import SAFE_NAME_RULE, is_safe_name
from rolebench.storage.yaml_files import BoundedLoader, read_yaml
from rolebench.tasks.spec import GroupSpec, TaskSpec

# The task files: the top-level `tasks/` folder, reached as `rolebench/_tasks` (a symlink to `../tasks`,
# which the wheel build follows, so an installed package carries the files there). Found here only.
TASKS_DIR = Path(__file__).resolve().parent.parent / "_tasks"


class _Loader(BoundedLoader):
    """The config reader's loader that keeps `!function module.attr` as a marker string."""


def _function_marker(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    if not isinstance(node, yaml.ScalarNode):
        raise yaml.constructor.ConstructorError(
            None, None, "!function needs a module.attr name", node.start_mark
        )
    return f"!function {loader.construct_scalar(node)}"


_Loader.add_constructor("!function", _function_marker)


def default_task_dirs() -> list[Path]:
    return [TASKS_DIR]


def _read_yaml(path: Path, seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    if path in seen:
        raise ConfigError("circular include", where=str(path))
    if not path.is_file():
        where = str(seen[-1]) if seen else str(path)
        raise ConfigError(
            f"task file {path.name} not found", where=where, fix="fix the `include:` or the path"
        )
    data = read_yaml(path, "task file", _Loader) or {}
    if not isinstance(data, dict):
        raise ConfigError("a task file must be a YAML mapping", where=str(path))
    include = data.pop("include", None)
    if include:
        base = _read_yaml(path.parent / include, (*seen, path))
        data = {**base, **data}
    return data


def _task_from(path: Path, data: dict[str, Any]) -> TaskSpec:
    where = str(path)
    split_id = _field(
        data, ("dataset_kwargs", "split"), str, where, "name a RoleBench split, e.g. zh_general"
    )
    try:
        split = get_split(split_id)
    except DataError as exc:
        raise ConfigError(exc.what, where=where, fix=exc.fix) from None
    version = _field(data, ("metadata", "version"), (int, float, str), where, "give the task a version")
    max_tokens = _field(
        data, ("generation_kwargs", "max_gen_toks"), int, where, "a positive integer", required=False
    )
    if max_tokens is not None and (isinstance(max_tokens, bool) or max_tokens < 1):
        raise ConfigError(f"max_gen_toks must be a positive integer, not {max_tokens!r}", where=where)
    until = _field(  # lm-eval's stop strings: checked for lm-eval; rolebench's backends stop at end of text
        data, ("generation_kwargs", "until"), list, where, "a list of stop strings", required=False
    )
    if until is not None and not all(isinstance(s, str) and s for s in until):
        raise ConfigError("generation_kwargs.until must be a list of non-empty strings", where=where)
    digest = hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return TaskSpec(data["task"], split, version, path, digest, max_tokens)


def _field(
    data: dict[str, Any],
    keys: tuple[str, ...],
    kind: type | tuple[type, ...],
    where: str,
    fix: str,
    *,
    required: bool = True,
) -> Any:
    """A nested field of a task file, type-checked: one ConfigError naming it when absent or wrong."""
    value: Any = data
    for key in keys:
        if not isinstance(value, dict):
            value = None
            break
        value = value.get(key)
    name = ".".join(keys)
    if value is None:
        if required:
            raise ConfigError(f"task has no `{name}`", where=where, fix=fix)
        return None
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ConfigError(
            f"`{name}` is a {type(value).__name__}, not what it should be", where=where, fix=fix
        )
    return value


def _check_name(name: object, path: Path) -> None:
    """A task or group name becomes a file name (DIR/samples/<task>.jsonl): refused here, before any
    model loads, unless it is a safe one."""
    if isinstance(name, str) and not is_safe_name(name):
        raise ConfigError(
            f"unsafe task name {name!r}",
            where=str(path),
            fix=f"name it with {SAFE_NAME_RULE}: a task's name becomes a file name",
        )


@cache
def _catalogue(dirs: tuple[Path, ...]) -> tuple[dict[str, TaskSpec], dict[str, GroupSpec]]:
    tasks: dict[str, TaskSpec] = {}
    groups: dict[str, GroupSpec] = {}
    for directory in dirs:
        for path in sorted(directory.rglob("*.yaml")):
            if path.name.startswith("_"):
                continue
            data = _read_yaml(path)
            _check_name(data.get("group", data.get("task")), path)
            if "group" in data:
                members = data.get("task")
                if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
                    raise ConfigError("a group needs `task:` as a list of names", where=str(path))
                version = (data.get("metadata") or {}).get("version", "1.0")
                groups[data["group"]] = GroupSpec(data["group"], tuple(members), version, path)
            elif isinstance(data.get("task"), str):
                tasks[data["task"]] = _task_from(path, data)
    return tasks, groups


def catalogue(extra_dirs: tuple[Path, ...] = ()) -> tuple[dict[str, TaskSpec], dict[str, GroupSpec]]:
    """All tasks and groups in the default task folder plus `extra_dirs`."""
    return _catalogue(tuple(default_task_dirs()) + tuple(Path(d) for d in extra_dirs))


def resolve(names: list[str], extra_dirs: tuple[Path, ...] = ()) -> tuple[list[TaskSpec], list[GroupSpec]]:
    """Expand task and group names into the tasks to run (in order, once each) and the groups involved."""
    tasks, groups = catalogue(extra_dirs)
    picked: dict[str, TaskSpec] = {}
    used: dict[str, GroupSpec] = {}

    def visit(name: str, trail: tuple[str, ...]) -> None:
        if name in trail:
            raise ConfigError(f"group {name!r} includes itself", where=str(groups[name].path))
        if name in tasks:
            picked.setdefault(name, tasks[name])
        elif name in groups:
            used.setdefault(name, groups[name])
            for member in groups[name].members:
                visit(member, (*trail, name))
        else:
            known = sorted(tasks) + sorted(groups)
            close = difflib.get_close_matches(name, known, n=1)
            raise ConfigError(
                f"unknown task {name!r}",
                where="--tasks",
                fix=(f"did you mean {close[0]!r}? " if close else "") + "run `rolebench tasks` to list them",
            )

    for name in names:
        visit(name, ())
    return list(picked.values()), list(used.values())
