"""Reading the judge's replies in a session: the opening user line, and each round's verdict.

The judge answers with one JSON object: `{"next_round_user_speaks"}` to open, then
`{"winner", "next_round_user_speaks", "decision_reason"}` each round (RPBench-Auto's fields). The object
is taken from a fenced block, else the outermost `{...}` span, else the whole text; `winner` is
`model_a`, `model_b` or `tie` (case, spaces and hyphens aside). A reply without a usable object raises
`VerdictError` saying why; it never guesses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

Winner = Literal["model_a", "model_b", "tie"]
WINNERS: tuple[Winner, ...] = ("model_a", "model_b", "tie")
_FENCE = re.compile(r"```[A-Za-z0-9_+-]*[ \t]*\n?(.*?)```", re.DOTALL)


class VerdictError(ValueError):
    """The judge's reply holds no usable answer; the message says why."""


@dataclass(frozen=True)
class TurnVerdict:
    winner: Winner
    next_user: str | None  # the user's next line (None after the last round, where none is needed)
    reason: str

    def as_dict(self) -> dict[str, Any]:
        """In RPBench-Auto's field names."""
        return {
            "winner": self.winner,
            "next_round_user_speaks": self.next_user,
            "decision_reason": self.reason,
        }


def _candidates(text: str) -> Iterator[str]:
    for block in _FENCE.findall(text):
        yield block.strip()
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        yield text[start : end + 1]
    yield text.strip()


def json_object(text: str) -> dict[str, Any]:
    """The first JSON object the reply holds (see the module docstring)."""
    for candidate in _candidates(text):
        try:
            value = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    raise VerdictError("no JSON object in the reply")


def _line(found: dict[str, Any]) -> str:
    value = found.get("next_round_user_speaks")
    if value is not None and not isinstance(value, str):
        raise VerdictError(f"`next_round_user_speaks` is {value!r}, not a text")
    if value is None or not value.strip():
        raise VerdictError("`next_round_user_speaks` is missing or empty")
    return value.strip()


def parse_opening(text: str) -> str:
    """The user's first line."""
    return _line(json_object(text))


def parse_turn(text: str, *, last: bool) -> TurnVerdict:
    """A round's verdict; after the `last` round the user's next line may be absent."""
    found = json_object(text)
    raw = found.get("winner")
    winner = re.sub(r"[\s-]+", "_", raw.strip().lower()) if isinstance(raw, str) else raw
    if winner not in WINNERS:
        raise VerdictError(f"`winner` is {raw!r}, not one of model_a, model_b, tie")
    reason = found.get("decision_reason")
    next_user = None if last and not found.get("next_round_user_speaks") else _line(found)
    return TurnVerdict(winner, next_user, reason.strip() if isinstance(reason, str) else "")
