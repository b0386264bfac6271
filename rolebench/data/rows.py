"""The rows of the packaged dataset, read from any `DataSource` through `rolebench.data`.

Each QA row is a `rolebench.data.Sample` (same loader, same `type` normalisation, same baseline and
raw-answer joins) written as a flat record; nothing is invented: a file the source lacks is recorded
as absent with its consequence, and the dataset simply has fewer rows or null columns.
`clean_rows` is the v1.1 cleaning; v1.0 keeps the upstream rows as they are.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from rolebench.data.layout import (
    HF_SPLITS,
    PROFILE_CONFIGS,
    PROFILE_SPLIT,
    QA_CONFIGS,
    QAConfig,
    upstream_splits,
)
from rolebench.data.samples import Sample, load_descriptions, read_split, split_files_status
from rolebench.data.source import DataSource
from rolebench.data.splits import SplitDef
from rolebench.storage.jsonl import read_jsonl

Row = dict[str, Any]


@dataclass
class Collected:
    """Every table of the dataset, keyed by (config, split), plus what the source lacked and its quirks."""

    tables: dict[tuple[str, str], list[Row]] = field(default_factory=dict)
    absent: dict[str, str] = field(default_factory=dict)  # upstream relpath -> what is missing because of it
    issues: list[str] = field(default_factory=list)


def sample_row(sample: Sample, kind: str) -> Row:
    return {
        "id": sample.id,
        "role": sample.role,
        "question": sample.question,
        "references": list(sample.references),
        "type": list(sample.types),
        "task_kind": kind,
        "description": sample.description,
        "rolegpt_baseline": sample.baseline,
        "raw_answer": sample.raw_answer,
    }


_CONSEQUENCE = {
    "train.jsonl": "no {kind} rows in the train split of {config}",
    "test.jsonl": "no {kind} rows in the test split of {config}",
    "rolegpt_baseline.jsonl": "rolegpt_baseline is null for the {kind} rows of {config}",
    "profiles": "config {config} cannot be built (no role descriptions)",
    "raw": "raw_answer is null for the general rows of {config}",
}


def _record_absent(
    config: QAConfig, split: SplitDef, source: DataSource, collected: Collected
) -> dict[str, bool]:
    status = split_files_status(split.id, source)
    for relpath, present in status.items():
        if present:
            continue
        name = relpath.rsplit("/", 1)[-1]
        key = "profiles" if relpath == split.profiles else "raw" if relpath == split.raw_answers else name
        note = _CONSEQUENCE[key].format(kind=split.kind, config=config.name)
        previous = collected.absent.get(relpath)
        collected.absent[relpath] = note if previous is None or note in previous else f"{previous}; {note}"
    return status


def collect_qa(config: QAConfig, source: DataSource, collected: Collected, *, clean: bool = False) -> None:
    """The train/test rows of one QA config (general rows first, then role-specific, each in file order)."""
    for split in config.split_defs():
        status = _record_absent(config, split, source, collected)
        if not status[split.profiles]:
            continue
        rows_by_file = {}
        for hf_split in HF_SPLITS:
            if status[split.file(f"{hf_split}.jsonl")]:
                samples = read_split(split, source, file=f"{hf_split}.jsonl")
                rows_by_file[hf_split] = [sample_row(s, split.kind) for s in samples]
                collected.tables.setdefault((config.name, hf_split), []).extend(rows_by_file[hf_split])
        _note_quirks(config, split, source, rows_by_file, collected, clean)


def _note_quirks(
    config: QAConfig,
    split: SplitDef,
    source: DataSource,
    rows_by_file: dict[str, list[Row]],
    collected: Collected,
    clean: bool,
) -> None:
    """Known issues worth a line in the card: duplicate keys, baseline rows that join no question (what
    test items share with the train file: `rolebench.data.audit`)."""
    for hf_split, rows in rows_by_file.items():
        counts = Counter((r["role"], r["question"]) for r in rows)
        dups = {k: n for k, n in counts.items() if n > 1}
        if dups:
            collected.issues.append(
                f"{config.name}/{hf_split} ({split.kind}): {sum(dups.values())} rows share {len(dups)} "
                f"(role, question) keys ({sum(dups.values()) - len(dups)} duplicate rows, "
                f"with different answers "
                f"in {sum(1 for k in dups if _answers_differ(rows, k))} keys); "
                + ("merged in this version (see the changelog)" if clean else "kept as upstream")
            )
    path = source.path(split.file("rolegpt_baseline.jsonl"), required=False)
    if path is None or not rows_by_file:
        return
    keys = {(r["role"], r["question"]) for rows in rows_by_file.values() for r in rows}
    records = [(r.get("role"), r.get("question")) for r in read_jsonl(path)]
    unjoined = sum(1 for key in records if key not in keys)
    covered = {hf: sum(r["rolegpt_baseline"] is not None for r in rows) for hf, rows in rows_by_file.items()}
    coverage = ", ".join(f"{covered[hf]} of {len(rows)} {hf} rows" for hf, rows in rows_by_file.items())
    note = f"{config.name} ({split.kind}): the RoleGPT baseline file answers {coverage}"
    if unjoined:
        note += f"; {unjoined} of its {len(records)} rows match no question of this split and are not carried"
    collected.issues.append(note)
    if split.kind == "general":
        _note_baseline_in_references(config, rows_by_file, collected)


def _note_baseline_in_references(
    config: QAConfig, rows_by_file: dict[str, list[Row]], collected: Collected
) -> None:
    """General rows that list RoleGPT's own answer among their references: they inflate RoleGPT's CUS
    (a perfect match), e.g. 72 of 1,451 Chinese test rows (RoleGPT's CUS: 57.07 with them, 54.83 without)."""
    for hf_split, rows in rows_by_file.items():
        listed = sum(
            1 for r in rows if r["rolegpt_baseline"] is not None and r["rolegpt_baseline"] in r["references"]
        )
        if listed:
            collected.issues.append(
                f"{config.name}/{hf_split}: {listed} of {len(rows)} rows list the RoleGPT baseline answer "
                "itself among their references, which inflates RoleGPT's CUS (kept as upstream)"
            )


def _answers_differ(rows: list[Row], key: tuple[str, str]) -> bool:
    return len({tuple(r["references"]) for r in rows if (r["role"], r["question"]) == key}) > 1


def collect_profiles(source: DataSource, collected: Collected) -> None:
    for config in PROFILE_CONFIGS.values():
        split = next(s for s in upstream_splits() if s.profiles == config.file)
        if source.path(config.file, required=False) is None:
            collected.absent.setdefault(config.file, f"config {config.name} is not built")
            continue
        descriptions = load_descriptions(split, source)
        rows = [{"role": role, "description": str(text)} for role, text in descriptions.items()]
        collected.tables[(config.name, PROFILE_SPLIT)] = rows


def collect(source: DataSource, *, clean: bool = False) -> Collected:
    """All configs' rows from `source`, with absent files and known issues recorded."""
    collected = Collected()
    for config in QA_CONFIGS.values():
        collect_qa(config, source, collected, clean=clean)
    collect_profiles(source, collected)
    return collected


def _merge(rows: list[Row]) -> Row:
    merged = dict(rows[0])
    merged["references"] = list(dict.fromkeys(ref for r in rows for ref in r["references"]))
    merged["type"] = list(dict.fromkeys(t for r in rows for t in r["type"]))
    for column in ("rolegpt_baseline", "raw_answer"):
        merged[column] = next((r[column] for r in rows if r[column] is not None), None)
    return merged


def clean_rows(tables: dict[tuple[str, str], list[Row]]) -> list[str]:
    """v1.1: merge rows sharing (task_kind, role, question), de-duplicate `type`; returns the changes."""
    changes = []
    for (config, split), rows in tables.items():
        if config in PROFILE_CONFIGS:
            continue
        groups: dict[tuple[str, str, str], list[Row]] = {}
        for row in rows:
            groups.setdefault((row["task_kind"], row["role"], row["question"]), []).append(row)
        dup_groups = [g for g in groups.values() if len(g) > 1]
        typed = sum(1 for r in rows if len(set(r["type"])) != len(r["type"]))
        cleaned = [_merge(g) for g in groups.values()]
        for row in cleaned:
            row["type"] = list(dict.fromkeys(row["type"]))
        tables[(config, split)] = cleaned
        if dup_groups:
            changes.append(
                f"{config}/{split}: merged {sum(map(len, dup_groups))} rows sharing {len(dup_groups)} "
                f"(task_kind, role, question) keys into {len(dup_groups)} rows (references concatenated "
                f"in file order, id of the first row kept): {len(rows)} -> {len(cleaned)} rows"
            )
        if typed:
            changes.append(
                f"{config}/{split}: de-duplicated the `type` list of {typed} rows "
                "(e.g. [script_agnostic, script_agnostic] -> [script_agnostic])"
            )
    return changes
