"""From per-order verdicts to per-pair outcomes, and from outcomes to win-rate fields.

A verdict is positional ("a" = the first answer shown); a preference says which side it favours
("model", "baseline" or "tie"). With both orders judged, a pair is a win only when both orders
prefer the model, a loss only when both prefer the baseline, and a tie otherwise (they disagree,
or both say tie). win_rate = (wins + 0.5 ties) / judged. Pairs whose verdict could not be parsed
after every retry, or that the judge never answered, are counted, not dropped and not guessed.
Beside the win rate, its length-controlled estimate (`rolebench.judging.length_control`): judges
prefer longer answers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rolebench.errors import DataError
from rolebench.judging.calls import Slot
from rolebench.judging.length_control import length_controlled
from rolebench.judging.parse import Verdict
from rolebench.results.schema import SampleRecord
from rolebench.run.judgments import JudgmentSet
from rolebench.scoring.stats import bootstrap_ci, mean

Preference = Literal["model", "baseline", "tie"]
Outcome = Literal["win", "tie", "loss"]
ORDERS = ("model_first", "baseline_first")
OUTCOME_SCORE: dict[str, float] = {"win": 1.0, "tie": 0.5, "loss": 0.0}
# Pair statuses: "judged", "parse_failure", "judge_error", "no_baseline", "no_output", "not_sampled".


@dataclass(frozen=True)
class Pair:
    """A sample's model answer and RoleGPT baseline answer (either may be missing: see `status`)."""

    id: str
    index: int
    role: str
    question: str
    description: str
    language: str
    output: str | None
    baseline: str | None
    status: str  # "candidate" before judging, or why it is not judged

    @classmethod
    def of(cls, record: SampleRecord, opponent: str | None) -> Pair:
        """A sample's answer against `opponent` (the RoleGPT baseline, or another run's answer): judged
        only when both exist (an empty opponent is none)."""
        if not (opponent or "").strip():
            status = "no_baseline"
        else:
            status = "no_output" if record.output is None else "candidate"
        return cls(
            id=record.id,
            index=record.index,
            role=record.role,
            question=record.question,
            description=record.description,
            language=record.language,
            output=record.output,
            baseline=opponent,
            status=status,
        )

    def answers(self, order: str) -> tuple[str, str]:
        output, baseline = self.output or "", self.baseline or ""
        return (output, baseline) if order == "model_first" else (baseline, output)


def answer_sha(text: str | None) -> str | None:
    """What a judgment line records of an answer it judged (so a changed answer's verdict is never used)."""
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def preference(order: str, verdict: Verdict) -> Preference:
    """Which side a positional verdict favours, given the order the answers were shown in."""
    if verdict == "tie":
        return "tie"
    model_first = order == "model_first"
    if verdict == "a":
        return "model" if model_first else "baseline"
    return "baseline" if model_first else "model"


def combine(preferences: Sequence[Preference]) -> Outcome:
    """A win (loss) only when every order prefers the model (the baseline); otherwise a tie."""
    if all(p == "model" for p in preferences):
        return "win"
    if all(p == "baseline" for p in preferences):
        return "loss"
    return "tie"


def _order_detail(slot: Slot) -> dict[str, Any]:
    verdict = slot.verdict
    return {
        "verdict": verdict,
        "preference": None if verdict is None else preference(slot.order, verdict),
        "attempts": len(slot.attempts),
        "raw": [a["raw"] for a in slot.attempts],
        "parse_errors": [a["parse_error"] for a in slot.attempts if a.get("parse_error")],
        "error": slot.error,
    }


def pair_line(pair: Pair, slots: Sequence[Slot]) -> dict[str, Any]:
    """One line of DIR/judgments/<task>.jsonl: the outcome and, per order, verdict and raw texts."""
    line: dict[str, Any] = {
        "id": pair.id,
        "index": pair.index,
        "role": pair.role,
        "status": pair.status,
        "outcome": None,
        "consistent": None,
        "len_model": None,
        "len_baseline": None,
        "output_sha": answer_sha(pair.output),
        "opponent_sha": answer_sha(pair.baseline),
    }
    if pair.status != "candidate":
        return line
    details = {slot.order: _order_detail(slot) for slot in slots}
    line["orders"] = details
    if any(d["error"] for d in details.values()):
        line["status"] = "judge_error"
    elif any(d["verdict"] is None for d in details.values()):
        line["status"] = "parse_failure"
    else:
        prefs = [d["preference"] for d in details.values()]
        line.update(
            status="judged",
            outcome=combine(prefs),
            consistent=len(set(prefs)) == 1 if len(prefs) > 1 else None,
            len_model=len(pair.output or ""),
            len_baseline=len(pair.baseline or ""),
        )
    return line


