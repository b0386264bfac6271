"""How to judge: every setting of `rolebench judge` (and of `evaluate --judge`) but the judge's spec.

Named as `rolebench judge`'s flags in snake_case (the Python API `rolebench.judge(run, judge, **options)`
takes the same names). `evaluate --judge` fills it from its own flags (`--judge-limit`,
`--judge-base-url`, ...; its `--seed` and `--concurrency`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import field_validator

from rolebench.judging.config import DEFAULT_JUDGE
from rolebench.settings_model import Int, SettingsModel, key_values, setting


class JudgeSettings(SettingsModel):
    """Everything about judging but the judge's spec."""

    judge_limit: Int | None = setting(None, "judge a seeded sample of N pairs per task", ge=1, metavar="N")
    concurrency: Int = setting(8, "judge requests in flight (API judges)", ge=1, metavar="C")
    base_url: str | None = setting(None, "OpenAI-compatible server URL for an openai: judge", metavar="URL")
    judge_args: dict[str, str] = setting(
        {}, "the judge backend's options as key=value,... (e.g. timeout=60)", key_values=True
    )
    judge_config: str = setting(DEFAULT_JUDGE, "packaged judge name or judge YAML file", metavar="NAME|FILE")
    price_table: Path | None = setting(
        None, "YAML/JSON: MODEL: {input: $/1M tokens, output: $/1M tokens}", metavar="FILE"
    )
    reparse: bool = setting(
        False, "re-apply the parser to stored judge completions (no new calls for parsable ones)"
    )
    seed: Int = setting(0, "seed of the --judge-limit sample (and of the one order a one-order judge shows)")
    progress: bool = setting(True, "show progress bars")
    cache_dir: Path | None = setting(
        None, "folder of the judgment cache (default: $ROLEBENCH_CACHE or the user cache dir)", metavar="DIR"
    )

    @field_validator("judge_args", mode="before")
    @classmethod
    def _judge_args(cls, value: Any) -> dict[str, str]:
        return key_values(value, where="--judge-args")

    def adapter_options(self) -> dict[str, Any]:
        """The judge backend's options: `judge_args` and the base URL."""
        return {**self.judge_args, **({"base_url": self.base_url} if self.base_url else {})}
