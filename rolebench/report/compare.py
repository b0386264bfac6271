"""Runs side by side on a terminal. `compare_table`: a model before and after training, per task, the
paper's recall and the F-measure, the answer lengths against the references, the share cut at the token
limit, the share that loops, and the flags (`rolebench.scoring.flags`). `comparison_table`: two runs on the
items both hold (`rolebench compare`, computed by `rolebench.report.paired`): A, B, A - B, its interval, the
p-value, n and the verdict, per task and group and metric."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tabulate import tabulate

from rolebench.results.schema import GroupResult, RunResults, TaskResult
from rolebench.scoring.flags import answer_flags, describe, sorted_flags
from rolebench.scoring.metrics import AVG, LABELS, METRIC_KEYS
from rolebench.scoring.permutation import EXACT_ITEMS
from rolebench.scoring.protocols import COMPANIONS, F_MEASURE_PROTOCOL, PAPER_PROTOCOL, get_protocol

SHOWN = tuple((p.name, p.measure_name) for p in map(get_protocol, COMPANIONS))  # the paper's, the F-measure
SCORES = (*METRIC_KEYS, AVG)


def measure_label(protocol: str) -> str:
    """How tables name a protocol's numbers: "recall" (the paper's), "F" (the F-measure), else its name."""
    return dict(SHOWN).get(protocol, protocol)


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _number(value: object, digits: int = 4) -> str:
    return f"{value:.{digits}f}" if isinstance(value, float) else "-"


def _block(results: RunResults, data: dict[str, Any], protocol: str) -> dict[str, Any]:
    """A task's or group's values under `protocol` (the headline protocol's sit at the top)."""
    if results.config.scoring.get("protocol") == protocol:
        return data
    block = data.get(protocol)
    return block if isinstance(block, dict) else {}


def entry_flags(entry: TaskResult | GroupResult | None) -> list[str]:
    """The flags a task or group carries: those recorded with it, else (a run from before flags were
    recorded) a task's length and looping flags from its lengths."""
    if entry is None:
        return []
    recorded = entry.value("flags")
    if isinstance(recorded, list):
        return sorted_flags([str(f) for f in recorded])
    lengths = entry.lengths if isinstance(entry, TaskResult) else None
    return answer_flags(lengths.model_dump() if lengths else None)


def _row(name: str, label: str, results: RunResults, key: str, group: bool) -> list[str]:
    entry = (results.groups if group else results.results).get(key)
    data = entry.model_dump() if entry is not None else {}
    cells = [name, label]
    for protocol, _ in SHOWN:
        block = _block(results, data, protocol)
        cells += [_number(block.get(c)) for c in SCORES]
    lengths = entry.lengths if isinstance(entry, TaskResult) else None
    if lengths is not None:
        cells += [
            _number(lengths.answer_words_mean, 1),
            _number(lengths.reference_words_mean, 1),
            _share(lengths.cut_at_limit),
            _share(lengths.looping),
        ]
    else:
        cells += ["", "", "", ""]
    cells.append(", ".join(entry_flags(entry)))
    return cells


def compare_table(runs: Mapping[str, RunResults]) -> str:
    """One row per task (then group) and run, the runs in the order given (e.g. before, after)."""
    last = list(runs.values())[-1]
    rows: list[list[str]] = []
    for group, keys in ((False, last.results), (True, last.groups)):
        for key in keys:
            for index, (label, results) in enumerate(runs.items()):
                name = "" if index else (f"[group] {key}" if group else key)
                rows.append(_row(name, label, results, key, group))
    headers = ["task", "run"]
    for _, measure in SHOWN:
        headers += [f"{LABELS[c]} {measure}" for c in SCORES]
    headers += ["answer len", "ref len", "cut", "looping", "flags"]
    # leave out score columns no run has a value in (a role-specific task has no CUS or RAW)
    keep = [
        i for i in range(len(headers)) if i < 2 or i >= 2 + 2 * len(SCORES) or any(r[i] != "-" for r in rows)
    ]
    table = tabulate(
        [[r[i] for i in keep] for r in rows], headers=[headers[i] for i in keep], tablefmt="github"
    )
    flags = sorted_flags([f for r in rows for f in r[-1].split(", ") if f])
    notes = [
        f"{PAPER_PROTOCOL}: the paper's ROUGE-L recall; {F_MEASURE_PROTOCOL}: the F-measure; lengths in "
        "words (characters for Chinese), answers and first references"
    ]
    return "\n".join([table, "", *notes, *(describe(f) for f in flags)])


# ---- two runs on the same items, paired (`rolebench compare`; the numbers: rolebench.report.paired) ----


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.4f}"


