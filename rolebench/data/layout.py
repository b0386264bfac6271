"""The packaged RoleBench dataset's layout: configs, splits, columns, shard names, versions.

One table shared by the builder (`dataset_build`), the card (`dataset_card`), the Hub commands
(`dataset_hub`) and the packaged data source (`packaged_source`, which reads a build back into the
upstream file layout through the same `rolebench.data.SPLITS`).

A QA config gathers the `general` and `role_specific` splits of one RoleBench setting; its Hugging
Face splits are the upstream `train.jsonl` / `test.jsonl` files (rows of both kinds, told apart by
`task_kind`). A profiles config is `profiles-*/desc.json` as a table, in one split named `train`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rolebench.data.splits import SPLITS, SplitDef
from rolebench.errors import MissingDependency

MANIFEST_NAME = "checksums.json"
CARD_NAME = "README.md"
FAITHFUL_VERSION = "v1.0"  # the upstream rows as they are
CLEAN_VERSION = "v1.1"  # duplicates merged, `type` lists de-duplicated (`rolebench data build --clean`)
HF_SPLITS = ("train", "test")
PROFILE_SPLIT = "train"
SPLIT_FILES = ("train.jsonl", "test.jsonl", "rolegpt_baseline.jsonl")
DEFAULT_MAX_SHARD_BYTES = 256 * 2**20


@dataclass(frozen=True)
class QAConfig:
    """A dataset config made of RoleBench splits (ids of `rolebench.data.SPLITS`)."""

    name: str
    splits: tuple[str, ...]
    title: str

    def split_defs(self) -> list[SplitDef]:
        return [SPLITS[s] for s in self.splits]


@dataclass(frozen=True)
class ProfileConfig:
    """A dataset config made of one role-description file."""

    name: str
    file: str
    title: str


QA_CONFIGS: dict[str, QAConfig] = {
    c.name: c
    for c in [
        QAConfig(
            "instruction_generalization_eng",
            ("eng_instruct_general", "eng_instruct_specific"),
            "English, instruction generalization (95 roles, held-out instructions)",
        ),
        QAConfig(
            "role_generalization_eng",
            ("eng_role_general", "eng_role_specific"),
            "English, role generalization (10 held-out roles)",
        ),
        QAConfig(
            "instruction_generalization_zh",
            ("zh_general", "zh_specific"),
            "Chinese, instruction generalization (5 roles)",
        ),
    ]
}
PROFILE_CONFIGS: dict[str, ProfileConfig] = {
    c.name: c
    for c in [
        ProfileConfig("profiles_eng", "profiles-eng/desc.json", "English role descriptions"),
        ProfileConfig("profiles_zh", "profiles-zh/desc.json", "Chinese role descriptions"),
    ]
}
CONFIG_NAMES = (*QA_CONFIGS, *PROFILE_CONFIGS)

QA_COLUMNS: tuple[tuple[str, str, str], ...] = (
    (
        "id",
        "string",
        "`<split>/<index>` (test) or `<split>/train/<index>`: the upstream row, as in rolebench results",
    ),
    ("role", "string", "the role's name"),
    ("question", "string", "the instruction exactly as written upstream (leading/trailing spaces kept)"),
    ("references", "list[string]", "upstream `generated`: 1-5 reference answers (CUS) or the SPE answer"),
    (
        "type",
        "list[string]",
        "upstream `type` as a list (`script_based` / `script_agnostic`); empty for general",
    ),
    ("task_kind", "string", "`general` (CUS + RAW) or `role_specific` (SPE)"),
    ("description", "string", "the role description from `profiles-*/desc.json`"),
    ("rolegpt_baseline", "string or null", "RoleGPT's answer, joined on the raw (role, question)"),
    ("raw_answer", "string or null", "the instruction's original answer (RAW), from `instructions-*/`"),
)
PROFILE_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("role", "string", "the role's name"),
    ("description", "string", "the role description (the RoleGPT system prompt's input)"),
)


def import_pyarrow() -> tuple[Any, Any]:
    """`pyarrow` and `pyarrow.parquet`, or a MissingDependency naming the extra to install."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingDependency("the packaged dataset (Parquet)", "pyarrow", "data") from None
    return pa, pq


def qa_schema() -> Any:
    """The Arrow schema of every QA config."""
    pa, _ = import_pyarrow()

    text, texts = pa.string(), pa.list_(pa.string())
    return pa.schema(
        [
            pa.field("id", text, nullable=False),
            pa.field("role", text, nullable=False),
            pa.field("question", text, nullable=False),
            pa.field("references", texts, nullable=False),
            pa.field("type", texts, nullable=False),
            pa.field("task_kind", text, nullable=False),
            pa.field("description", text, nullable=False),
            pa.field("rolegpt_baseline", text),
            pa.field("raw_answer", text),
        ]
    )


def profile_schema() -> Any:
    pa, _ = import_pyarrow()

    return pa.schema(
        [pa.field("role", pa.string(), nullable=False), pa.field("description", pa.string(), nullable=False)]
    )


def shard_path(config: str, split: str, index: int, count: int) -> str:
    """`<config>/<split>-00000-of-00001.parquet`, relative to the dataset root."""
    return f"{config}/{split}-{index:05d}-of-{count:05d}.parquet"


def upstream_splits() -> list[SplitDef]:
    """The RoleBench splits that live in the upstream repo (not the packaged demo)."""
    return [s for s in SPLITS.values() if not s.builtin]


def upstream_patterns() -> list[str]:
    """What `rolebench data download` fetches: the splits' files, plus instructions-*/ and profiles-*/."""
    files: set[str] = set()
    for split in upstream_splits():
        files.update(split.file(name) for name in SPLIT_FILES)
        files.add(split.profiles)
        if split.raw_answers:
            files.add(split.raw_answers)
    folders = {f.split("/")[0] for f in files if f.startswith(("instructions-", "profiles-"))}
    return sorted(files) + sorted(f"{folder}/*" for folder in folders)
