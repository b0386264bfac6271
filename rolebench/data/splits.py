"""The RoleBench splits: which files make up each one, its language, its kind, and its metrics.

The one place that knows the Hub layout of the benchmark (`SPLITS`); the packaged demo is a split
like the others, whose files ship inside the package (`DEMO_ROOT`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rolebench.errors import DataError

DEMO_ROOT = Path(__file__).parent / "demo"


@dataclass(frozen=True)
class SplitDef:
    """The files of one RoleBench split, relative to the dataset root."""

    id: str
    language: str  # "en" or "zh"
    kind: str  # "general" (CUS + RAW) or "role_specific" (SPE)
    folder: str
    profiles: str
    raw_answers: str | None = None  # instructions file giving RAW references (general splits)
    builtin: bool = False  # shipped inside the package (the demo), independent of --data-dir

    def file(self, name: str) -> str:
        return f"{self.folder}/{name}"

    def script_file(self, role: str) -> str:
        """The role's script beside the descriptions, e.g. `profiles-eng/profiles-eng-{role}.jsonl`."""
        folder = self.profiles.split("/")[0]
        return f"{folder}/{folder}-{role}.jsonl"


_ENG_RAW = "instructions-eng/instructions-general.jsonl"
_ZH_RAW = "instructions-zh/instructions-general.jsonl"
SPLITS: dict[str, SplitDef] = {
    s.id: s
    for s in [
        SplitDef(
            "eng_instruct_general",
            "en",
            "general",
            "rolebench-eng/instruction-generalization/general",
            "profiles-eng/desc.json",
            _ENG_RAW,
        ),
        SplitDef(
            "eng_instruct_specific",
            "en",
            "role_specific",
            "rolebench-eng/instruction-generalization/role_specific",
            "profiles-eng/desc.json",
        ),
        SplitDef(
            "eng_role_general",
            "en",
            "general",
            "rolebench-eng/role-generalization/general",
            "profiles-eng/desc.json",
            _ENG_RAW,
        ),
        SplitDef(
            "eng_role_specific",
            "en",
            "role_specific",
            "rolebench-eng/role-generalization/role_specific",
            "profiles-eng/desc.json",
        ),
        SplitDef("zh_general", "zh", "general", "rolebench-zh/general", "profiles-zh/desc.json", _ZH_RAW),
        SplitDef("zh_specific", "zh", "role_specific", "rolebench-zh/role_specific", "profiles-zh/desc.json"),
        SplitDef(
            "demo_general",
            "en",
            "general",
            "rolebench-demo/general",
            "profiles-demo/desc.json",
            "instructions-demo/instructions-general.jsonl",
            builtin=True,
        ),
        SplitDef(
            "demo_specific",
            "en",
            "role_specific",
            "rolebench-demo/role_specific",
            "profiles-demo/desc.json",
            builtin=True,
        ),
    ]
}


def get_split(split_id: str) -> SplitDef:
    try:
        return SPLITS[split_id]
    except KeyError:
        raise DataError(f"unknown RoleBench split {split_id!r}", fix="one of " + ", ".join(SPLITS)) from None
