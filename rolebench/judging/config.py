"""A judge is data: `rolebench/judging/judges/<name>.yaml` names its prompt templates, its parser, its
generation settings and its protocol. This module reads it, builds the judge's chat messages, and
reads price tables (model -> $ per million input / output tokens) for the cost of a run.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from model_adapters.interface import GenerationConfig, Message
from rolebench.errors import ConfigError
from rolebench.judging.parse import Parser, get_parser
from rolebench.prompts.roleplay import TEMPLATE_DIR, render, template_hash
from rolebench.storage.yaml_files import read_yaml

JUDGES_DIR = Path(__file__).parent / "judges"
DEFAULT_JUDGE = "rolellm_rank"


class JudgeGeneration(BaseModel):
    model_config = ConfigDict(extra="forbid")
    temperature: float = 0.0
    max_new_tokens: int = Field(1024, ge=1)
    top_p: float = 1.0
    seed: int = 0


class JudgeRetries(BaseModel):
    """After an unparsable completion: up to `attempts` new requests at `temperature`, seed + attempt."""

    model_config = ConfigDict(extra="forbid")
    attempts: int = Field(2, ge=0)
    temperature: float = 0.7


class JudgeConfig(BaseModel):
    """One judge file. `name` is the file's stem; `templates` maps a language to a template file."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    path: str
    description: str = ""
    templates: dict[str, str]
    labels: tuple[str, str] = ("model_a", "model_b")
    parser: str = "rank_list"
    both_orders: bool = True
    generation: JudgeGeneration = JudgeGeneration()
    retries: JudgeRetries = JudgeRetries()

    @field_validator("labels")
    @classmethod
    def _distinct_anonymous(cls, labels: tuple[str, str]) -> tuple[str, str]:
        if labels[0] == labels[1] or any("baseline" in label.lower() for label in labels):
            raise ValueError("labels must be two different anonymous names (not 'baseline')")
        return labels

    @property
    def max_attempts(self) -> int:
        return 1 + self.retries.attempts

    def parse(self) -> Parser:
        return get_parser(self.parser, where=self.path)

    def template_hash(self) -> str:
        """Hash of the judge's prompt templates (all languages), recorded in results and cache keys."""
        return template_hash(*(self.templates[lang] for lang in sorted(self.templates)))

    def generation_config(self, attempt: int, *, concurrency: int, batch_size: int = 8) -> GenerationConfig:
        """Decoding settings of attempt 0 (the judge's own) or of a retry (re-sampled, seed + attempt)."""
        gen = self.generation
        temperature = gen.temperature if attempt == 0 else self.retries.temperature
        return GenerationConfig(
            max_new_tokens=gen.max_new_tokens,
            temperature=temperature,
            top_p=gen.top_p,
            seed=gen.seed + attempt,
            batch_size=batch_size,
            concurrency=concurrency,
        )

    def messages(
        self, *, role: str, description: str, question: str, language: str, answers: tuple[str, str]
    ) -> list[Message]:
        """The ranking prompt with `answers` shown in this order, named by `labels` only."""
        template = self.templates.get(language)
        if template is None:
            raise ConfigError(
                f"judge {self.name} has no prompt for language {language!r}",
                where=self.path,
                fix="add it under `templates:`",
            )
        question_dict = json.dumps({"question": question.strip()}, ensure_ascii=False)
        shown = [{"model": label, "answer": text} for label, text in zip(self.labels, answers, strict=True)]
        answer_list = json.dumps(shown, ensure_ascii=False, indent=2)
        values = {
            "role": role,
            "description": description,
            "question_dict": question_dict,
            "list_model_answer_dict": answer_list,
        }
        return [
            {"role": "system", "content": _system_prompt(template)},
            {"role": "user", "content": render(template, part="user", **values)},
        ]

    def describe(self) -> dict[str, Any]:
        packaged = Path(self.path).parent.resolve() == JUDGES_DIR.resolve()
        file = f"rolebench/judging/judges/{Path(self.path).name}" if packaged else self.path
        return {
            "name": self.name,
            "file": file,
            "templates": dict(self.templates),
            "template_hash": self.template_hash(),
            "labels": list(self.labels),
            "parser": self.parser,
            "protocol": self.protocol(),
            "generation": self.generation.model_dump(),
            "retries": self.retries.model_dump(),
        }

    def protocol(self) -> str:
        if self.both_orders:
            return (
                "pairwise vs the RoleGPT baseline, anonymised; each pair judged in both orders: a win "
                "(loss) when both orders prefer the model (the baseline), otherwise a tie; "
                "win_rate = (wins + 0.5 ties) / judged"
            )
        return (
            "pairwise vs the RoleGPT baseline, anonymised; one seeded random order per pair; "
            "win_rate = (wins + 0.5 ties) / judged"
        )


