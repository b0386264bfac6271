"""RoleBench test items as typed samples: the loaders and the two joins.

This module is the one place that knows
- how a raw record becomes a `Sample` (`type` normalised to a list, every reference kept),
- the join of a test row to its RoleGPT baseline answer on the raw `(role, question)`,
- the join of a general instruction to its original answer (for RAW) on the instruction text, and
- the join of a test item to the split's train file on the stripped question (`TrainIndex`): whether
  the item was seen in training (`Sample.in_train`, the "unseen" view keeps the items where it is
  False) and the first train answer to it (`Sample.train_answer`, the `baseline:train` floor).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rolebench.data.source import DataSource
from rolebench.data.splits import SplitDef, get_split
from rolebench.errors import DataError
from rolebench.storage.jsonl import numbered_jsonl, read_json, read_jsonl

# The original answers' files (`instructions-{eng,zh}/instructions-general.jsonl`) ship as
# `{"id", "instruction", "target"}` lines; a build or a converted copy may say `answer` (the first wins).
QUESTION_FIELDS = ("instruction", "question")
ANSWER_FIELDS = ("target", "answer", "output", "generated")


@dataclass(frozen=True)
class Sample:
    """One test item. `question` is exactly as written in the file (the join key); prompts strip it."""

    id: str
    split: str
    index: int
    role: str
    question: str
    references: tuple[str, ...]
    types: tuple[str, ...]
    description: str
    language: str
    baseline: str | None = None
    raw_answer: str | None = None
    # the train join (`TrainIndex`); both None when the split's train file is absent or not joined
    in_train: bool | None = None  # its stripped question is a train question (any role)
    train_answer: str | None = None  # the answer of the first such train row, in file order

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "split": self.split,
            "index": self.index,
            "role": self.role,
            "question": self.question,
            "references": list(self.references),
            "types": list(self.types),
            "description": self.description,
            "language": self.language,
            "baseline": self.baseline,
            "raw_answer": self.raw_answer,
            "in_train": self.in_train,
            "train_answer": self.train_answer,
        }


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


def as_references(value: Any, where: str, field: str = "generated") -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise DataError(f"`{field}` must be a string or a list of strings", where=where)


def source_for(split: SplitDef, source: DataSource) -> DataSource:
    """The packaged demo reads its own folder; every other split reads the chosen source."""
    return source.demo() if split.builtin else source


def load_descriptions(split: SplitDef, source: DataSource) -> dict[str, str]:
    path = source.require(split.profiles, purpose="role descriptions")
    data = read_json(path)
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise DataError(
            "role descriptions must be a JSON object {role: description}",
            where=str(path),
            fix="repair or re-download the file",
        )
    return data


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


def baseline_answers(split: SplitDef, source: DataSource) -> BaselineAnswers:
    """The split's RoleGPT baseline answers (the first answer of each record); none without the file."""
    path = source.path(split.file("rolegpt_baseline.jsonl"), required=False)
    records: list[tuple[str, str, str]] = []
    if path is not None:
        for number, rec in enumerate(read_jsonl(path), 1):
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
    if path is None:
        return None
    joined: dict[str, str] = {}
    for number, rec in numbered_jsonl(path):
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


TRAIN_JOIN = "the question stripped of surrounding whitespace, any role; the first train row in file order"


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
    if path is None:
        return None
    first: dict[str, str] = {}
    questions: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    answers: set[str] = set()
    rows = 0
    for number, rec in numbered_jsonl(path):
        where = f"{path}:{number}"
        role, question = rec.get("role"), rec.get("question")
        if not isinstance(role, str) or not isinstance(question, str):
            raise DataError("a train record needs string fields `role` and `question`", where=where)
        given = [a.strip() for a in as_references(rec.get("generated"), where)]
        rows += 1
        questions.add(question.strip())
        pairs.add((role, question.strip()))
        answers.update(given)
        if given:
            first.setdefault(question.strip(), given[0])
    return TrainIndex(relpath, rows, frozenset(questions), first, frozenset(pairs), frozenset(answers))


def load_samples(
    split_id: str,
    source: DataSource,
    *,
    limit: int | None = None,
    file: str = "test.jsonl",
    train: bool = False,
) -> list[Sample]:
    """The test samples of a split, joined to descriptions, baseline answers and raw answers; with
    `train`, to the split's train file too (`TrainIndex`; `in_train` stays None without that file).

    `file="train.jsonl"` reads the training file the same way (ids `<split>/train/<index>`).
    """
    split = get_split(split_id)
    source = source_for(split, source)
    part = file.removesuffix(".jsonl")
    path = source.require(split.file(file), purpose=f"{part} set of {split_id}")
    id_prefix = split_id if file == "test.jsonl" else f"{split_id}/{part}"
    descriptions = load_descriptions(split, source)
    baselines = baseline_answers(split, source)
    raws = raw_answers(split, source)
    trained = train_index(split, source) if train and file == "test.jsonl" else None
    samples: list[Sample] = []
    for index, rec in enumerate(read_jsonl(path)):
        if limit is not None and index >= limit:
            break
        where = f"{path}:{index + 1}"
        role, question = rec.get("role"), rec.get("question")
        if not isinstance(role, str) or not isinstance(question, str):
            raise DataError("a test record needs string fields `role` and `question`", where=where)
        if role not in descriptions:
            raise DataError(
                f"no description for role {role!r}",
                where=split.profiles,
                fix=f"add it to {split.profiles} in {source.describe_location()}",
            )
        references = as_references(rec.get("generated"), where)
        if not references or not all(r.strip() for r in references):
            raise DataError(
                "a test record needs at least one non-empty reference in `generated`",
                where=where,
                fix="repair or re-download the file",
            )
        samples.append(
            Sample(
                id=f"{id_prefix}/{index}",
                split=split_id,
                index=index,
                role=role,
                question=question,
                references=references,
                types=normalise_types(rec.get("type"), where),
                description=descriptions[role],
                language=split.language,
                baseline=baselines.get(role, question),
                raw_answer=None if raws is None else raws.get(question.strip()),
                in_train=None if trained is None else trained.seen(question),
                train_answer=None if trained is None else trained.answer(question),
            )
        )
    if not samples:
        raise DataError(
            f"the {part} set of {split_id} has no records",
            where=str(path),
            fix="the file is empty: repair or re-download it",
        )
    return samples


def split_files_status(split_id: str, source: DataSource) -> dict[str, bool]:
    """Which files of a split exist in the source (for `data info` and clear warnings)."""
    split = get_split(split_id)
    source = source_for(split, source)
    names = [split.file(n) for n in ("train.jsonl", "test.jsonl", "rolegpt_baseline.jsonl")]
    names += [split.profiles] + ([split.raw_answers] if split.raw_answers else [])
    return {name: source.path(name, required=False) is not None for name in names}
