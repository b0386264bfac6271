"""The judgment folders of a run: one `JudgmentSet` per judge (and per opponent run), and finding them.

```
DIR/judgments/<judge>/                judge.json + <task>.jsonl: against the RoleGPT baseline
DIR/judgments/versus/<run>/<judge>/   against another run (`judge --against`), one folder per opponent
DIR/judgments/<task>.jsonl            (and versus/<run>/<task>.jsonl) written by an older rolebench
```
A set's files are read checked (a damaged one is one DataError naming it) and written atomically, its
judge.json last, with every file's sha256. The names are the folder layout's (`rolebench.run.layout`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model_adapters.files import file_sha256
from rolebench.errors import DataError
from rolebench.results.io import check_task_name, read_judgments_file
from rolebench.run.layout import JUDGE_FILE, VERSUS_DIR
from rolebench.storage.files import write_json_atomic, write_jsonl_atomic
from rolebench.storage.jsonl import read_json


@dataclass(frozen=True)
class JudgmentSet:
    """One folder of judgments: a judge's verdicts on the run's answers against the RoleGPT baseline
    (`opponent` None) or against another run's answers (`opponent`: that run's folder name here)."""

    folder: Path
    opponent: str | None = None
    legacy: bool = False  # judgments written before judge folders existed (their meta is in results.json)

    @property
    def meta_path(self) -> Path:
        """judge.json: how these judgments were made."""
        return self.folder / JUDGE_FILE

    def meta(self) -> dict[str, Any] | None:
        """judge.json: how these judgments were made (None: none written)."""
        path = self.meta_path
        if not path.is_file():
            return None
        data = read_json(path)
        if not isinstance(data, dict):
            raise DataError("a judge.json is not a JSON object", where=str(path), fix="run the judge again")
        return data

    def tasks(self) -> list[str]:
        return sorted(p.stem for p in self.folder.glob("*.jsonl")) if self.folder.is_dir() else []

    def path_of(self, task: str) -> Path:
        return self.folder / f"{check_task_name(task, str(self.folder))}.jsonl"

    def lines(self, task: str) -> list[dict[str, Any]]:
        """A task's judgment lines, checked (`rolebench.results.io.read_judgments_file`: the digest
        judge.json records, one verdict per pair, known values); one DataError naming what fails."""
        meta = self.meta() or {}
        digest = (meta.get("sha256") or {}).get(task) if isinstance(meta.get("sha256"), dict) else None
        judge = meta.get("spec") or "SPEC"
        fix = (
            f"judge again (`rolebench judge RUN --judge {judge}` writes the file again from the judgment "
            "cache), or move the file aside"
        )
        return read_judgments_file(self.path_of(task), digest if isinstance(digest, str) else None, fix)

    def write(self, lines: dict[str, list[dict[str, Any]]], meta: dict[str, Any]) -> None:
        """Each task's lines, then judge.json with every file's sha256 (atomically, each)."""
        try:
            digests = dict((self.meta() or {}).get("sha256") or {})
        except DataError:  # a damaged judge.json is replaced
            digests = {}
        for task, task_lines in lines.items():
            write_jsonl_atomic(self.path_of(task), task_lines)
            digests[task] = file_sha256(self.path_of(task))
        write_json_atomic(self.meta_path, {**meta, "sha256": digests})

    def take_files(self, other: JudgmentSet, meta: dict[str, Any]) -> None:
        """Move the judgments files of `other` (a set an older rolebench wrote) into this set's folder,
        with `meta` as its judge.json, written as given."""
        self.folder.mkdir(parents=True, exist_ok=True)
        for path in other.folder.glob("*.jsonl"):
            os.replace(path, self.folder / path.name)
        write_json_atomic(self.meta_path, meta)


def judgment_sets(root: Path) -> list[JudgmentSet]:
    """Every set of judgments under a run's judgments folder `root` (an older rolebench's included)."""
    if not root.is_dir():
        return []
    found = [JudgmentSet(root, None, legacy=True)] if any(root.glob("*.jsonl")) else []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and p.name != VERSUS_DIR):
        found.append(JudgmentSet(folder, None))
    versus = root / VERSUS_DIR
    for opponent in sorted(p for p in versus.iterdir() if p.is_dir()) if versus.is_dir() else []:
        if any(opponent.glob("*.jsonl")):
            found.append(JudgmentSet(opponent, opponent.name, legacy=True))
        found += [JudgmentSet(f, opponent.name) for f in sorted(p for p in opponent.iterdir() if p.is_dir())]
    return found


def judgment_set_folder(root: Path, judge: str, opponent: str | None = None) -> JudgmentSet:
    """The set of one judge (`judge`, `opponent`: file-safe names) under the judgments folder `root`."""
    return JudgmentSet((root if opponent is None else root / VERSUS_DIR / opponent) / judge, opponent)


def judgment_folders(root: Path) -> list[Path]:
    """The judgments folder `root` and every folder under it (where interrupted writes leave files)."""
    if not root.is_dir():
        return []
    return [root, *(p for p in root.rglob("*") if p.is_dir())]
