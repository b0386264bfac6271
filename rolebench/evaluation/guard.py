"""What running `rolebench evaluate` into a folder that already holds a run may do.

A run folder holds one run: one model and one run definition. Running again with the same model and
settings is the same run: more tasks are added, the same ones resume (stored answers are reused), and
`--limit` may grow when every task of the run is evaluated again (a larger stratified sample keeps every
item of a smaller one, so the stored answers serve). Anything else is refused in one line naming what
differs: another model, another setting of the definition, other data, a smaller `--limit` (results
never shrink without the user asking). `--overwrite` replaces the run: its files go, and the generation
store stays when the model is the same (its answers are keyed by everything that changes them).
Which settings make it the same run, and how each is compared, is the run definition's one rule
(`rolebench.run.same_run.SAME_RUN`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rolebench.errors import ConfigError, DataError
from rolebench.evaluation.config import MODEL_PROMPT_KEYS
from rolebench.results.schema import RunConfig
from rolebench.run.definition import RunDefinition
from rolebench.run.folder import RunFolder
from rolebench.run.record import RunRecord

# settings that may differ when one side has none (data: a run of packaged demo tasks reads no data;
# the --limit sample: a run without a limit has none; the sessions' opponent and turns: a run without
# session tasks has none, and may add them)
_UNSET_MATCHES = ("data", "--limit-mode/--limit-seed", "--opponent", "--turns")


@dataclass(frozen=True)
class Planned:
    """The run about to go on: its definition and its config as planned, tasks and groups."""

    definition: RunDefinition
    config: RunConfig
    groups: dict[str, list[str]]


def _location(data: Mapping[str, Any]) -> str | None:
    if data.get("kind") == "builtin-demo" or not data.get("location"):
        return None
    revision = f"@{data['revision']}" if data.get("revision") else ""
    return f"{data.get('kind')} {data['location']}{revision}"


def _settings(definition: RunDefinition, config: RunConfig) -> dict[str, Any]:
    prompt = {f"prompt {k}": v for k, v in config.prompt.items() if k not in MODEL_PROMPT_KEYS}
    seeds = (config.generation or {}).get("item_seeds") if definition.temperature > 0 else None
    sampling = {"sampling seeds": seeds or "one seed for every item"} if definition.temperature > 0 else {}
    return {**definition.settings(), "data": _location(config.data), **prompt, **sampling}


def _task_settings(config: RunConfig, task: str) -> dict[str, Any]:
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


def _limit_change(
    before: RunDefinition, now: RunDefinition, held: Iterable[str], tasks: Iterable[str]
) -> str | None:
    """Why the new `--limit` may not go on in this run (None: it may): a smaller one shrinks the results;
    a larger one must evaluate every task the run holds again, or its tasks would differ in size."""
    old, new = before.limit, now.limit
    if old == new:
        return None
    shown = f"--limit {_shown(old)} there, {_shown(new)} now"
    if old is None or (new is not None and new < old):
        return f"{shown} (a smaller sample would shrink the results)"
    missing = sorted(set(held) - set(tasks))
    if missing:
        return f"{shown} (every task of the run must be evaluated again with it: {', '.join(missing)} too)"
    return None


def differences(before: RunRecord, now: Planned, held: Iterable[str]) -> list[str]:
    """What differs between a folder's run and a new one ("--seed 0 there, 1 now"), settings both know."""
    old, new = _settings(before.definition, before.config), _settings(now.definition, now.config)
    for task in set(before.config.tasks) & set(now.config.tasks):
        old.update(_task_settings(before.config, task))
        new.update(_task_settings(now.config, task))
    lines = []
    limit = _limit_change(before.definition, now.definition, held, now.config.tasks)
    if limit:
        lines.append(limit)
    for name in [n for n in new if n in old]:
        if old[name] != new[name] and not (name in _UNSET_MATCHES and None in (old[name], new[name])):
            lines.append(f"{name} {_shown(old[name])} there, {_shown(new[name])} now")
    old_files, new_files = data_files(before.config), data_files(now.config)
    changed = sorted(f for f in set(old_files) & set(new_files) if old_files[f] != new_files[f])
    lines += [
        f"data file {f} changed (sha256 {old_files[f][:8]} there, {new_files[f][:8]} now)" for f in changed
    ]
    return lines


