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
- The memorisation floor `baseline:train` answers with the answer of the first row of the split's
  train file (file order) whose stripped question equals the item's, whatever its role
  (`rolebench.data.joins.TrainIndex`, put into `Request.meta["train_answer"]`); an item no train
  row asks gets no answer. It is what remembering the train split buys: on Chinese general, where
  every test instruction is a train instruction, 0.4860 CUS under the paper's recall (RoleGPT 0.5707).
- The session floor `baseline:greeting` answers every turn of a role-play session
  (`rolebench.sessions`) with the character's greeting: the conversation's first assistant message,
  repeated whatever the user says. As opponent it is the floor a real model must beat; as candidate,
  what a model that only repeats its opening would score. A conversation without an assistant message
  (a single-turn task) gets no answer, saying why.
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
ANSWER_FIELDS = {
    "rolegpt": "baseline",
    "question": "question",
    "description": "description",
    "train": "train_answer",
}
GREETING = "greeting"  # answers from the conversation itself (its first assistant message), not from meta
BASELINES = (*ANSWER_FIELDS, GREETING)
FLOORS = ("question", "description", "train")  # the null baselines
FLOOR_SPECS = tuple(f"baseline:{name}" for name in FLOORS)  # as results.json names them
TRAIN_FLOOR = "train"  # answers only where the split's train file asks the same question
INFO = {
    "rolegpt": ("RoleGPT (released baseline answers)", "rolegpt_baseline.jsonl"),
    "question": ("floor: the question as the answer", "the test file's question"),
    "description": ("floor: the role description as the answer", "the role's description (desc.json)"),
    "train": (
        "floor: the train answer to the same instruction",
        "the split's train.jsonl (first row with the same stripped question, any role)",
    ),
    GREETING: ("floor: the character's greeting, every turn", "the session's first assistant message"),
}


def greeting_of(request: Request) -> str | None:
    """The conversation's first assistant message (a session's greeting); None when it has none."""
    found = next((m["content"] for m in request.messages if m["role"] == "assistant"), None)
    return found if isinstance(found, str) and found.strip() else None


def baseline_answer(name: str, meta: Mapping[str, Any]) -> str | None:
    """The answer of `baseline:NAME` to a request whose meta is `meta` (None: it has none)."""
    answer = meta.get(ANSWER_FIELDS[name])
    return answer if isinstance(answer, str) else None


class BaselineAdapter(AdapterBase):
    # the answer comes from the data, so the data is part of its cache keys; the train answer only in
    # baseline:train's (the keys of the others stay those of runs made before it existed)
    request_meta_keys: ClassVar[tuple[str, ...]] = ("baseline", "question", "description")

    @classmethod
    def meta_keys(cls, spec: ModelSpec) -> tuple[str, ...]:
        extra = (ANSWER_FIELDS[TRAIN_FLOOR],) if spec.name == TRAIN_FLOOR else ()
        return (*cls.request_meta_keys, *extra)

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
        if self.name == GREETING:
            yield from self._greetings(requests)
            return
        field = ANSWER_FIELDS[self.name]
        for request in requests:
            answer = baseline_answer(self.name, request.meta)
            if answer is None:
                missing = {
                    "rolegpt": f"no {field} for this item "
                    "(no RoleGPT baseline answer for this (role, question))",
                    "train": "no train answer for this item: the data has no train file for this split, or "
                    "no row of it asks this question",
                }.get(self.name, f"no {field} for this item")
                yield request, Generation(text=None, error=missing, missing=True)
            else:
                yield request, Generation(text=answer, finish_reason="stop")

    def _greetings(self, requests: Sequence[Request]) -> Iterator[tuple[Request, Generation]]:
        for request in requests:
            greeting = greeting_of(request)
            if greeting is None:
                missing = (
                    "no greeting: baseline:greeting answers role-play sessions (a conversation that opens "
                    "with the character's greeting), not single-turn questions"
                )
                yield request, Generation(text=None, error=missing, missing=True)
            else:
                yield request, Generation(text=greeting, finish_reason="stop")
