"""A task (one RoleBench split, evaluated with its own generation defaults) and a group of tasks."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rolebench.data.splits import SplitDef


@dataclass(frozen=True)
class TaskSpec:
    """A task file: its split (and so its files, language and metrics), version and generation defaults."""

    name: str
    split: SplitDef
    version: float | str
    path: Path
    config_sha256: str
    max_new_tokens: int | None = None  # generation_kwargs.max_gen_toks

    def describe(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "split": self.split.id,
            "file": self.path.name,
            "config_sha256": self.config_sha256,
        }


@dataclass(frozen=True)
class GroupSpec:
    """A group file: its member tasks (or groups)."""

    name: str
    members: tuple[str, ...]
    version: float | str
    path: Path
