"""What a RoleBench test item is joined to, and how: its RoleGPT baseline answer, its original answer
(for RAW) and the split's train file.

This module is the one place that knows
- the join of a test row to its RoleGPT baseline answer on the raw `(role, question)`,
- the join of a general instruction to its original answer (for RAW) on the instruction text, and
- the join of a test item to the split's train file on the stripped question (`TrainIndex`): whether
  the item was seen in training (`Sample.in_train`, the "unseen" view keeps the items where it is
  False) and the first train answer to it (`Sample.train_answer`, the `baseline:train` floor);

and what every reader of a split's files needs: a field of one or more answers as a tuple
(`as_references`), a record's `type` as a tuple (`normalise_types`). Each join reads the numbered
records of a file it is given (`rolebench.data.samples.read_split` resolves a split's files once, in
one pass through the source, and opens them).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rolebench.data.source import DataSource, source_for
from rolebench.data.splits import SplitDef
from rolebench.errors import DataError
from rolebench.storage.jsonl import numbered_jsonl

Rows = Iterable[tuple[int, dict[str, Any]]]  # the numbered records of one JSONL file

# The original answers' files (`instructions-{eng,zh}/instructions-general.jsonl`) ship as
# `{"id", "instruction", "target"}` lines; a build or a converted copy may say `answer` (the first wins).
QUESTION_FIELDS = ("instruction", "question")
ANSWER_FIELDS = ("target", "answer", "output", "generated")


def as_references(value: Any, where: str, field: str = "generated") -> tuple[str, ...]:
    """A record's answers (`field`: one string or a list of strings) as a tuple; DataError otherwise."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise DataError(f"`{field}` must be a string or a list of strings", where=where)


def normalise_types(value: Any, where: str = "") -> tuple[str, ...]:
    """`type` is a string in some rows and a list in others upstream; always a tuple here."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise DataError(
        f"`type` must be a string or a list of strings, not {type(value).__name__}",
        where=where,
        fix="repair or re-download the file",
    )


BASELINE_JOIN = (
    "(role, question) as written; else (role, question stripped of surrounding whitespace) when unambiguous"
)


class BaselineAnswers:
    """The RoleGPT baseline answers of a split, joined to test items on `(role, question)`.

    The join is exact first: the question as written in both files. Where that finds nothing, the
    question stripped of surrounding whitespace is tried, and used only when it names exactly one
    answer. The released English role-generalization baseline matches 500 of its 2,534 test items
    exactly and 696 with the stripped fallback, which scores RoleGPT's SPE at 29.82 against the
    paper's 29.85 (29.70 exact only); every other split joins in full on the exact key, unchanged.
    """

    def __init__(self, records: list[tuple[str, str, str]]) -> None:
        self.exact: dict[tuple[str, str], str] = {}
        self.stripped: dict[tuple[str, str], set[str]] = {}
        for role, question, answer in records:
            self.exact.setdefault((role, question), answer)
            self.stripped.setdefault((role, question.strip()), set()).add(answer)

    def get(self, role: str, question: str) -> str | None:
        found = self.exact.get((role, question))
        if found is not None:
            return found
        candidates = self.stripped.get((role, question.strip()), set())
        return next(iter(candidates)) if len(candidates) == 1 else None


def baseline_answers(path: Path, rows: Rows) -> BaselineAnswers:
    """The RoleGPT baseline answers in the file at `path` (the first answer of each record), `rows` its
    records counted from 1."""
    records: list[tuple[str, str, str]] = []
    for number, rec in rows:
        where = f"{path}:{number}"
        role, question = rec.get("role"), rec.get("question")
        if not isinstance(role, str) or not isinstance(question, str):
            raise DataError("a baseline record needs string fields `role` and `question`", where=where)
        answers = as_references(rec.get("generated"), where)
        if answers:
            records.append((role, question, answers[0]))
    return BaselineAnswers(records)


def raw_answers(split: SplitDef, source: DataSource) -> dict[str, str] | None:
    """Original answers keyed by the stripped instruction text; None when the file is absent."""
    if split.raw_answers is None:
        return None
    path = source.path(split.raw_answers, required=False)
    return None if path is None else joined_raw(path, numbered_jsonl(path))


def joined_raw(path: Path, rows: Rows) -> dict[str, str]:
    """The original answers in the file at `path` (`rows`: its numbered records), keyed by the stripped
    instruction text."""
    joined: dict[str, str] = {}
    for number, rec in rows:
        question = next((rec[f] for f in QUESTION_FIELDS if isinstance(rec.get(f), str)), None)
        named = next((f for f in ANSWER_FIELDS if rec.get(f) is not None), None)
        if question is None or named is None:
            raise DataError(
                f"cannot read the original answers: a record needs one of {QUESTION_FIELDS} and one of "
                f"{ANSWER_FIELDS}, this one has {sorted(rec)}",
                where=f"{path}:{number}",
                fix='the dataset ships {"id": ..., "instruction": ..., "target": ...} lines: re-download the '
                "file, or convert it to that shape",
            )
        answers = as_references(rec[named], f"{path}:{number}", named)
        joined.setdefault(question.strip(), answers[0] if answers else "")
    return joined


@dataclass(frozen=True)
class TrainIndex:
    """What a split's train file says about test items, every text stripped of surrounding whitespace:
    the answer of the first row of each question (any role; a row's first `generated` answer), the
    (role, question) pairs, and every answer of every row."""

    file: str  # relative to the dataset root
    rows: int
    questions: frozenset[str]
    answers_by_question: dict[str, str]
    pairs: frozenset[tuple[str, str]]
    answers: frozenset[str]

    def seen(self, question: str) -> bool:
        """Whether a train row asks `question` (stripped), whatever its role."""
        return question.strip() in self.questions

    def answer(self, question: str) -> str | None:
        """The first train answer to `question` (None: no train row asks it)."""
        return self.answers_by_question.get(question.strip())


def train_index(split: SplitDef, source: DataSource) -> TrainIndex | None:
    """The split's train file as a `TrainIndex`; None when the source has no train file."""
    source = source_for(split, source)
    relpath = split.file("train.jsonl")
    path = source.path(relpath, required=False)
    return None if path is None else indexed_train(relpath, path, numbered_jsonl(path))


def indexed_train(relpath: str, path: Path, rows: Rows) -> TrainIndex:
    """The train file `relpath` (read at `path`; `rows`: its numbered records) as a `TrainIndex`."""
    first: dict[str, str] = {}
    questions: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    answers: set[str] = set()
    count = 0
    for number, rec in rows:
        where = f"{path}:{number}"
        role, question = rec.get("role"), rec.get("question")
        if not isinstance(role, str) or not isinstance(question, str):
            raise DataError("a train record needs string fields `role` and `question`", where=where)
        given = [a.strip() for a in as_references(rec.get("generated"), where)]
        count += 1
        questions.add(question.strip())
        pairs.add((role, question.strip()))
        answers.update(given)
        if given:
            first.setdefault(question.strip(), given[0])
    return TrainIndex(relpath, count, frozenset(questions), first, frozenset(pairs), frozenset(answers))
