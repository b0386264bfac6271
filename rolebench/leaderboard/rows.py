"""Leaderboard rows and boards (the data behind every table), the split names, and the paper's rows.

A row is one model on one split (a task group). The RoleLLM paper's reported numbers ship in
`reference_results.yaml` and become rows marked REPORTED, as printed (never recomputed).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import yaml

from model_adapters.baseline import INFO
from rolebench.data.splits import BENCHMARKS, get_benchmark
from rolebench.scoring.metrics import AVG, METRIC_KEYS

SPLIT_LABELS = {b.group: b.label for b in BENCHMARKS}  # a row's split (a benchmark's group) -> its name
OURS = "ours"
REPORTED = "reported (paper)"
FLOOR = "floor"  # a null baseline (`rolebench.scoring.floors`): shown on every board, never ranked
F_AVG = f"f_{AVG}"
SCORES = (*METRIC_KEYS, AVG, *(f"f_{m}" for m in METRIC_KEYS), F_AVG)  # a row's scores, by name


@dataclass
class Row:
    """One model on one split."""

    model: str
    spec: str
    source: str  # OURS, REPORTED or FLOOR
    split: str  # group name, a key of SPLIT_LABELS
    # each metric and avg under the headline protocol, then (`f_` + name) under the F-measure (protocol
    # `rolebench`): the names of SCORES, read as fields (`row.cus`, `row.f_avg`); None: no value
    scores: dict[str, float | None] = field(default_factory=dict)
    answer_words: float | None = None  # mean answer length (words, or characters for Chinese)
    reference_words: float | None = None  # the references' mean length, counted the same way
    cut_at_limit: float | None = None  # share of answers stopped by the token limit
    looping: float | None = None  # share of answers that loop
    elicitation: str = ""  # how the role was prompted (zero-shot, few-shot-dialogue, 3 shots; "": not ours
    # to say, e.g. the paper's rows and `baseline:` answers, which read no prompt)
    prompt_tokens: float | None = None  # mean prompt tokens per answer (the context cost)
    seconds_per_answer: float | None = None  # the backend's mean seconds per answer (latency)
    answers_per_s: float | None = None  # throughput: answers generated per second of wall-clock time
    win_rate: float | None = None
    win_rate_ci: list[float] | None = None
    win_rate_lc: float | None = None  # length-controlled (rolebench.judging.length_control)
    win_rate_lc_ci: list[float] | None = None
    wins: int | None = None
    ties: int | None = None
    losses: int | None = None
    judge: str = ""
    n: int | None = None
    n_full: int | None = None
    n_not_covered: int | None = None
    limit: int | None = None
    protocol: str = ""
    dataset: str = ""
    revision: str | None = None  # the dataset revision when read from the Hub
    date: str = ""
    run: str = ""
    missing_tasks: list[str] = field(default_factory=list)
    per_role: dict[str, dict[str, Any]] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)  # rolebench.scoring.flags: length-inflated, looping, ...
    floors: dict[str, Any] = field(default_factory=dict)  # the split's floors on this row's items
    notes: list[str] = field(default_factory=list)
    not_comparable: str = (
        ""  # why its avg is not ranked against the board's ranked rows (other metrics/items)
    )
    board: str = ""
    rank: int | None = None  # under the headline (the paper's recall)
    rank_f: int | None = None  # under the F-measure: a rank length cannot buy
    rank_interval: list[int] | None = (
        None  # [best, worst] rank over resamples of the items (leaderboard.ranking)
    )
    rank_f_interval: list[int] | None = None  # the same under the F-measure
    avg_ci: list[float] | None = None  # avg's interval over the same resamples
    f_avg_ci: list[float] | None = None
    tied_with: list[str] = field(default_factory=list)  # ranked rows whose rank intervals overlap this one's

    @property
    def avg(self) -> float | None:
        """The mean of the row's metrics under the headline protocol (what ranks it)."""
        return self.scores.get(AVG)

    @property
    def f_avg(self) -> float | None:
        """The same mean under the F-measure (what `rank_f` ranks by)."""
        return self.scores.get(F_AVG)

    if not TYPE_CHECKING:  # at run time every score reads and sets by name (`row.cus`, `setattr(row,
        # "f_spe", v)`); typed code reads `scores`, so mypy still checks every other attribute name

        def __getattr__(self, name: str) -> float | None:
            if name in SCORES:
                return self.scores.get(name)
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

        def __setattr__(self, name: str, value: Any) -> None:
            if name in SCORES:
                self.scores[name] = value
            else:
                super().__setattr__(name, value)

    @property
    def partial(self) -> bool:
        """Fewer samples than the full split (a --limit run), or a task of the split missing."""
        if self.missing_tasks:
            return True
        if self.limit is None or self.source != OURS:
            return False
        return self.n_full is None or (self.n or 0) < self.n_full

    def warnings(self) -> list[str]:
        """Notes shown beside the row: where it comes from, what it lacks (the flags are apart)."""
        found = [REPORTED] if self.source == REPORTED else []
        if self.limit is not None and self.partial:
            found.append(f"partial: {n_display(self)} (--limit {self.limit})")
        if self.missing_tasks:
            found.append("missing task " + ", ".join(self.missing_tasks))
        if self.n_not_covered:
            found.append(f"not covered: {self.n_not_covered:,} of {self.n:,}")
        if self.tied_with:
            found.append(f"statistically tied with {', '.join(self.tied_with)} (rank intervals overlap)")
        return found + self.notes + ([self.not_comparable] if self.not_comparable else [])

    def to_dict(self) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        for name, value in asdict(self).items():
            fields.update({s: self.scores.get(s) for s in SCORES} if name == "scores" else {name: value})
        return {
            **fields,
            "partial": self.partial,
            "warnings": self.warnings(),
            "split_label": SPLIT_LABELS[self.split],
        }


