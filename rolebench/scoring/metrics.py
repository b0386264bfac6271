"""RoleBench's metrics, each named once: what it measures, which split kind has it, what it is scored against.

- CUS (speaking style): the answer to a general instruction against the RoleGPT references;
- RAW (instruction following): the same answer against the instruction's original answer (None
  when that answer is unknown: RAW is unavailable, never 0);
- SPE (role knowledge): the answer to a role-specific question against the Context-Instruct answer(s).
`avg` is the mean of the available three. A sample without an output (the model gave none) gets
None for every metric: never a silent 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rolebench.scoring.protocols import ScoringProtocol

Scores = dict[str, float | None]


@dataclass(frozen=True)
class Metric:
    """One metric, and every word the tables, pages and summaries say of it (they list none by hand)."""

    key: str  # the name in results.json, samples and tables
    label: str  # how tables print it
    kind: str  # the split kind that has it: "general" or "role_specific"
    against: str  # "references" (the split's `generated`) or "raw_answer"
    aspect: str  # what it measures ("speaking style"; the Hub's "ROUGE-L CUS (speaking style)")
    versus: str  # what an answer is scored against, as a column's tooltip says it
    about: str  # how the leaderboard's header explains it ("CUS = speaking style vs ...")
    color: str  # its bars in the run report's charts

    @property
    def meaning(self) -> str:
        """`speaking style: vs the RoleGPT references`."""
        return f"{self.aspect}: vs {self.versus}"


CUS = Metric(
    "cus",
    "CUS",
    "general",
    "references",
    "speaking style",
    "the RoleGPT references",
    "speaking style vs the RoleGPT references",
    "#0969da",
)
RAW = Metric(
    "raw",
    "RAW",
    "general",
    "raw_answer",
    "instruction following",
    "the original answer",
    "the instruction's original answer",
    "#8250df",
)
SPE = Metric(
    "spe",
    "SPE",
    "role_specific",
    "references",
    "role knowledge",
    "the Context-Instruct answers",
    "role-specific knowledge",
    "#1a7f37",
)
METRICS: tuple[Metric, ...] = (CUS, RAW, SPE)
METRIC_KEYS: tuple[str, ...] = tuple(m.key for m in METRICS)
AVG = "avg"  # the mean of a group's available metrics
LABELS: dict[str, str] = {**{m.key: m.label for m in METRICS}, AVG: "avg"}


def named(labels: Sequence[str]) -> str:
    """Labels as a sentence names them: `CUS`, `CUS and SPE`, `CUS, RAW and SPE`."""
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


def metrics_for(kind: str) -> tuple[Metric, ...]:
    """The metrics of a split kind ("general": CUS, RAW; "role_specific": SPE)."""
    return tuple(m for m in METRICS if m.kind == kind)


@dataclass(frozen=True)
class Scorable:
    """What scoring needs of one sample."""

    output: str | None
    references: Sequence[str]
    raw_answer: str | None


def score_samples(
    protocol: ScoringProtocol, kind: str, language: str, samples: Sequence[Scorable]
) -> list[Scores]:
    """Per-sample metric values of a split's samples under one protocol, in one batch per metric."""
    found: list[Scores] = [{} for _ in samples]
    for metric in metrics_for(kind):
        chosen = [
            i
            for i, s in enumerate(samples)
            if s.output is not None and (metric.against == "references" or s.raw_answer is not None)
        ]
        predictions = [str(samples[i].output) for i in chosen]
        references = [
            list(samples[i].references) if metric.against == "references" else [str(samples[i].raw_answer)]
            for i in chosen
        ]
        values = dict(zip(chosen, protocol.score_batch(predictions, references, language), strict=True))
        for i, scores in enumerate(found):
            scores[metric.key] = values.get(i)
    return found


def score_sample(protocol: ScoringProtocol, kind: str, language: str, sample: Scorable) -> Scores:
    """The metric values of one sample (what lm-eval's per-document hook needs)."""
    return score_samples(protocol, kind, language, [sample])[0]