def _p_text(found: Mapping[str, Any], resamples: int) -> str:
    p = found["p"]
    if p is None:
        return "-"
    if found.get("exact"):
        return f"{p:.3g} exact"
    return f"<{1 / resamples:.3g}" if p <= 1 / (resamples + 1) + 1e-15 else f"{p:.3f}"


def _shown(entry: Mapping[str, Any], document: Mapping[str, Any]) -> list[str]:
    """The metrics a table row shows: a task's; a group's avg, and a metric only when it pools several
    tasks (else it repeats its one task's row)."""
    members = entry.get("tasks")
    if members is None:
        return list(METRIC_KEYS)
    held = [m for m in METRIC_KEYS for t in members if m in (document["tasks"].get(t) or {})]
    return [m for m in METRIC_KEYS if held.count(m) > 1] + [AVG]


def _rows(name: str, entry: Mapping[str, Any], document: Mapping[str, Any]) -> list[list[str]]:
    rows: list[list[str]] = []
    resamples = int(document["bootstrap"]["resamples"])
    metrics = _shown(entry, document)
    shown = [(p, m, (entry.get(p) or {}).get(m)) for p in document["protocols"] for m in metrics]
    shown.append(("", "win_rate", entry.get("win_rate")))
    for protocol, metric, found in shown:
        if not found:
            continue
        label = "win rate" if metric == "win_rate" else f"{LABELS[metric]} {document['protocols'][protocol]}"
        ci = found["ci"]
        rows.append(
            [
                name if not rows else "",
                label,
                "-" if found["a"] is None else f"{found['a']:.4f}",
                "-" if found["b"] is None else f"{found['b']:.4f}",
                _signed(found["diff"]),
                "-" if not ci else f"[{ci[0]:+.4f}, {ci[1]:+.4f}]",
                _p_text(found, resamples),
                f"{found['n']:,}",
                found.get("verdict") or "-",
            ]
        )
    return rows


def comparison_table(document: Mapping[str, Any]) -> str:
    """The comparison on a terminal: who A and B are, then per task and group and metric A, B, A - B,
    its interval, p, n and the verdict (`rolebench.scoring.resampling.verdict`)."""
    boot = document["bootstrap"]
    rows = [r for t, e in document["tasks"].items() for r in _rows(t, e, document)]
    rows += [r for g, e in document["groups"].items() for r in _rows(f"[group] {g}", e, document)]
    headers = [
        "task / group",
        "metric",
        "A",
        "B",
        "A - B",
        f"{boot['confidence']:.0%} interval",
        "p",
        "n",
        "verdict",
    ]
    table = tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)
    judge = f"; win rate against the RoleGPT baseline, judge {document['judge']}" if document["judge"] else ""
    return "\n".join(
        [
            f"A: {document['a']['run']} ({document['a']['model']})",
            f"B: {document['b']['run']} ({document['b']['model']})",
            "",
            table,
            "",
            "On the items both runs hold (n); A - B with a paired bootstrap interval and a paired "
            f"permutation p-value ({boot['resamples']:,} resamples, seed {boot['seed']}; exact over every "
            f"sign flip up to {EXACT_ITEMS} items){judge}. A group's avg: each task's items resampled "
            "jointly and the avg recomputed per resample. A verdict needs the interval and p to agree, and "
            "enough items for p to reach the level at all.",
            *([document["judge_note"]] if document.get("judge_note") else []),
        ]
    )
