"""How a role is elicited: the RoleLLM paper's three RoleGPT prompting methods, as one recorded setting
of the run definition (`RunDefinition.elicitation_method`), and the one request builder that applies it.

- `zero-shot` (the default): the RoleGPT system instruction and the question, nothing else;
- `few-shot-prompt` ("few-shot prompt engineering"): N dialogue pairs of the role's own script in the
  one user turn, before the question;
- `few-shot-dialogue` ("few-shot dialogue engineering", what RoleGPT uses): the same N pairs as
  earlier user/assistant turns.

The pairs are retrieved per question from the role's script (`rolebench.data.scripts`, retriever
`rolebench.data.retrieval.RETRIEVER`). The method, N and the retriever are recorded in results and
are part of a generation's cache key (`Elicitation.key`), so one method's answers never serve
another's; zero-shot adds nothing to the key, so its prompts, keys and numbers are those of runs made
before this setting existed.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from model_adapters.interface import Message, Request, item_seed
from rolebench.data.retrieval import RETRIEVER, describe_retriever
from rolebench.data.samples import Sample
from rolebench.data.scripts import MAX_PAIR_CHARS, ScriptLibrary
from rolebench.errors import ConfigError
from rolebench.prompts.roleplay import (
    FEW_SHOT_PROMPT_TEMPLATE,
    SYSTEM_TEMPLATES,
    role_messages,
    template_hash,
)

ZERO_SHOT = "zero-shot"
METHODS = {ZERO_SHOT: None, "few-shot-prompt": "prompt", "few-shot-dialogue": "dialogue"}  # -> layout
DEFAULT_SHOTS = 3


@dataclass(frozen=True)
class Elicitation:
    """A prompting method and its number of demonstrations (0 exactly when zero-shot)."""

    method: str = ZERO_SHOT
    shots: int = 0

    @classmethod
    def parse(cls, method: str | None, shots: int | None) -> Elicitation:
        """`--elicitation` and `--shots` as given (None: not given), checked; one ConfigError line each.

        A few-shot method without `--shots` takes `DEFAULT_SHOTS`; with `--shots 0` it is zero-shot.
        """
        if method is not None and method not in METHODS:
            close = difflib.get_close_matches(method, list(METHODS), n=1)
            raise ConfigError(
                f"unknown elicitation method {method!r}",
                where="--elicitation",
                fix=(f"did you mean {close[0]!r}? " if close else "") + "use " + ", ".join(METHODS),
            )
        if shots is not None and shots < 0:
            raise ConfigError(
                f"--shots {shots} is not allowed",
                where="--shots",
                fix="use 0 (zero-shot) or more demonstrations",
            )
        if method in (None, ZERO_SHOT):
            if shots:
                raise ConfigError(
                    f"--shots {shots} needs a few-shot method (zero-shot uses no demonstrations)",
                    where="--shots",
                    fix="add --elicitation few-shot-dialogue or --elicitation few-shot-prompt",
                )
            return cls()
        chosen = DEFAULT_SHOTS if shots is None else shots
        return cls(method, chosen) if chosen else cls()

    def __post_init__(self) -> None:
        if self.method not in METHODS or (self.shots > 0) != (self.method != ZERO_SHOT) or self.shots < 0:
            raise ValueError(f"not an elicitation: {self.method!r} with {self.shots} shots")

    @property
    def few_shot(self) -> bool:
        return self.method != ZERO_SHOT

    def label(self) -> str:
        """`zero-shot`, or e.g. `few-shot-dialogue, 3 shots`."""
        if not self.few_shot:
            return self.method
        return f"{self.method}, {self.shots} shot{'s' if self.shots != 1 else ''}"

    def messages(
        self,
        role: str,
        description: str,
        question: str,
        language: str,
        demonstrations: Sequence[tuple[str, str]] = (),
    ) -> list[Message]:
        """The chat messages of one question under this method (`demonstrations`: its retrieved pairs)."""
        layout = METHODS[self.method]
        if layout is None:
            return role_messages(role, description, question, language)
        return role_messages(role, description, question, language, demonstrations, layout=layout)

    def key(self) -> dict[str, Any] | None:
        """This method's part of a generation's cache key: None for zero-shot (keys as before)."""
        if not self.few_shot:
            return None
        return {
            "elicitation": self.method,
            "shots": self.shots,
            "retriever": RETRIEVER,
            "max_pair_chars": MAX_PAIR_CHARS,
        }

    def template_hash(self) -> str:
        """Hash of the prompt templates this method uses (zero-shot: the RoleGPT system templates only)."""
        names = list(SYSTEM_TEMPLATES.values())
        if METHODS[self.method] == "prompt":
            names.append(FEW_SHOT_PROMPT_TEMPLATE)
        return template_hash(*names)

    def describe(self) -> dict[str, Any]:
        """What results.json records under `config.elicitation` (the scripts read are added by the caller)."""
        if not self.few_shot:
            return {"method": self.method, "shots": 0, "label": self.label()}
        return {
            "method": self.method,
            "shots": self.shots,
            "label": self.label(),
            "layout": METHODS[self.method],
            "retriever": describe_retriever(),
            "max_pair_chars": MAX_PAIR_CHARS,
            "source": "the role's own script, profiles-{eng,zh}/profiles-{eng,zh}-{role}.jsonl "
            "(pairs: the previous speaker's line and the role's reply, within one act)",
        }


def elicitation_label(block: Mapping[str, Any] | None) -> str:
    """The label of a results.json `config.elicitation` block; a run without one was zero-shot."""
    if not block:
        return ZERO_SHOT
    return str(block.get("label") or block.get("method") or ZERO_SHOT)


def sample_request(
    sample: Sample, elicitation: Elicitation, library: ScriptLibrary | None, seed: int | None = None
) -> tuple[Request, int]:
    """The request `rolebench evaluate` sends for `sample` under `elicitation`, and its number of
    demonstrations (retrieved from the role's script in `library` for a few-shot method). The one request
    builder: evaluate's plan and the training prompts (`rolebench.rewards.load_prompts`) both call it.
    `meta` carries the sample fields a data-only backend answers from (`model_adapters.baseline`). With the
    run's `seed`, the request has its own sampling seed, from that seed and the sample's id
    (`model_adapters.item_seed`)."""
    demos = library.demonstrations(sample.role, sample.question, elicitation.shots) if library else []
    messages = elicitation.messages(sample.role, sample.description, sample.question, sample.language, demos)
    meta = {
        "baseline": sample.baseline,
        "role": sample.role,
        "question": sample.question,
        "description": sample.description,
        "train_answer": sample.train_answer,
        "split": sample.split,
    }
    own = None if seed is None else item_seed(seed, sample.id)
    return Request(id=sample.id, messages=messages, meta=meta, seed=own), len(demos)
