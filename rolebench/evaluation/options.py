"""Everything `rolebench evaluate` is asked to do, in one typed record (it is recorded in results.json)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model_adapters import GenerationConfig
from rolebench.scoring.aggregate import BootstrapSettings
from rolebench.scoring.protocols import DEFAULT_PROTOCOL


@dataclass(frozen=True)
class EvalOptions:
    model: str
    tasks: tuple[str, ...]
    output: Path
    data_dir: str | None = None
    revision: str | None = None
    limit: int | None = None
    protocol: str = DEFAULT_PROTOCOL  # the headline protocol (rolellm and rolebench are always computed)
    generation: GenerationConfig = field(default_factory=GenerationConfig)
    max_new_tokens: int | None = None  # None: the task file's max_gen_toks
    model_options: dict[str, Any] = field(default_factory=dict)
    include_paths: tuple[Path, ...] = ()
    bootstrap: BootstrapSettings = field(default_factory=BootstrapSettings)
    progress: bool = True
