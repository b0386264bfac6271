"""Floors: what the null baselines score on a run's own items, and whether a score is at or below one.

A floor answers without a model: `baseline:question` restates the question, `baseline:description`
recites the role's description (`model_adapters.baseline`, the one definition of both answers). On
the released splits, under the paper's recall, the question alone scores 0.40 zh CUS and 0.32 English
role-generalization CUS (RoleGPT: 0.57, and no baseline there); the description scores 0.17 English
SPE (RoleGPT 0.32). A number means little until it is held against these.

Each run scores both floors on exactly the items it scored (same `--limit` sample, same references),
under every protocol it holds, so a task's `floors` sit beside its metrics in results.json:
`{"baseline:question": {"rolellm": {"cus": ..., "raw": ...}, "rolebench": {...}}, ...}`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from model_adapters.baseline import FLOORS, INFO, baseline_answer
from rolebench.data.splits import get_split
from rolebench.results.schema import SampleRecord
from rolebench.scoring.metrics import AVG, METRIC_KEYS, Scorable, metrics_for, score_samples
from rolebench.scoring.protocols import ScoringProtocol
from rolebench.scoring.stats import mean, mean_of_available

FLOOR_SPECS = tuple(f"baseline:{name}" for name in FLOORS)
FLOOR_NAMES = {f"baseline:{name}": INFO[name][0] for name in FLOORS}  # how tables name them
Floors = dict[str, dict[str, dict[str, float | None]]]  # floor spec -> protocol -> metric -> value


def floor_scores(split: str, records: Sequence[SampleRecord], protocols: Sequence[ScoringProtocol]) -> Floors:
    """Each floor's mean score per protocol and metric on `records` (the items the run scored)."""
    kind = get_split(split).kind
    scored = [r for r in records if r.output is not None]
    found: Floors = {}
    for name, spec in zip(FLOORS, FLOOR_SPECS, strict=True):
        answers = [
            baseline_answer(name, {"question": r.question, "description": r.description}) for r in scored
        ]
        items = [
            Scorable(answer, r.references, r.raw_answer)
            for answer, r in zip(answers, scored, strict=True)
            if answer is not None and r.references
        ]
        by_protocol: dict[str, dict[str, float | None]] = {}
        for protocol in protocols:
            values = score_samples(protocol, kind, scored[0].language, items) if items else []
            by_protocol[protocol.name] = {
                m.key: mean([x for v in values if (x := v.get(m.key)) is not None]) for m in metrics_for(kind)
            }
        found[spec] = by_protocol
    return found


def group_floors(members: Sequence[Mapping[str, Any]], nested: bool) -> Floors:
    """A group's floors from its members' (tasks or groups): per metric the mean over the members that
    have it; `avg` the mean of the group's metrics (groups of groups: the members' avg)."""
    found: Floors = {}
    for spec in FLOOR_SPECS:
        blocks = [(m.get("floors") or {}).get(spec) or {} for m in members]
        for protocol in dict.fromkeys(p for block in blocks for p in block):
            values = [block.get(protocol) or {} for block in blocks]
            metrics = {k: mean_of_available([v.get(k) for v in values]) for k in METRIC_KEYS}
            avg = (
                mean_of_available([v.get(AVG) for v in values])
                if nested
                else mean_of_available(list(metrics.values()))
            )
            found.setdefault(spec, {})[protocol] = {**metrics, AVG: avg}
    return found


def below_floor(values: Mapping[str, Any], floors: Mapping[str, Any] | None, protocol: str) -> list[str]:
    """The metrics (of CUS, RAW, SPE, avg) on which `values` is at or below a floor under `protocol`."""
    found = []
    for metric in (*METRIC_KEYS, AVG):
        value = values.get(metric)
        if value is None:
            continue
        heights = [((block or {}).get(protocol) or {}).get(metric) for block in (floors or {}).values()]
        if any(h is not None and value <= h for h in heights):
            found.append(metric)
    return found
