"""What each split's test file shares with its train file, and with itself: the leaks a score inherits.

Per test item (every text stripped of surrounding whitespace; `rolebench.data.joins.TrainIndex`):

- `instruction_in_train`: its question is the question of a train row, whatever the role;
- `pair_in_train`: the same role and question are a train row;
- `reference_in_train`: one of its references equals an answer of a train row;
- `instruction_near_train`: its question is not a train question, but shares a span of `NGRAM` (13)
  tokens with one (lm-eval's decontamination rule: a test document sharing a 13-gram with the training
  data; tokens `overlap_tokens`: words, and each Chinese character on its own, as ROUGE-L counts them).
  The role's name is left out of both questions first: role-specific questions open with it
  ("孙悟空，你在西天取经的过程中..."), and that stock opening alone would make 11 of the 239 Chinese
  role-specific questions "near" train questions that ask something else;
- `reference_is_baseline`: the RoleGPT baseline answer joined to it is among its references;
- `duplicates`: its (role, question) repeats an earlier item of the test file.

The last two need no train file; the others are None, with the reason, when the split has none.
The RoleBench files of a57ed54: every one of the 1,451 Chinese general test instructions is a train
instruction (under another role), 155 of those items have a reference equal to a train answer and 72
list the RoleGPT answer itself; 7 of the 239 Chinese role-specific pairs are in train, 5 with a
reference equal to a train answer. The English train files are on the Hub only.
`rolebench data audit` shows this; the dataset card lists it; `evaluate` reports the unseen items.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rolebench.data.joins import TrainIndex, train_index
from rolebench.data.layout import QA_CONFIGS, upstream_splits
from rolebench.data.samples import Sample, read_split, split_files_status
from rolebench.data.source import DataSource, source_for
from rolebench.data.splits import SplitDef, get_split

NGRAM = 13  # lm-eval's decontamination n
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(f"[{_CJK}]|[^\\W{_CJK}]+")
OVERLAP_TOKENS = "lower-cased runs of word characters; each CJK character a token of its own"

# count -> (what it counts, whether it needs the train file); the order of the table and the JSON
COUNTS: dict[str, tuple[str, bool]] = {
    "instruction_in_train": ("its question is a train question (any role)", True),
    "pair_in_train": ("its (role, question) is a train row", True),
    "reference_in_train": ("a reference equals a train answer", True),
    "instruction_near_train": (f"its question shares {NGRAM} tokens with a train question (not equal)", True),
    "reference_is_baseline": ("the RoleGPT baseline answer is among its references", False),
    "duplicates": ("its (role, question) repeats an earlier test item", False),
}


def overlap_tokens(text: str) -> list[str]:
    """The tokens spans are counted in: lower-cased word runs, each CJK character one token."""
    return _TOKEN.findall(text.lower())


def ngrams(tokens: Sequence[str], n: int = NGRAM) -> set[tuple[str, ...]]:
    """Every run of `n` consecutive tokens (none for a text shorter than `n`)."""
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


@dataclass
class SplitAudit:
    """One split's audit: the ids behind each count (`COUNTS`), or why a count cannot be made."""

    split: str
    test_file: str
    train_file: str
    test_items: int | None = None
    train_rows: int | None = None
    items: dict[str, list[str]] = field(default_factory=dict)  # count -> item ids
    missing: dict[str, str] = field(default_factory=dict)  # count -> why it is not counted

    def count(self, name: str) -> int | None:
        found = self.items.get(name)
        return None if found is None else len(found)

    def to_json(self) -> dict[str, Any]:
        counts: dict[str, Any] = {}
        for name in COUNTS:
            if name in self.items:
                counts[name] = {"count": len(self.items[name]), "ids": self.items[name]}
            else:
                counts[name] = {"count": None, "ids": None, "missing": self.missing.get(name)}
        return {
            "test_file": self.test_file,
            "train_file": self.train_file,
            "test_items": self.test_items,
            "train_rows": self.train_rows,
            **counts,
        }


def _stripped(texts: Iterable[str]) -> set[str]:
    return {t.strip() for t in texts}


def question_grams(role: str, question: str) -> set[tuple[str, ...]]:
    """The `NGRAM`-token spans of a question, the role's name left out (see the module docstring)."""
    return ngrams(overlap_tokens(question.replace(role, " ") if role else question))


def _train_counts(samples: Sequence[Sample], train: TrainIndex) -> dict[str, list[str]]:
    """The counts that hold a test file against its train file."""
    train_grams: set[tuple[str, ...]] = set()
    for role, question in train.pairs:
        train_grams |= question_grams(role, question)
    found: dict[str, list[str]] = {name: [] for name, (_, needs) in COUNTS.items() if needs}
    for s in samples:
        question = s.question.strip()
        seen = train.seen(question)
        if seen:
            found["instruction_in_train"].append(s.id)
        elif question_grams(s.role, question) & train_grams:
            found["instruction_near_train"].append(s.id)
        if (s.role, question) in train.pairs:
            found["pair_in_train"].append(s.id)
        if _stripped(s.references) & train.answers:
            found["reference_in_train"].append(s.id)
    return found


