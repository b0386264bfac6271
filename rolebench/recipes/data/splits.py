"""Train/test splits of generated RoleBench data, deterministic by seed, in the Hub layout.

Input: DIR/general/*.jsonl and DIR/role_specific/*.jsonl (rows `{"role", "question", "generated",
...}`; files whose name ends in `baseline.jsonl` are baseline answers). The released layout
(train.jsonl + test.jsonl + rolegpt_baseline.jsonl) is such a folder, so released data can be re-split.

Output, like `rolebench-eng/` on the Hub:
- `instruction-generalization/{general,role_specific}/`: per role, a seeded `test_fraction` of its
  (role, question) pairs is held out;
- `role-generalization/{general,role_specific}/`: every pair of the held-out roles is test data;
each with `train.jsonl`, `test.jsonl` and `rolegpt_baseline.jsonl` (baseline rows of the test pairs),
plus `splits.json` (seed, held-out roles, counts, input checksums). A pair is `(role,
question.strip())`: all rows of a pair land on the same side, so no pair is in both train and test.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model_adapters.files import file_sha256
from rolebench.errors import ConfigError, DataError
from rolebench.storage.files import write_json_atomic, write_jsonl_atomic
from rolebench.storage.jsonl import read_jsonl

KINDS = ("general", "role_specific")
Row = dict[str, Any]


@dataclass(frozen=True)
class SplitOptions:
    data: Path
    out: Path
    seed: int = 0
    test_fraction: float = 0.2
    held_out_roles: tuple[str, ...] = ()  # empty: a seeded `held_out_fraction` of the roles
    held_out_fraction: float = 0.1


def pair_key(row: Row) -> tuple[str, str]:
    return row["role"], row["question"].strip()


def read_kind(folder: Path) -> tuple[list[Row], list[Row], dict[str, str]]:
    """(rows, baseline rows, {file: sha256}) of one kind's folder; missing folder = no rows."""
    rows: list[Row] = []
    baselines: list[Row] = []
    checksums = {}
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        target = baselines if path.name.endswith("baseline.jsonl") else rows
        for number, rec in enumerate(read_jsonl(path), 1):
            if not isinstance(rec.get("role"), str) or not isinstance(rec.get("question"), str):
                raise DataError("a row needs string fields `role` and `question`", where=f"{path}:{number}")
            target.append(rec)
        checksums[str(path)] = file_sha256(path)
    return rows, baselines, checksums


def held_out_pairs(rows: Sequence[Row], fraction: float, seed: int, kind: str) -> set[tuple[str, str]]:
    """Per role, a seeded `fraction` of its distinct pairs (rounded half up; a role keeps one in train)."""
    by_role: dict[str, dict[tuple[str, str], None]] = {}
    for row in rows:
        by_role.setdefault(row["role"], {})[pair_key(row)] = None
    held: set[tuple[str, str]] = set()
    for role, keys in sorted(by_role.items()):
        unique = list(keys)
        count = min(len(unique) - 1, math.floor(fraction * len(unique) + 0.5))
        rng = random.Random(f"{seed}/{kind}/{role}")
        held.update(rng.sample(unique, max(count, 0)))
    return held


def choose_roles(roles: Sequence[str], options: SplitOptions) -> list[str]:
    """The held-out roles: the given names, else a seeded sample (at least one role stays in train)."""
    if options.held_out_roles:
        unknown = sorted(set(options.held_out_roles) - set(roles))
        if unknown:
            raise ConfigError(
                f"held-out roles not in the data: {', '.join(unknown)}", where="--held-out-roles"
            )
        chosen = list(options.held_out_roles)
    else:
        count = max(1, math.floor(options.held_out_fraction * len(roles) + 0.5))
        chosen = random.Random(f"{options.seed}/roles").sample(sorted(roles), min(count, len(roles)))
    if len(set(chosen)) >= len(set(roles)):
        raise ConfigError("every role is held out; nothing is left to train on", where="--held-out-roles")
    return sorted(chosen)


def write_split(folder: Path, rows: Sequence[Row], baselines: Sequence[Row], is_test: Any) -> dict[str, int]:
    """Write train/test/baseline of one folder; `is_test(row)` decides. Returns the counts."""
    train = [r for r in rows if not is_test(r)]
    test = [r for r in rows if is_test(r)]
    train_keys = {pair_key(r) for r in train}
    leaked = train_keys & {pair_key(r) for r in test}
    if leaked:
        raise DataError(f"{len(leaked)} (role, question) pairs are in both train and test", where=str(folder))
    test_keys = {pair_key(r) for r in test}
    baseline = [r for r in baselines if pair_key(r) in test_keys]
    write_jsonl_atomic(folder / "train.jsonl", train)
    write_jsonl_atomic(folder / "test.jsonl", test)
    write_jsonl_atomic(folder / "rolegpt_baseline.jsonl", baseline)
    return {"train": len(train), "test": len(test), "baseline": len(baseline)}


def build_splits(options: SplitOptions) -> dict[str, Any]:
    """Write both generalization settings under `options.out`; returns the manifest (also splits.json)."""
    if not 0.0 < options.test_fraction < 1.0:
        raise ConfigError(f"--test-fraction {options.test_fraction} is not in (0, 1)")
    data = {kind: read_kind(options.data / kind) for kind in KINDS}
    roles = sorted({row["role"] for rows, _, _ in data.values() for row in rows})
    if not roles:
        raise DataError(
            f"no rows under {options.data}/general or {options.data}/role_specific",
            where="--data",
            fix="put *.jsonl files with {role, question, generated} rows there",
        )
    held_roles = set(choose_roles(roles, options))
    counts: dict[str, dict[str, dict[str, int]]] = {
        "instruction-generalization": {},
        "role-generalization": {},
    }
    for kind, (rows, baselines, _) in data.items():
        held = held_out_pairs(rows, options.test_fraction, options.seed, kind)
        counts["instruction-generalization"][kind] = write_split(
            options.out / "instruction-generalization" / kind,
            rows,
            baselines,
            lambda r, h=held: pair_key(r) in h,
        )
        counts["role-generalization"][kind] = write_split(
            options.out / "role-generalization" / kind, rows, baselines, lambda r: r["role"] in held_roles
        )
    manifest = {
        "seed": options.seed,
        "test_fraction": options.test_fraction,
        "held_out_roles": sorted(held_roles),
        "roles": roles,
        "counts": counts,
        "inputs": {f: s for _, _, sums in data.values() for f, s in sums.items()},
    }
    write_json_atomic(options.out / "splits.json", manifest)
    return manifest
