"""What a session run is given: its players and settings, what decides its sessions (`session_header`),
how candidates are placed, and what one run did.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from model_adapters import GenerationConfig
from model_adapters.interface import item_seed
from rolebench.cached_model import CachedModel
from rolebench.errors import ConfigError
from rolebench.sessions.data import template_hashes

SIDES = ("candidate", "opponent")
Ask = tuple[str, int]  # (item id, turn): one reply asked of the judge
# each turn adds two messages to every later call: far past the 5 of RPBench-Auto, context is what breaks
MAX_TURNS = 100


@dataclass(frozen=True)
class Players:
    """The model under test, its opponent, and the judge (who also plays the user)."""

    candidate: CachedModel
    opponent: CachedModel
    judge: CachedModel


@dataclass(frozen=True)
class SessionSettings:
    turns: int = 5
    seed: int = 0
    judge_attempts: int = 3  # judge replies asked for per turn, in all, before the turn is a failure
    answer_config: GenerationConfig = field(default_factory=GenerationConfig)
    judge_config: GenerationConfig = field(default_factory=GenerationConfig)

    def __post_init__(self) -> None:
        for name, value in (("turns", self.turns), ("judge_attempts", self.judge_attempts)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(
                    f"{name} {value!r} is not allowed", where=name, fix="use a whole number >= 1"
                )
        if self.turns > MAX_TURNS:
            raise ConfigError(
                f"{self.turns} turns per session is past the {MAX_TURNS} allowed (every turn lengthens "
                "every later call's conversation)",
                where="--turns",
                fix=f"give --turns {MAX_TURNS} or fewer (RPBench-Auto plays 5)",
            )

    def header(self) -> dict[str, Any]:
        """What of these settings decides the sessions (batching and concurrency do not)."""
        return {
            "turns": self.turns,
            "seed": self.seed,
            "judge_attempts": self.judge_attempts,
            "answer_decoding": self.answer_config.decoding_key(),
            "judge_decoding": self.judge_config.decoding_key(),
        }


def session_header(players: Players, settings: SessionSettings, data: Mapping[str, Any]) -> dict[str, Any]:
    """What decides a task's sessions, for its log's header (`SessionLog`): the players' identities
    (`CachedModel.identity`: what changes their outputs), the settings, the templates' hashes, and the
    caller's `data` (which files, at which revision)."""
    identities = {role: getattr(players, role).identity for role in ("candidate", "opponent", "judge")}
    return {
        "players": identities,
        "settings": settings.header(),
        "templates": template_hashes(),
        "data": dict(data),
    }


@dataclass
class Played:
    """What one `play` (or `rejudge`) call did: the turns kept (a session's opening line counts as its
    turn 0), the failures among them, and the stalled sessions (item id -> the failed call's error; the
    next run asks again)."""

    turns: int = 0
    failures: int = 0
    stalled: dict[str, str] = field(default_factory=dict)


def placement(seed: int, item_id: str, turn: int) -> dict[str, str]:
    """Which candidate is shown as model_a and which as model_b at one turn of one session."""
    first, second = SIDES if item_seed(seed, f"{item_id}\x00{turn}") % 2 == 0 else SIDES[::-1]
    return {"model_a": first, "model_b": second}
