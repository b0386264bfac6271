"""The result document of a run (`DIR/results.json`) and its samples files: schema, reading, writing.

Results are fractions in [0, 1] (None when a metric could not be computed); `config` says how the
numbers were made. Everything written passes through `redact`, so no API key reaches a file.
"""

from __future__ import annotations

import json
import re
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from rolebench.errors import DataError
from rolebench.storage.files import write_json_atomic, write_jsonl_atomic
from rolebench.storage.jsonl import read_jsonl

SCHEMA_VERSION = 1
RESULTS_FILE = "results.json"
SAMPLES_DIR = "samples"
PACKAGES = (
    "rolebench",
    "torch",
    "transformers",
    "peft",
    "accelerate",
    "openai",
    "vllm",
    "llama_cpp_python",
    "lm_eval",
    "datasets",
    "huggingface_hub",
    "rapidfuzz",
    "jieba",
    "rouge_score",
    "rouge_chinese",
)
_SECRET = re.compile(
    r"(?i)((?:api[_-]?key|token|secret|password|authorization)\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|\S+)"
    r"|\b(sk-[A-Za-z0-9_\-]{8,}|hf_[A-Za-z0-9]{8,}|Bearer\s+\S+)"
)


class TaskResult(BaseModel):
    """Metrics of one task; judge fields (win_rate, ...) are added by rolebench.judge."""

    model_config = ConfigDict(extra="allow")
    split: str
    n: int
    n_generated: int
    n_not_covered: int
    per_role: dict[str, dict[str, Any]] = {}


class GroupResult(BaseModel):
    model_config = ConfigDict(extra="allow")
    tasks: list[str]
    n: int
    avg: float | None = None


class RunResults(BaseModel):
    model_config = ConfigDict(extra="allow")
    schema_version: int = SCHEMA_VERSION
    created: str
    config: dict[str, Any]
    results: dict[str, TaskResult]
    groups: dict[str, GroupResult] = {}


def redact(text: str) -> str:
    """Hide anything that looks like a credential (key=value pairs, sk-/hf_ tokens, bearer headers)."""
    return _SECRET.sub(lambda m: f"{m.group(1)}***" if m.group(1) else "***", text)


def now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def package_versions() -> dict[str, str]:
    found = {"python": sys.version.split()[0]}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def command_line() -> str:
    return redact(" ".join(["rolebench", *sys.argv[1:]]))


def write_results(run_dir: Path, results: RunResults) -> Path:
    """Write DIR/results.json atomically, with credentials redacted."""
    text = redact(json.dumps(results.model_dump(mode="json"), ensure_ascii=False))
    path = Path(run_dir) / RESULTS_FILE
    write_json_atomic(path, json.loads(text))
    return path


def read_results(path: str | Path) -> RunResults:
    """Read a results.json (or the one inside a run folder); one clear error if it is not one."""
    path = Path(path)
    if path.is_dir():
        path = path / RESULTS_FILE
    if not path.is_file():
        raise DataError(
            "no results file", where=str(path), fix="pass a run folder written by `rolebench evaluate`"
        )
    try:
        return RunResults.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        first = exc.errors()[0]
        raise DataError(
            f"not a rolebench results file: {first['msg']} at {'.'.join(map(str, first['loc']))}",
            where=str(path),
        ) from None


def samples_path(run_dir: Path, task: str) -> Path:
    return Path(run_dir) / SAMPLES_DIR / f"{task}.jsonl"


def write_samples(run_dir: Path, task: str, records: list[dict[str, Any]]) -> None:
    write_jsonl_atomic(samples_path(run_dir, task), records)


def read_samples(run_dir: Path, task: str) -> list[dict[str, Any]]:
    path = samples_path(run_dir, task)
    if not path.is_file():
        raise DataError(
            f"no samples file for task {task}",
            where=str(path),
            fix="re-run `rolebench evaluate` for this task",
        )
    return list(read_jsonl(path))