@cache
def _system_prompt(template: str) -> str:
    """The system part of a judge template (it takes no values)."""
    return render(template, part="system")


def _judge_path(name_or_path: str) -> Path:
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") and path.is_file():
        return path
    packaged = JUDGES_DIR / f"{name_or_path}.yaml"
    if packaged.is_file():
        return packaged
    known = ", ".join(sorted(p.stem for p in JUDGES_DIR.glob("*.yaml")))
    raise ConfigError(
        f"unknown judge {name_or_path!r}", where="--judge-config", fix=f"use a YAML file or one of: {known}"
    )


def load_judge_config(name_or_path: str = DEFAULT_JUDGE) -> JudgeConfig:
    """Read a packaged judge by name (`rolellm_rank`) or a judge YAML file by path."""
    path = _judge_path(name_or_path)
    data = read_yaml(path, "judge file") or {}
    if not isinstance(data, dict):
        raise ConfigError("a judge file must be a YAML mapping", where=str(path))
    try:
        config = JudgeConfig(name=path.stem, path=str(path), **data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(
            f"bad judge file: {first['msg']} at {'.'.join(map(str, first['loc']))}", where=str(path)
        ) from None
    for template in config.templates.values():
        if not (TEMPLATE_DIR / template).is_file():
            raise ConfigError(f"judge template {template} not found in {TEMPLATE_DIR}", where=str(path))
    config.parse()
    return config


def load_price_table(path: str | Path) -> dict[str, tuple[float, float]]:
    """`model -> ($ per 1M input tokens, $ per 1M output tokens)` from YAML or JSON.

    Each entry is `{input: X, output: Y}` or `[X, Y]`.
    """
    path = Path(path)
    data = read_yaml(path, "price table")  # JSON is YAML
    if not isinstance(data, dict):
        raise ConfigError(
            "a price table maps model names to prices",
            where=str(path),
            fix="write `MODEL: {input: 0.15, output: 0.60}` ($ per 1M tokens)",
        )
    table: dict[str, tuple[float, float]] = {}
    for model, price in data.items():
        pair = [price.get("input"), price.get("output")] if isinstance(price, dict) else price
        if (
            not isinstance(pair, (list, tuple))
            or len(pair) != 2
            or not all(isinstance(p, (int, float)) and not isinstance(p, bool) for p in pair)
        ):
            raise ConfigError(
                f"bad price for {model!r}: {price!r}",
                where=str(path),
                fix="write {input: $/1M tokens, output: $/1M tokens}",
            )
        table[str(model)] = (float(pair[0]), float(pair[1]))
    return table


def run_cost(table: dict[str, tuple[float, float]], names: list[str], usage: dict[str, int]) -> float | None:
    """Dollar cost of `usage` at the first of `names` found in the table; None if none is priced."""
    for name in names:
        if name in table:
            price_in, price_out = table[name]
            tokens_in, tokens_out = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
            return (tokens_in * price_in + tokens_out * price_out) / 1e6
    return None