def _count(lines: Sequence[Mapping[str, Any]], key: str, value: Any) -> int:
    return sum(1 for line in lines if line.get(key) == value)


def judge_fields(lines: Sequence[Mapping[str, Any]], bootstrap: Mapping[str, Any]) -> dict[str, Any]:
    """The judge's fields of a task (or of a group, given all its tasks' lines)."""
    judged = [line for line in lines if line["status"] == "judged"]
    scores = [OUTCOME_SCORE[line["outcome"]] for line in judged]
    ci = bootstrap_ci(
        scores,
        resamples=int(bootstrap.get("resamples", 1000)),
        confidence=float(bootstrap.get("confidence", 0.95)),
        seed=int(bootstrap.get("seed", 0)),
    )
    consistency = [line["consistent"] for line in judged if line.get("consistent") is not None]
    controlled = length_controlled(
        scores, [line["len_model"] for line in judged], [line["len_baseline"] for line in judged], bootstrap
    )
    return {
        "win_rate": mean(scores),
        "win_rate_ci": list(ci) if ci else None,
        **controlled,
        "wins": _count(judged, "outcome", "win"),
        "ties": _count(judged, "outcome", "tie"),
        "losses": _count(judged, "outcome", "loss"),
        "judged": len(judged),
        "position_consistency": mean([float(c) for c in consistency]),
        "parse_failures": _count(lines, "status", "parse_failure"),
        "judge_errors": _count(lines, "status", "judge_error"),
        "avg_len_model": mean([float(line["len_model"]) for line in judged]),
        "avg_len_baseline": mean([float(line["len_baseline"]) for line in judged]),
        "n_no_baseline": _count(lines, "status", "no_baseline"),
        "n_no_output": _count(lines, "status", "no_output"),
        "n_not_sampled": _count(lines, "status", "not_sampled"),
    }


def failure_line(lines: Mapping[str, Sequence[Mapping[str, Any]]]) -> str | None:
    """Why pairs got no verdict (judge errors, unparsable verdicts), with the first reason of each kind,
    in one line; None when every pair that could be judged was."""
    flat = [line for task_lines in lines.values() for line in task_lines]
    errors = [line for line in flat if line.get("status") == "judge_error"]
    unparsable = [line for line in flat if line.get("status") == "parse_failure"]
    if not errors and not unparsable:
        return None
    judged = sum(1 for line in flat if line.get("status") == "judged")
    parts = []
    if errors:
        first = next((d.get("error") for d in _orders(errors[0]) if d.get("error")), None)
        parts.append(f"{len(errors)} judge error{'s' * (len(errors) != 1)} (first: {_short(first)})")
    if unparsable:
        detail = next((d for d in _orders(unparsable[0]) if d.get("verdict") is None), {})
        reason = (detail.get("parse_errors") or ["no verdict"])[-1]
        raw = (detail.get("raw") or [""])[-1]
        parts.append(
            f"{len(unparsable)} unparsable verdict{'s' * (len(unparsable) != 1)} after "
            f"{detail.get('attempts', 1)} attempts each "
            f"(first: {_short(reason)}; the judge wrote {_short(raw)!r})"
        )
    return (
        f"{len(errors) + len(unparsable)} of {len(errors) + len(unparsable) + judged} pairs got no verdict: "
        + ("; ".join(parts))
    )


def read_failure_line(judgments: JudgmentSet) -> str | None:
    """`failure_line` of a set's judgments files (a file that does not read back is left out, as the
    results leave it out: `rolebench.judging.results`)."""
    lines = {}
    for task in judgments.tasks():
        try:
            lines[task] = judgments.lines(task)
        except DataError:
            continue
    return failure_line(lines)


def _orders(line: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list((line.get("orders") or {}).values())


def _short(text: object, limit: int = 120) -> str:
    one = " ".join(str(text).split())
    return one if len(one) <= limit else one[: limit - 3] + "..."
