"""Step 3 of `rolebench evaluate` (and of `rolebench score`): samples lines, scored under each protocol."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rolebench.data.samples import Sample
from rolebench.data.splits import SplitDef
from rolebench.evaluation.plan import TaskPlan
from rolebench.results.schema import SampleRecord
from rolebench.scoring.metrics import Scorable, score_samples
from rolebench.scoring.protocols import ScoringProtocol


def sample_record(
    sample: Sample, messages: list[dict[str, str]], generated: dict[str, Any], shots: int = 0
) -> SampleRecord:
    """One line of DIR/samples/<task>.jsonl, not yet scored (`shots`: the demonstrations in `messages`)."""
    return SampleRecord(
        id=sample.id,
        index=sample.index,
        role=sample.role,
        question=sample.question,
        messages=messages,
        output=generated["output"],
        error=generated.get("error"),
        usage=generated.get("usage"),
        seconds=generated.get("seconds"),
        shots=shots,
        finish_reason=generated.get("finish_reason"),
        failed=bool(generated.get("failed")),
        references=list(sample.references),
        raw_answer=sample.raw_answer,
        baseline=sample.baseline,
        in_train=sample.in_train,
        train_answer=sample.train_answer,
        types=list(sample.types),
        language=sample.language,
        description=sample.description,
        scores={},
    )


def fully_scored(records: Sequence[SampleRecord], protocols: Sequence[ScoringProtocol]) -> bool:
    """Whether every record holds every protocol's scores, the first protocol's (the headline) in
    `scores`."""
    return all(p.name in r.protocol_scores for r in records for p in protocols) and all(
        r.scores == r.protocol_scores.get(protocols[0].name) for r in records
    )


def add_scores(
    records: Sequence[SampleRecord], spec: SplitDef, protocols: Sequence[ScoringProtocol], headline: str
) -> list[SampleRecord]:
    """The records of a task of split `spec` with every protocol's scores added (others kept) and the
    headline ones in `scores`."""
    scorable = [Scorable(r.output, r.references, r.raw_answer) for r in records]
    by_protocol = {p.name: score_samples(p, spec.kind, spec.language, scorable) for p in protocols}
    scored = []
    for i, record in enumerate(records):
        protocol_scores = {
            **record.protocol_scores,
            **{name: values[i] for name, values in by_protocol.items()},
        }
        scored.append(
            record.model_copy(
                update={"protocol_scores": protocol_scores, "scores": protocol_scores[headline]}
            )
        )
    return scored


def scored_records(
    plans: Sequence[TaskPlan],
    outputs: Sequence[dict[str, dict[str, Any]]],
    protocols: Sequence[ScoringProtocol],
) -> dict[str, list[SampleRecord]]:
    """Every sample of the tasks run now, scored under every protocol the run holds."""
    records: dict[str, list[SampleRecord]] = {}
    for plan, generated in zip(plans, outputs, strict=True):
        unscored = [
            sample_record(s, r.messages, generated[r.id], n)
            for s, r, n in zip(plan.samples, plan.requests, plan.shots, strict=True)
        ]
        records[plan.spec.name] = add_scores(unscored, plan.spec.split, protocols, protocols[0].name)
    return records