def _shown(value: Any) -> str:
    return "none" if value is None else str(value)


def _brief(name: str, value: Any) -> str:
    text = "none" if value is None else str(value)
    if name.endswith(("sha256", "digest")):
        return text[:12]
    return text if len(text) <= 60 else text[:57] + "..."


def model_change(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """What differs between two model identities, in words: the parts that differ (a table's entries
    that differ, e.g. `weights: chat_template.jinja`), or the parts an older rolebench did not record."""
    parts = []
    for name in sorted(set(old) | set(new)):
        before, now = old.get(name), new.get(name)
        if before == now:
            continue
        if name not in old:
            parts.append(f"{name}: not recorded there (an older rolebench left it out of the identity)")
        elif isinstance(before, Mapping) and isinstance(now, Mapping):
            changed = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k))
            parts.append(f"{name}: {', '.join(map(str, changed[:3]))}{' ...' if len(changed) > 3 else ''}")
        else:
            parts.append(f"{name} {_brief(name, before)} there, {_brief(name, now)} now")
    return "; ".join(parts) or "its identity"


def _refusal(folder: RunFolder, before: RunRecord | None, planned: Planned, lines: list[str]) -> ConfigError:
    if before is None or not lines:
        owner = before.definition.model if before is not None else "an unknown model"
        what = f"{folder.path} holds a run of {owner} (another model or other options)"
        old = before.config.model.get("identity") if before is not None else None
        new = planned.config.model.get("identity")
        if isinstance(old, Mapping) and isinstance(new, Mapping):
            change = model_change(old, new)
            what = f"{folder.path} holds a run of {owner}, another model than this one ({change})"
    else:
        what = f"{folder.path} holds a run made with other settings: {'; '.join(lines)}"
    return ConfigError(
        what, where="--output", fix="choose another output folder, or pass --overwrite to replace that run"
    )


def claim(folder: RunFolder, planned: Planned, overwrite: bool) -> RunRecord | None:
    """Make the folder this run's (call under its lock): the record of the run it holds, which goes on
    (None: the folder holds none, or `overwrite` replaced it). Refuses in one line otherwise."""
    before = RunRecord.read(folder)
    damaged = _damage(folder)
    held = set(folder.sample_tasks()) | (set(before.config.tasks) if before is not None else set())
    if before is None and (held or damaged is not None):
        if not overwrite:
            fix = "pass --overwrite to replace it (its stored answers are reused for this model)"
            what = damaged.what if damaged is not None else f"{folder.path} holds files of an unknown run"
            raise DataError(what, where=damaged.where if damaged else str(folder.path), fix=fix)
        folder.clear(keep_store=True)  # its answers are keyed by model identity: only this model's serve
        return None
    if before is None:
        return None
    same_model = before.config.model.get("identity") == planned.config.model.get("identity")
    lines = differences(before, planned, _finished(before, folder)) if same_model else []
    if not same_model or lines:
        if not overwrite:
            raise _refusal(folder, before, planned, lines)
        folder.clear(keep_store=same_model)
        return None
    return before


def _finished(record: RunRecord, folder: RunFolder) -> list[str]:
    """The tasks of the run that hold results (their samples file is there)."""
    present = set(folder.sample_tasks())
    return [task for task in record.config.tasks if task in present]


def _damage(folder: RunFolder) -> DataError | None:
    """The error that says results.json is damaged (None: it is readable, or there is none)."""
    if not folder.results_path.is_file():
        return None
    try:
        folder.read_results()
    except DataError as exc:
        return exc
    return None
