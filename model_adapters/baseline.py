"""`baseline:NAME`: answers that come from the data, not from a model (no weights, no calls).

- `baseline:rolegpt` answers with the released RoleGPT baseline (`rolegpt_baseline.jsonl`): it
  reproduces the paper's RoleGPT row from data alone. The runner puts each sample's baseline answer
  (joined on the raw `(role, question)` in `rolebench.data`) into `Request.meta["baseline"]`; a sample
  without one gets no answer (`text=None`) and is reported as not covered, never scored as "".
- The floors (null baselines): `baseline:question` answers with the question itself, as written, and
  `baseline:description` with the role's description. They answer every item of every split, and
  say what a score is worth when no model stands behind it: the question restated already scores
  0.40 zh CUS under the paper's recall (RoleGPT 0.57). `rolebench.scoring.floors` scores the same
  answers (`baseline_answer`) on every run's own items.
They take no options.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from model_adapters.errors import ConfigError
from model_adapters.interface import AdapterBase, Generation, GenerationConfig, Request
from model_adapters.options import AdapterOptions
from model_adapters.spec import ModelSpec

# baseline name -> the `Request.meta` field that is its answer
ANSWER_FIELDS = {"rolegpt": "baseline", "question": "question", "description": "description"}
BASELINES = tuple(ANSWER_FIELDS)
FLOORS = ("question", "description")  # the null baselines
INFO = {
    "rolegpt": ("RoleGPT (released baseline answers)", "rolegpt_baseline.jsonl"),
    "question": ("floor: the question as the answer", "the test file's question"),
    "description": ("floor: the role description as the answer", "the role's description (desc.json)"),
}


def baseline_answer(name: str, meta: Mapping[str, Any]) -> str | None:
    """The answer of `baseline:NAME` to a request whose meta is `meta` (None: it has none)."""
    answer = meta.get(ANSWER_FIELDS[name])
    return answer if isinstance(answer, str) else None


class BaselineAdapter(AdapterBase):
    # the answer comes from the data, so the data is part of its identity
    request_meta_keys: ClassVar[tuple[str, ...]] = tuple(ANSWER_FIELDS.values())

    def __init__(self, name: str) -> None:
        self.spec = f"baseline:{name}"
        self.name = name

    @classmethod
    def from_spec(cls, spec: ModelSpec, options: AdapterOptions) -> BaselineAdapter:
        if spec.name not in BASELINES:
            raise ConfigError(
                f"unknown baseline {spec.name!r}",
                where="--model",
                fix="use " + ", ".join(f"baseline:{name}" for name in BASELINES),
            )
        return cls(spec.name)

    def info(self) -> dict[str, Any]:
        name, source = INFO[self.name]
        return {"name": name, "revision": None, "source": source}

    def generate(
        self, requests: Sequence[Request], config: GenerationConfig
    ) -> Iterator[tuple[Request, Generation]]:
        field = ANSWER_FIELDS[self.name]
        for request in requests:
            answer = baseline_answer(self.name, request.meta)
            if answer is None:
                missing = f"no {field} for this item" + (
                    " (no RoleGPT baseline answer for this (role, question))"
                    if self.name == "rolegpt"
                    else ""
                )
                yield request, Generation(text=None, error=missing, missing=True)
            else:
                yield request, Generation(text=answer, finish_reason="stop")
