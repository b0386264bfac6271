"""RoleBench test items as typed samples: how a raw record becomes a `Sample` (`type` normalised to a
list, every reference kept), joined to what `rolebench.data.joins` reads beside the test file (the
RoleGPT baseline answer, the original answer for RAW, with `train` the split's train file), and which
files of a split a source holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rolebench.data.joins import (
    BaselineAnswers,
    TrainIndex,
    as_references,
    baseline_answers,
    indexed_train,
    joined_raw,
    normalise_types,
)
from rolebench.data.source import DataSource, source_for
from rolebench.data.splits import SplitDef, get_split
from rolebench.errors import DataError
from rolebench.storage.jsonl import numbered_jsonl, read_json, read_jsonl


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


def load_descriptions(split: SplitDef, source: DataSource) -> dict[str, str]:
    """The split's role descriptions ({role: description})."""
    path = source.require(split.profiles, purpose="role descriptions")
    return checked_descriptions(read_json(path), path)


def checked_descriptions(data: Any, path: Path) -> dict[str, str]:
    """The role descriptions read at `path`, checked to be a JSON object {role: description}."""
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise DataError(
            "role descriptions must be a JSON object {role: description}",
            where=str(path),
            fix="repair or re-download the file",
        )
    return data


def load_samples(
    split_id: str,
    source: DataSource,
    *,
    limit: int | None = None,
    file: str = "test.jsonl",
    train: bool = False,
) -> list[Sample]:
    """The samples of the split named `split_id` (`read_split`)."""
    return read_split(get_split(split_id), source, limit=limit, file=file, train=train)


def read_split(
    split: SplitDef,
    source: DataSource,
    *,
    limit: int | None = None,
    file: str = "test.jsonl",
    train: bool = False,
) -> list[Sample]:
    """The test samples of a split, joined to descriptions, baseline answers and raw answers; with
    `train`, to the split's train file too (`TrainIndex`; `in_train` stays None without that file).

    `file="train.jsonl"` reads the training file the same way (ids `<split>/train/<index>`). Every file
    the split needs is resolved first, in one pass through the source, then each is read once.
    """
    source = source_for(split, source)
    location = source.describe_location()
    part = file.removesuffix(".jsonl")
    baseline, raw = split.file("rolegpt_baseline.jsonl"), split.raw_answers or ""
    trained = split.file("train.jsonl") if train and file == "test.jsonl" else ""
    required, found = source.paths(
        {split.file(file): f"{part} set of {split.id}", split.profiles: "role descriptions"},
        [name for name in (baseline, raw, trained) if name],
    )
    path, profiles = required[split.file(file)], required[split.profiles]
    baseline_at, raw_at, trained_at = (found.get(name) for name in (baseline, raw, trained))
    descriptions, items = read_json(profiles), read_jsonl(path)  # each file read once, as it is joined
    joins = _Joins(
        split,
        location,
        id_prefix=split.id if file == "test.jsonl" else f"{split.id}/{part}",
        descriptions=checked_descriptions(descriptions, profiles),
        baselines=baseline_answers(baseline_at, enumerate(read_jsonl(baseline_at), 1))
        if baseline_at
        else BaselineAnswers([]),
        raws=joined_raw(raw_at, numbered_jsonl(raw_at)) if raw_at else None,
        trained=indexed_train(trained, trained_at, numbered_jsonl(trained_at)) if trained_at else None,
    )
    samples: list[Sample] = []
    for index, rec in enumerate(items):
        if limit is not None and index >= limit:
            break
        samples.append(joins.sample(index, rec, f"{path}:{index + 1}"))
    if not samples:
        raise DataError(
            f"the {part} set of {split.id} has no records",
            where=str(path),
            fix="the file is empty: repair or re-download it",
        )
    return samples


@dataclass(frozen=True)
class _Joins:
    """What `read_split` joins each record of one split's file to."""

    split: SplitDef
    location: str  # where the split's files are read (`DataSource.describe_location`)
    id_prefix: str
    descriptions: dict[str, str]
    baselines: BaselineAnswers
    raws: dict[str, str] | None
    trained: TrainIndex | None

    def sample(self, index: int, rec: dict[str, Any], where: str) -> Sample:
        """The record at `index` (line `where`) as a checked `Sample`, joined."""
        role, question = rec.get("role"), rec.get("question")
        if not isinstance(role, str) or not isinstance(question, str):
            raise DataError("a test record needs string fields `role` and `question`", where=where)
        if role not in self.descriptions:
            raise DataError(
                f"no description for role {role!r}",
                where=self.split.profiles,
                fix=f"add it to {self.split.profiles} in {self.location}",
            )
        references = as_references(rec.get("generated"), where)
        if not references or not all(r.strip() for r in references):
            raise DataError(
                "a test record needs at least one non-empty reference in `generated`",
                where=where,
                fix="repair or re-download the file",
            )
        return Sample(
            id=f"{self.id_prefix}/{index}",
            split=self.split.id,
            index=index,
            role=role,
            question=question,
            references=references,
            types=normalise_types(rec.get("type"), where),
            description=self.descriptions[role],
            language=self.split.language,
            baseline=self.baselines.get(role, question),
            raw_answer=None if self.raws is None else self.raws.get(question.strip()),
            in_train=None if self.trained is None else self.trained.seen(question),
            train_answer=None if self.trained is None else self.trained.answer(question),
        )


def split_files_status(split_id: str, source: DataSource) -> dict[str, bool]:
    """Which files of a split exist in the source (for `data info` and clear warnings)."""
    split = get_split(split_id)
    source = source_for(split, source)
    names = [split.file(n) for n in ("train.jsonl", "test.jsonl", "rolegpt_baseline.jsonl")]
    names += [split.profiles] + ([split.raw_answers] if split.raw_answers else [])
    return {name: source.path(name, required=False) is not None for name in names}
