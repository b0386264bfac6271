"""Judge completion parsers: named pure functions from a judge's raw text to a typed verdict.

A verdict says which of the two answers shown to the judge is better: `"a"` (the first shown),
`"b"` (the second) or `"tie"`. A parser either returns one or raises `VerdictParseError` with
the reason; it never guesses. Parsers are chosen by name in a judge file (`parser: rank_list`)
through `PARSERS`, so a judge is data and a parser fix can be re-applied to stored completions.
"""

from __future__ import annotations

import ast
import difflib
import json
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal

from rolebench.errors import ConfigError

Verdict = Literal["a", "b", "tie"]
Parser = Callable[[str, Sequence[str]], Verdict]

_FENCE = re.compile(r"```[A-Za-z0-9_+-]*[ \t]*\n?(.*?)```", re.DOTALL)
_DICT_CHUNK = re.compile(r"\{[^{}]*\}", re.DOTALL)
_KEY_VALUE = r"""["'`]?{key}["'`]?\s*[:=]\s*["'`]?([^"'`,}}\n]+?)["'`]?\s*(?:,|\}}|$)"""
_MODEL_FIELD = re.compile(_KEY_VALUE.format(key="model"), re.IGNORECASE | re.MULTILINE)
_RANK_FIELD = re.compile(_KEY_VALUE.format(key="rank"), re.IGNORECASE | re.MULTILINE)
_ORDINAL = re.compile(r"^#?\s*(\d+)\s*(?:st|nd|rd|th|\.0+)?$", re.IGNORECASE)
_WORDS = {"first": 1, "second": 2, "third": 3, "一": 1, "二": 2, "三": 3, "第一": 1, "第二": 2, "第三": 3}
# Typography a judge (or a Chinese keyboard) may put where Python syntax belongs.
_SMART = str.maketrans(
    {
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u2018": "'",
        "\u2019": "'",
        "\uff02": '"',
        "\uff07": "'",
        "\uff1a": ":",
        "\uff0c": ",",
        "\uff3b": "[",
        "\uff3d": "]",
        "\uff5b": "{",
        "\uff5d": "}",
    }
)


class VerdictParseError(ValueError):
    """The judge's text holds no usable verdict; the message says why."""


def _candidates(text: str) -> Iterator[str]:
    """Texts that may be the ranking list: fenced blocks, then the outermost [...] span, then all."""
    for block in _FENCE.findall(text):
        yield block.strip()
    start, end = text.find("["), text.rfind("]")
    if 0 <= start < end:
        yield text[start : end + 1]
    yield text.strip()


def _literal(candidate: str) -> Any:
    """A Python or JSON literal, or None when the text is neither."""
    for load in (ast.literal_eval, json.loads):
        try:
            return load(candidate)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return None


def _entries(value: Any) -> list[dict[str, Any]] | None:
    """The list of ranking dicts inside a parsed literal (a bare dict or a one-key wrapper too)."""
    if isinstance(value, dict):
        inner = [v for v in value.values() if isinstance(v, list)]
        value = inner[0] if len(inner) == 1 and "model" not in value else [value]
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, dict) for v in value):
        return [dict(v) for v in value]
    return None


def _regex_entries(text: str) -> list[dict[str, Any]]:
    """Last resort for almost-literals (unescaped quotes in a reason): `model` and `rank` per {...}."""
    entries = []
    for chunk in _DICT_CHUNK.findall(text):
        model, rank = _MODEL_FIELD.search(chunk), _RANK_FIELD.search(chunk)
        if model and rank:
            entries.append({"model": model.group(1).strip(), "rank": rank.group(1).strip()})
    return entries


def _name_key(name: Any) -> str:
    return re.sub(r"[^0-9a-z]", "", str(name).lower())


def _rank_value(value: Any) -> float:
    if isinstance(value, bool):
        raise VerdictParseError(f"rank {value!r} is not a number")
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip().lower()
    if text in _WORDS:
        return float(_WORDS[text])
    match = _ORDINAL.match(text)
    if match is None:
        raise VerdictParseError(f"rank {value!r} is not a number")
    return float(match.group(1))


def _ranks(entries: list[dict[str, Any]], labels: Sequence[str]) -> dict[str, float]:
    """`label -> rank` for exactly the two labels; an unknown, missing or repeated name is an error."""
    wanted = {_name_key(label): label for label in labels}
    wanted.update({_name_key(label)[-1:]: label for label in labels if _name_key(label)})
    ranks: dict[str, float] = {}
    for entry in entries:
        lowered = {str(k).strip().lower(): v for k, v in entry.items()}
        if "model" not in lowered or "rank" not in lowered:
            raise VerdictParseError(f"an entry lacks `model` or `rank`: {sorted(lowered)}")
        label = wanted.get(_name_key(lowered["model"]))
        if label is None:
            raise VerdictParseError(f"unknown model name {lowered['model']!r}; expected {list(labels)}")
        if label in ranks:
            raise VerdictParseError(f"model {label!r} is ranked twice")
        ranks[label] = _rank_value(lowered["rank"])
    missing = [label for label in labels if label not in ranks]
    if missing:
        raise VerdictParseError(f"no rank for {missing}")
    return ranks


def verdict_from_ranks(first: float, second: float) -> Verdict:
    """Rank 1 is best: the lower rank wins, equal ranks are a tie."""
    return "a" if first < second else "b" if second < first else "tie"


def parse_rank_list(text: str, labels: Sequence[str] = ("model_a", "model_b")) -> Verdict:
    """The RoleLLM ranking format: `[{"model": "model_a", "reason": ..., "rank": 1}, ...]`.

    Accepts a Python or JSON literal, inside a fenced code block or surrounded by other text, with
    typographic or full-width quotes and punctuation, ranks as numbers, numeric strings or ordinals.
    `labels` are the names of the first and second answer shown; the verdict is relative to them.
    """
    if len(labels) != 2:
        raise ValueError("parse_rank_list compares exactly two answers")
    if not text or not text.strip():
        raise VerdictParseError("empty completion")
    problems: list[str] = []
    for variant in dict.fromkeys((text, text.translate(_SMART))):
        for candidate in _candidates(variant):
            entries = _entries(_literal(candidate))
            if entries is None:
                continue
            try:
                ranks = _ranks(entries, labels)
            except VerdictParseError as exc:
                problems.append(str(exc))
                continue
            return verdict_from_ranks(ranks[labels[0]], ranks[labels[1]])
    fallback = _regex_entries(text.translate(_SMART))
    if fallback:
        try:
            ranks = _ranks(fallback, labels)
            return verdict_from_ranks(ranks[labels[0]], ranks[labels[1]])
        except VerdictParseError as exc:
            problems.append(str(exc))
    reason = problems[0] if problems else "no list of {model, rank} dicts found"
    raise VerdictParseError(reason)


PARSERS: dict[str, Parser] = {"rank_list": parse_rank_list}


def get_parser(name: str, where: str = "judge parser") -> Parser:
    """A parser by its registered name; a clear error (with a suggestion) for an unknown one."""
    try:
        return PARSERS[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(PARSERS), n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        raise ConfigError(
            f"unknown judge parser {name!r}", where=where, fix=hint + "known parsers: " + ", ".join(PARSERS)
        ) from None
