"""`baseline:rolegpt`: answers with the released RoleGPT baseline (`rolegpt_baseline.jsonl`).

It reproduces the paper's RoleGPT row from data alone. The runner puts each sample's baseline
answer (joined on the raw `(role, question)` in rolebench.data) into `Request.meta["baseline"]`;
a sample without one gets no answer (`text=None`) and is reported as not covered, never scored as
an empty string.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from model_adapters.interface import Generation, GenerationConfig, Request
from rolebench.errors import ConfigError

BASELINES = ("rolegpt",)


class BaselineAdapter:
    request_meta_keys = ("baseline",)  # the answer comes from the data, so the data is part of its identity

    def __init__(self, name: str) -> None:
        self.spec = f"baseline:{name}"
        self.name = name

    @classmethod
    def from_spec(cls, rest: str, **options: Any) -> BaselineAdapter:
        if rest not in BASELINES:
            raise ConfigError(f"unknown baseline {rest!r}", where="--model", fix="use baseline:rolegpt")
        return cls(rest)

    def info(self) -> dict[str, Any]:
        return {
            "name": "RoleGPT (released baseline answers)",
            "revision": None,
            "source": "rolegpt_baseline.jsonl",
        }

    def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> Iterator[tuple[Request, Generation]]:
        for request in requests:
            answer = request.meta.get("baseline")
            if answer is None:
                yield (
                    request,
                    Generation(text=None, error="no RoleGPT baseline answer for this (role, question)"),
                )
            else:
                yield request, Generation(text=answer, finish_reason="stop")

    def close(self) -> None:
        return None
