"""The benchmarks, each one definition: its splits (the files that make up each one, where they are read
from, its language, and its kind, which names its metrics in `rolebench.scoring.metrics`), the task group
that runs them, and how tables name it.

RoleBench's three settings and the packaged demo are the benchmarks (`BENCHMARKS`); the demo's files ship
inside the package (`DEMO_ROOT`). Every split's items are read by `rolebench.data.samples.read_split`
and become requests through the one request builder (`rolebench.run.elicitation.sample_request`).
This is the one place that knows the Hub layout of the benchmark (`SPLITS`).
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
    max_new_tokens: int = (
        160  # its task file's `max_gen_toks`: the answer length cap, fitted to its references
    )

    def file(self, name: str) -> str:
        return f"{self.folder}/{name}"

    def script_file(self, role: str) -> str:
        """The role's script beside the descriptions, e.g. `profiles-eng/profiles-eng-{role}.jsonl`."""
        folder = self.profiles.split("/")[0]
        return f"{folder}/{folder}-{role}.jsonl"


@dataclass(frozen=True)
class Benchmark:
    """Splits evaluated, scored and ranked together: one task group, one leaderboard board per way of
    scoring (protocol, data files, judge)."""

    group: str  # the task group that runs its splits (`tasks/rolebench/<group>.yaml`)
    label: str  # how tables name it
    splits: tuple[SplitDef, ...]
    version: float = 2.0  # of its task files (lm-eval's `metadata.version`): raise it when they change

    @property
    def builtin(self) -> bool:
        """Its files ship inside the package (the demo)."""
        return all(s.builtin for s in self.splits)


_ENG_RAW = "instructions-eng/instructions-general.jsonl"
_ZH_RAW = "instructions-zh/instructions-general.jsonl"
_ENG_PROFILES = "profiles-eng/desc.json"
BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark(
        "rolebench_eng_instruct",
        "English instruction generalization",
        (
            SplitDef(
                "eng_instruct_general",
                "en",
                "general",
                "rolebench-eng/instruction-generalization/general",
                _ENG_PROFILES,
                _ENG_RAW,
            ),
            SplitDef(
                "eng_instruct_specific",
                "en",
                "role_specific",
                "rolebench-eng/instruction-generalization/role_specific",
                _ENG_PROFILES,
            ),
        ),
    ),
    Benchmark(
        "rolebench_eng_role",
        "English role generalization",
        (
            SplitDef(
                "eng_role_general",
                "en",
                "general",
                "rolebench-eng/role-generalization/general",
                _ENG_PROFILES,
                _ENG_RAW,
            ),
            SplitDef(
                "eng_role_specific",
                "en",
                "role_specific",
                "rolebench-eng/role-generalization/role_specific",
                _ENG_PROFILES,
            ),
        ),
    ),
    Benchmark(
        "rolebench_zh",
        "Chinese instruction generalization",
        (
            SplitDef(
                "zh_general",
                "zh",
                "general",
                "rolebench-zh/general",
                "profiles-zh/desc.json",
                _ZH_RAW,
                max_new_tokens=256,
            ),
            SplitDef(
                "zh_specific",
                "zh",
                "role_specific",
                "rolebench-zh/role_specific",
                "profiles-zh/desc.json",
                max_new_tokens=320,
            ),
        ),
    ),
    Benchmark(
        "rolebench_demo",
        "Packaged demo (not RoleBench)",
        (
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
        ),
    ),
)
SPLITS: dict[str, SplitDef] = {s.id: s for b in BENCHMARKS for s in b.splits}
_GROUPS: dict[str, Benchmark] = {b.group: b for b in BENCHMARKS}
_OF_SPLIT: dict[str, Benchmark] = {s.id: b for b in BENCHMARKS for s in b.splits}


def get_benchmark(group: str) -> Benchmark | None:
    """The benchmark run by task group `group`; None for a group that is no benchmark (`rolebench`, a
    user's own)."""
    return _GROUPS.get(group)


def benchmark_of(split_id: str) -> Benchmark | None:
    """The benchmark a split belongs to; None for a split id that is none of `SPLITS`."""
    return _OF_SPLIT.get(split_id)


def get_split(split_id: str) -> SplitDef:
    try:
        return SPLITS[split_id]
    except KeyError:
        raise DataError(f"unknown RoleBench split {split_id!r}", fix="one of " + ", ".join(SPLITS)) from None
