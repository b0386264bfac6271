"""Floors: what the null baselines score on a run's own items (whether a score is at or below one is
`rolebench.scoring.flags.below_floor`, the rule of the `below-floor` flag).

A floor answers without a model: `baseline:question` restates the question, `baseline:description`
recites the role's description, `baseline:train` repeats the train file's answer to the same
instruction (`model_adapters.baseline`, the one definition of the three answers). On the released
splits, under the paper's recall, the question alone scores 0.40 zh CUS and 0.32 English
role-generalization CUS (RoleGPT: 0.57, and no baseline there); the description scores 0.17 English
SPE (RoleGPT 0.32); the train answers score 0.49 zh CUS, since every Chinese general test instruction
is also a train instruction. A number means little until it is held against these.

Each run scores the floors on exactly the items it scored (same `--limit` sample, same references),
under every protocol it holds, so a task's `floors` sit beside its metrics in results.json:
`{"baseline:question": {"rolellm": {"cus": ..., "raw": ...}, "rolebench": {...}}, ...}`. The train
floor is there when the run's samples carry the train join (the split's train file was read,
`SampleRecord.in_train`); an item no train row asks is answered with nothing and scores 0, so the
floor says what remembering the train split buys on the run's items, not on the items it covers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from model_adapters.baseline import FLOOR_SPECS as FLOOR_SPECS  # re-exported: the floors, by spec
from model_adapters.baseline import FLOORS, INFO, TRAIN_FLOOR, baseline_answer
from rolebench.data.splits import SplitDef
from rolebench.results.schema import SampleRecord
from rolebench.scoring.metrics import AVG, METRIC_KEYS, Scorable, metrics_for, score_samples
from rolebench.scoring.protocols import ScoringProtocol
from rolebench.scoring.remembered import items_digest, remembered, remembered_key
from rolebench.scoring.stats import mean, mean_of_available

TRAIN_SPEC = f"baseline:{TRAIN_FLOOR}"
FLOOR_NAMES = {f"baseline:{name}": INFO[name][0] for name in FLOORS}  # how tables name them
Floors = dict[str, dict[str, dict[str, float | None]]]  # floor spec -> protocol -> metric -> value


def floor_answers(name: str, records: Sequence[SampleRecord]) -> list[str]:
    """A floor's answer to each record ("" where it has none: the train floor on an item no train
    row asks)."""
    return [
        baseline_answer(
            name, {"question": r.question, "description": r.description, "train_answer": r.train_answer}
        )
        or ""
        for r in records
    ]


def held_floors(records: Sequence[SampleRecord]) -> tuple[str, ...]:
    """The floors a run's records can be held against: the train floor only when every record carries
    the train join (the split's train file was read)."""
    joined = bool(records) and all(r.in_train is not None for r in records)
    return tuple(name for name in FLOORS if name != TRAIN_FLOOR or joined)


def floor_scores(
    split: SplitDef,
    records: Sequence[SampleRecord],
    protocols: Sequence[ScoringProtocol],
    items: str | None = None,
) -> Floors:
    """Each floor's mean score per protocol and metric on `records` (the items the run scored), each
    computed once for the same items and protocol (`rolebench.scoring.remembered`; `items`: the records'
    `items_digest`, when the caller has it)."""
    kind = split.kind
    scored = [r for r in records if r.output is not None and r.references]
    language = scored[0].language if scored else ""
    names = held_floors(scored)
    answered = "".join("1" if r.output is not None else "0" for r in records)  # which items were scored
    inputs = (kind, items or items_digest(records), answered)
    keys = {
        (name, p.name): remembered_key("floor", name, p.describe(), *inputs)
        for name in names
        for p in protocols
    }
    found: Floors = {}
    with remembered() as memory:
        known = memory.get_many(list(keys.values()))
        for name in names:
            scorable: list[Scorable] | None = None  # made only when a number must be computed
            by_protocol: dict[str, dict[str, float | None]] = {}
            for protocol in protocols:
                key = keys[(name, protocol.name)]
                if not _valid(known.get(key), kind):
                    if scorable is None:
                        answers = zip(floor_answers(name, scored), scored, strict=True)
                        scorable = [Scorable(a, r.references, r.raw_answer) for a, r in answers]
                    values = score_samples(protocol, kind, language, scorable) if scorable else []
                    known[key] = {
                        m.key: mean([x for v in values if (x := v.get(m.key)) is not None])
                        for m in metrics_for(kind)
                    }
                    memory.put(key, known[key])
                by_protocol[protocol.name] = dict(known[key])
            found[f"baseline:{name}"] = by_protocol
    return found


def _valid(values: Mapping[str, Any] | None, kind: str) -> bool:
    """Whether a remembered floor is one: a number in [0, 1] or None for each metric of the kind."""
    return isinstance(values, Mapping) and all(
        (v := values.get(m.key)) is None or (isinstance(v, float | int) and 0 <= v <= 1)
        for m in metrics_for(kind)
    )


def group_floors(members: Sequence[Mapping[str, Any]], nested: bool) -> Floors:
    """A group's floors from its members' (tasks or groups): per metric the mean over the members that
    have it; `avg` the mean of the group's metrics (groups of groups: the members' avg). A floor some
    member lacks (the train floor, where a split has no train file) is not the group's."""
    found: Floors = {}
    for spec in FLOOR_SPECS:
        blocks = [(m.get("floors") or {}).get(spec) or {} for m in members]
        if spec == TRAIN_SPEC and not all(blocks):
            continue
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