def audit_samples(split: SplitDef, samples: Sequence[Sample], train: TrainIndex | None) -> SplitAudit:
    """The audit of a split's test samples against its train file (None: the source has none)."""
    result = SplitAudit(split.id, split.file("test.jsonl"), split.file("train.jsonl"), len(samples))
    if train is None:
        for name, (_, needs) in COUNTS.items():
            if needs:
                result.missing[name] = f"no train file ({result.train_file} is not in the data)"
    else:
        result.train_rows = train.rows
        result.items.update(_train_counts(samples, train))
    result.items["reference_is_baseline"] = [
        s.id for s in samples if s.baseline is not None and s.baseline.strip() in _stripped(s.references)
    ]
    keys: set[tuple[str, str]] = set()
    result.items["duplicates"] = []
    for s in samples:
        key = (s.role, s.question.strip())
        if key in keys:
            result.items["duplicates"].append(s.id)
        keys.add(key)
    result.items = {name: result.items[name] for name in COUNTS if name in result.items}
    return result


def audit_split(split_id: str, source: DataSource) -> SplitAudit:
    """One split's audit from a data source; a split without a test file says so for every count."""
    split = get_split(split_id)
    local = source_for(split, source)
    status = split_files_status(split_id, local)
    lacking = next((f for f in (split.file("test.jsonl"), split.profiles) if not status[f]), None)
    if lacking is not None:
        result = SplitAudit(split.id, split.file("test.jsonl"), split.file("train.jsonl"))
        result.missing = {name: f"no test items ({lacking} is not in the data)" for name in COUNTS}
        return result
    return audit_samples(split, read_split(split, local), train_index(split, local))


def audit_source(source: DataSource, splits: Sequence[str] | None = None) -> dict[str, SplitAudit]:
    """Every released split's audit (or those named), by split id."""
    ids = list(splits) if splits else [s.id for s in upstream_splits()]
    return {split_id: audit_split(split_id, source) for split_id in ids}


HEADERS = {
    "instruction_in_train": "instruction\nin train",
    "pair_in_train": "(role, instr.)\nin train",
    "reference_in_train": "reference\nin train",
    "instruction_near_train": f"near train\n({NGRAM}-gram)",
    "reference_is_baseline": "reference =\nRoleGPT",
    "duplicates": "repeated\nin test",
}


def _cell(audit: SplitAudit, name: str) -> str:
    count = audit.count(name)
    if count is None:
        return "no test items" if audit.test_items is None else "no train file"
    return (
        f"{count:,}" if not count or not audit.test_items else f"{count:,} ({count / audit.test_items:.0%})"
    )


def audit_table(audits: Iterable[SplitAudit]) -> str:
    """The audit as a terminal table: one row per split, one column per count, and what each means."""
    from tabulate import tabulate

    rows = [
        [
            a.split,
            "-" if a.test_items is None else f"{a.test_items:,}",
            "-" if a.train_rows is None else f"{a.train_rows:,}",
            *(_cell(a, name) for name in COUNTS),
        ]
        for a in audits
    ]
    table = tabulate(
        rows, headers=["split", "test\nitems", "train\nrows", *HEADERS.values()], disable_numparse=True
    )
    legend = [f"{HEADERS[name].replace(chr(10), ' ')}: {meaning}" for name, (meaning, _) in COUNTS.items()]
    rule = f"texts compared stripped; {NGRAM}-gram tokens: {OVERLAP_TOKENS}, the role's name left out"
    return "\n".join([table, "", *legend, rule])


def card_lines(audits: Iterable[SplitAudit]) -> list[str]:
    """The dataset card's known issues: per split, what its test items share with its train file."""
    configs = {split: config.name for config in QA_CONFIGS.values() for split in config.splits}
    lines = []
    for audit in audits:
        seen, pairs = audit.count("instruction_in_train"), audit.count("pair_in_train")
        if not audit.test_items or seen is None or pairs is None:
            continue
        share = "all" if seen == audit.test_items else f"{seen:,} of the"
        parts = [f"{share} {audit.test_items:,} test instructions are train instructions"]
        parts[0] += f" ({pairs:,} of them under the same role)" if seen else ""
        for name, text in (
            ("reference_in_train", "{n:,} test items have a reference equal to a train answer"),
            ("instruction_near_train", f"{{n:,}} more share {NGRAM} tokens with a train instruction"),
        ):
            if audit.count(name):
                parts.append(text.format(n=audit.count(name)))
        if seen or audit.count("instruction_near_train"):
            split = get_split(audit.split)
            lines.append(
                f"{configs.get(audit.split, audit.split)} ({split.kind}): {'; '.join(parts)}. Kept in every "
                "version (dropping them would empty some test splits); `rolebench data audit` lists the "
                "items, and `rolebench evaluate` scores the unseen ones apart"
            )
    return lines
