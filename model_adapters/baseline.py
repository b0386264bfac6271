"""`baseline:rolegpt`: answers with the released RoleGPT baseline (`rolegpt_baseline.jsonl`).

It reproduces the paper's RoleGPT row from data alone. The runner puts each sample's baseline
answer (joined on the raw `(role, question)` in `rolebench.data`) into `Request.meta["baseline"]`;
a sample without one gets no answer (`text=None`) and is reported as not covered, never scored as
an empty string. It takes no options.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from model_adapters.errors import ConfigError
from model_adapters.interface import AdapterBase, Generation, GenerationConfig, Request
from model_adapters.options import AdapterOptions
from model_adapters.spec import ModelSpec

BASELINES = ("rolegpt",)


class BaselineAdapter(AdapterBase):
    # the answer comes from the data, so the data is part of its identity
    request_meta_keys: ClassVar[tuple[str, ...]] = ("baseline",)

    def __init__(self, name: str) -> None:
        self.spec = f"baseline:{name}"
        self.name = name

    @classmethod
    def from_spec(cls, spec: ModelSpec, options: AdapterOptions) -> BaselineAdapter:
        if spec.name not in BASELINES:
            raise ConfigError(f"unknown baseline {spec.name!r}", where="--model", fix="use baseline:rolegpt")
        return cls(spec.name)

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
                    Generation(
                        text=None, error="no RoleGPT baseline answer for this (role, question)", missing=True
                    ),
                )
            else:
                yield request, Generation(text=answer, finish_reason="stop")
