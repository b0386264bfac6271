"""The scoring settings a run's numbers are made with, as names and values: which ROUGE-L protocols exist
(and which one heads a run by default), and how bootstrap intervals are drawn.

They sit below `rolebench.scoring` so that the run definition (`rolebench.run.definition`) can hold and
check them without importing the scorers: `rolebench.scoring.protocols` makes a protocol of each name
(`get_protocol`, which checks a name here), and `rolebench.scoring.aggregate` draws the intervals.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from rolebench.errors import ConfigError

PAPER_PROTOCOL = "rolellm"  # the RoleLLM paper's numbers
F_MEASURE_PROTOCOL = "rolebench"  # the F-measure shown beside them
OPENCOMPASS_PROTOCOL = "opencompass"  # OpenCompass's text cleaning, order and pooled number
PROTOCOLS: tuple[str, ...] = (PAPER_PROTOCOL, F_MEASURE_PROTOCOL, OPENCOMPASS_PROTOCOL)
DEFAULT_PROTOCOL = PAPER_PROTOCOL

DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95


def check_protocol_name(name: str, where: str = "--protocol") -> str:
    """`name` when it names a protocol; else one ConfigError line with a suggestion (`where`: the option
    or argument that gave it)."""
    if name not in PROTOCOLS:
        close = difflib.get_close_matches(name, PROTOCOLS, n=1)
        raise ConfigError(
            f"unknown scoring protocol {name!r}",
            where=where,
            fix=(f"did you mean {close[0]!r}? " if close else "") + "choose one of: " + ", ".join(PROTOCOLS),
        )
    return name


@dataclass(frozen=True)
class BootstrapSettings:
    """How a run's intervals are drawn (results.json's `config.bootstrap`)."""

    resamples: int = DEFAULT_RESAMPLES
    confidence: float = DEFAULT_CONFIDENCE
    seed: int = 0

    def describe(self) -> dict[str, Any]:
        return {"resamples": self.resamples, "confidence": self.confidence, "seed": self.seed}
