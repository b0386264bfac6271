"""Everything `rolebench evaluate` is asked to do, in one typed record (it is recorded in results.json)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model_adapters import GenerationConfig
from rolebench.data.sampling import LIMIT_MODES, LimitMode
from rolebench.errors import ConfigError
from rolebench.prompts.elicitation import Elicitation
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
    limit_mode: LimitMode = (
        "stratified"  # "stratified": a seeded sample over roles; "first": the first N rows
    )
    limit_seed: int = 0
    protocol: str = DEFAULT_PROTOCOL  # the headline protocol (rolellm and rolebench are always computed)
    elicitation: Elicitation = field(default_factory=Elicitation)  # zero-shot, or few-shot demonstrations
    generation: GenerationConfig = field(default_factory=GenerationConfig)
    max_new_tokens: int | None = None  # None: the task file's max_gen_toks
    model_options: dict[str, Any] = field(default_factory=dict)
    include_paths: tuple[Path, ...] = ()
    bootstrap: BootstrapSettings = field(default_factory=BootstrapSettings)
    progress: bool = True
    overwrite: bool = False  # replace a run of another model in `output`

    def __post_init__(self) -> None:
        if not self.tasks or not all(t.strip() for t in self.tasks):
            raise ConfigError(
                "no task given", where="--tasks", fix="name tasks or groups: see `rolebench tasks`"
            )
        if self.limit_mode not in LIMIT_MODES:
            raise ConfigError(
                f"unknown --limit-mode {self.limit_mode!r}",
                where="--limit-mode",
                fix="use " + " or ".join(LIMIT_MODES),
            )
        if self.limit is not None and self.limit < 1:
            raise ConfigError(f"--limit {self.limit} is not allowed", where="--limit", fix="use 1 or more")
        if self.max_new_tokens is not None and self.max_new_tokens < 1:
            raise ConfigError(
                f"--max-new-tokens {self.max_new_tokens} is not allowed",
                where="--max-new-tokens",
                fix="use 1 or more (or leave it out for the task's default)",
            )
        if self.bootstrap.resamples < 0:
            raise ConfigError(
                f"--bootstrap {self.bootstrap.resamples} is not allowed",
                where="--bootstrap",
                fix="use 0 (no intervals) or more",
            )