@dataclass
class Board:
    """Rows that may be ranked against each other."""

    id: str
    split: str
    protocol: str
    dataset: str
    judge: str
    reference: bool
    rows: list[Row]
    rank_note: str = ""  # why the board has no rank intervals (rolebench.leaderboard.ranking)

    @property
    def title(self) -> str:
        kind = REPORTED if self.reference else f"protocol {self.protocol} · data {self.dataset}"
        return f"{SPLIT_LABELS[self.split]} — {kind} · judge {self.judge or 'none'}"

    def order_note(self) -> str:
        """When the F-measure ranks the board's rows in another order than the headline: say how."""
        moved = [r for r in self.rows if r.rank is not None and r.rank_f is not None and r.rank != r.rank_f]
        if not moved:
            return ""
        changes = ", ".join(f"{r.model} {r.rank} → {r.rank_f}" for r in moved)
        return f"Ranked by the F-measure instead of the paper's recall, the order changes: {changes}."

    def unranked_note(self) -> str:
        """Why a board of ours ranks no row, and what to run to rank one; "" when a row is ranked."""
        ours = [r for r in self.rows if r.source == OURS]
        if self.reference or not ours or any(r.rank is not None for r in self.rows):
            return ""
        if all(r.partial for r in ours):
            return (
                "Nothing ranked: every row is partial (a --limit run or a missing task), and only runs of "
                "every item of the split are ranked against each other. To rank a model, run `rolebench "
                f"evaluate --model MODEL --tasks {self.split}` without --limit."
            )
        return "Nothing ranked: no complete row is comparable with another (see each row's notes)."

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "split": self.split,
            "split_label": SPLIT_LABELS[self.split],
            "title": self.title,
            "protocol": self.protocol,
            "dataset": self.dataset,
            "judge": self.judge,
            "reference": self.reference,
            "order_note": self.order_note(),
            "rank_note": self.rank_note,
            "unranked_note": self.unranked_note(),
            "rows": [r.to_dict() for r in self.rows],
        }


NAME_LIMIT = 160  # characters of a name shown; a longer one is cut and says how long it is
_HIDDEN = ("Cc", "Cf", "Cs", "Zl", "Zp")  # controls, format (bidi, zero-width), surrogates, line breaks


def shown_name(text: str) -> str:
    """A name shown as what it is: a character that is invisible or moves the text around it (NUL, a
    newline, a bidi override that makes "gnp\u202eexe" read "gnpexe" backwards, a zero-width space) is
    written as its escape (`\u202e`), and a name over NAME_LIMIT characters is cut, saying its length."""
    visible = "".join(
        (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
        if unicodedata.category(c) in _HIDDEN
        else c
        for c in text
    )
    if len(visible) <= NAME_LIMIT:
        return visible
    return f"{visible[: NAME_LIMIT - 24].rstrip()}… ({len(text):,} characters)"


def display_name(spec: str, run: str, names: Mapping[str, str]) -> str:
    """How tables name a model: the name the user gave (by run name, then by model spec), the name of a
    `baseline:` answer set, else the spec itself; never a name read from the model's own files (a GGUF's
    metadata calls `smollm2:135m` "Smollm2 135M 8k Lc100K Mix1 Ep2"). Shown as what it is (`shown_name`)."""
    for key in (run, spec):
        if key in names:
            return shown_name(names[key])
    scheme, _, name = spec.partition(":")
    if scheme == "baseline" and name in INFO:
        return INFO[name][0]
    return shown_name(spec) if spec else "unknown model"


def n_display(row: Row) -> str:
    if row.n is None:
        return ""
    return f"{row.n:,} of {row.n_full:,}" if row.n_full is not None and row.n != row.n_full else f"{row.n:,}"


def split_members(group: str) -> tuple[str, ...]:
    """The split ids of the benchmark that task group `group` runs (none for a group that is no benchmark)."""
    benchmark = get_benchmark(group)
    return tuple(s.id for s in benchmark.splits) if benchmark else ()


@cache
def reference_data() -> dict[str, Any]:
    text = (
        resources.files("rolebench.leaderboard")
        .joinpath("reference_results.yaml")
        .read_text(encoding="utf-8")
    )
    data: dict[str, Any] = yaml.safe_load(text)
    return data


def reference_rows() -> list[Row]:
    """The paper's numbers as printed, one row per model and split, marked REPORTED."""
    data = reference_data()
    rows = []
    for group, split in data["splits"].items():
        for entry in split["rows"]:
            pct = entry.get("win_rate_pct")
            row = Row(
                model=entry["model"],
                spec="",
                source=REPORTED,
                split=group,
                scores={m: entry.get(m) for m in (*METRIC_KEYS, AVG)},
                win_rate=None if pct is None else round(pct / 100, 6),
                judge=split["judge"] if pct is not None else "",
                protocol=data["protocol"],
                dataset=data["dataset"],
                date="2023-10",
                run="RoleLLM paper",
            )
            values = [v for v in (row.scores.get(m) for m in METRIC_KEYS) if v is not None]
            mean = sum(values) / len(values) if len(values) == len(METRIC_KEYS) else None
            if row.avg is not None and mean is not None and abs(mean - row.avg) > 5e-4:
                row.notes.append(f"avg as printed in the paper; the mean of this row is {mean:.4f}")
            rows.append(row)
    return rows
