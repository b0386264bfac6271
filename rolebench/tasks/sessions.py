"""The session tasks: their names (beside the single-turn tasks of `rolebench tasks`), what each plays on,
and the groups that gather them.

RPBench-Auto's characters and scenes ship inside the package (`RPBENCH_DIR`: the release's two files and
its Apache-2.0 `LICENSE`, with `NOTICE.md` saying where they come from); RoleBench's roles are read from the
run's RoleBench data (`--data-dir` or the Hub at `--revision`), as the single-turn tasks are.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

RPBENCH_DIR = Path(__file__).resolve().parents[1] / "sessions" / "rpbench"  # beside the sessions engine


@dataclass(frozen=True)
class SessionTask:
    """One session task: its name, its name in tables, where its items come from, their kind and language."""

    name: str
    label: str
    source: Literal["rpbench", "rolebench"]
    kind: Literal["character", "scene", "role"]
    language: Literal["en", "zh"]


SESSION_TASKS: dict[str, SessionTask] = {
    task.name: task
    for task in (
        SessionTask("rpbench_character", "RPBench-Auto characters", "rpbench", "character", "en"),
        SessionTask("rpbench_scene", "RPBench-Auto scenes", "rpbench", "scene", "en"),
        SessionTask("rolebench_eng_sessions", "RoleBench roles, English", "rolebench", "role", "en"),
        SessionTask("rolebench_zh_sessions", "RoleBench roles, Chinese", "rolebench", "role", "zh"),
    )
}
SESSION_GROUPS: dict[str, tuple[str, ...]] = {
    "rpbench": ("rpbench_character", "rpbench_scene"),
    "rolebench_sessions": ("rolebench_eng_sessions", "rolebench_zh_sessions"),
}


def split_tasks(names: Iterable[str]) -> tuple[list[str], list[str]]:
    """The single-turn task and group names, and the session tasks (groups expanded), in order, once each."""
    single: list[str] = []
    sessions: list[str] = []
    for name in names:
        if name in SESSION_GROUPS:
            sessions += SESSION_GROUPS[name]
        elif name in SESSION_TASKS:
            sessions.append(name)
        else:
            single.append(name)
    return single, list(dict.fromkeys(sessions))
