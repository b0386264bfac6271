"""`rolebench data build`: the upstream layout in, a clean Parquet dataset with a card and checksums out.

DIR/<config>/<split>-00000-of-0000N.parquet, DIR/README.md (card with `configs:` front matter) and
DIR/checksums.json (sha256 of every file, the version, the row counts and the source's provenance).
The build is staged in a sibling folder and renamed into place, so DIR is always a complete build.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rolebench.data.audit import audit_source, card_lines
from rolebench.data.card import TableInfo, render_card
from rolebench.data.layout import (
    CARD_NAME,
    CLEAN_VERSION,
    CONFIG_NAMES,
    DEFAULT_MAX_SHARD_BYTES,
    FAITHFUL_VERSION,
    HF_SPLITS,
    MANIFEST_NAME,
    QA_CONFIGS,
    import_pyarrow,
    profile_schema,
    qa_schema,
    shard_path,
)
from rolebench.data.manifest import Manifest, packaged_manifest, read_manifest, scan, write_manifest
from rolebench.data.resolve import resolve_source
from rolebench.data.rows import Collected, Row, clean_rows, collect
from rolebench.data.source import UPSTREAM_REPO, UPSTREAM_REVISION, DataSource
from rolebench.errors import ConfigError


@dataclass
class BuildOptions:
    out: Path
    clean: bool = False
    max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES
    progress: bool = True
    hub_repo: str | None = None  # the repo it will be pushed to (card examples; push checks it)


@dataclass
class BuildResult:
    out: Path
    version: str
    tables: list[TableInfo]
    absent: dict[str, str]
    issues: list[str]
    changes: list[str]
    provenance: dict[str, Any]
    seconds: float


def parse_build_source(text: str) -> DataSource:
    """`hub` / `hub:REV` (the upstream repo at a commit, resolved now), else a folder or hf:// location."""
    if text == "hub" or text.startswith("hub:"):
        from rolebench.data.hub import resolve_revision

        revision = text.partition(":")[2] or UPSTREAM_REVISION
        return DataSource("hub", UPSTREAM_REPO, resolve_revision(UPSTREAM_REPO, revision))
    if not text.startswith("hf://") and not Path(text).expanduser().is_dir():
        raise ConfigError(
            f"build source {text} is not a folder",
            where="SOURCE",
            fix="pass a folder in the Hub layout, hub[:REV], or hf://ORG/NAME@VERSION",
        )
    return resolve_source(text)


def provenance(source: DataSource) -> dict[str, Any]:
    """Which upstream repo and revision the rows came from, and how we know, with every file's sha256."""
    described = source.describe()
    files = described["files"]
    if source.kind != "local":
        how = (
            "downloaded from the Hub at this commit"
            if source.kind == "hub"
            else f"rebuilt from the packaged dataset {described.get('dataset_version')}"
        )
        return {"repo": source.location, "revision": source.revision, "how": how, "files": files}
    local_manifest = Path(source.location) / MANIFEST_NAME
    candidates = []
    if local_manifest.is_file():
        candidates.append((read_manifest(local_manifest), f"local copy described by its {MANIFEST_NAME}"))
    known = packaged_manifest(UPSTREAM_REVISION)
    if known is not None:
        candidates.append(
            (
                known,
                "local copy identified by the sha256 of every file read, against "
                f"rolebench's manifest of {known.repo}@{known.revision}",
            )
        )
    for manifest, how in candidates:
        if manifest.kind != "upstream":
            continue
        known_files = {p: d for p, d in files.items() if p in manifest.files}
        local_only = {p: d for p, d in files.items() if p not in manifest.files}
        if all(manifest.files[p].get("sha256") == d for p, d in known_files.items()) and all(
            manifest.known_upstream(p) for p in local_only
        ):
            origin = {"repo": manifest.repo, "revision": manifest.revision, "how": how, "files": known_files}
            if local_only:  # upstream files the manifest has no checksum of: this copy's bytes, not the Hub's
                origin["unverified"] = local_only
            return origin
    return {
        "repo": UPSTREAM_REPO,
        "revision": "unknown",
        "how": "a local folder whose files match no known revision",
        "files": files,
    }


def _ordered(tables: dict[tuple[str, str], list[Row]]) -> list[tuple[tuple[str, str], list[Row]]]:
    order = {name: i for i, name in enumerate(CONFIG_NAMES)}
    return sorted(tables.items(), key=lambda kv: (order[kv[0][0]], HF_SPLITS.index(kv[0][1])))


def write_shards(rows: list[Row], config: str, split: str, root: Path, max_bytes: int) -> list[str]:
    """Write rows as N Parquet shards of at most ~max_bytes (Arrow size) each; returns their relpaths."""
    pa, pq = import_pyarrow()
    schema = qa_schema() if config in QA_CONFIGS else profile_schema()
    table = pa.Table.from_pylist(rows, schema=schema)
    count = max(1, min(len(rows), math.ceil(table.nbytes / max_bytes)))
    per_shard = math.ceil(len(rows) / count) if rows else 0
    relpaths = []
    for index in range(count):
        relpath = shard_path(config, split, index, count)
        (root / relpath).parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(
            table.slice(index * per_shard, per_shard),
            root / relpath,
            compression="zstd",
            row_group_size=10_000,
        )
        relpaths.append(relpath)
    return relpaths


def table_info(config: str, split: str, rows: list[Row], files: list[str]) -> TableInfo:
    info = TableInfo(config, split, len(rows), files, roles=len({r["role"] for r in rows}))
    if config in QA_CONFIGS:
        for row in rows:
            info.kinds[row["task_kind"]] = info.kinds.get(row["task_kind"], 0) + 1
        info.baseline = sum(r["rolegpt_baseline"] is not None for r in rows)
        info.raw = sum(r["raw_answer"] is not None for r in rows)
    return info


def _write_all(collected: Collected, staging: Path, options: BuildOptions) -> list[TableInfo]:
    from tqdm import tqdm

    infos = []
    for (config, split), rows in tqdm(
        _ordered(collected.tables), desc="writing parquet", unit="table", disable=not options.progress
    ):
        files = write_shards(rows, config, split, staging, options.max_shard_bytes)
        infos.append(table_info(config, split, rows, files))
    return infos


def _check_out(out: Path) -> None:
    """DIR may be new, empty, or a previous build (replaced whole); anything else is not ours to delete."""
    if out.is_file():
        raise ConfigError(f"{out} is a file", where="--out", fix="choose a folder for the dataset")
    if out.is_dir() and any(out.iterdir()):
        marker = out / MANIFEST_NAME
        if not marker.is_file() or read_manifest(marker).kind != "build":
            raise ConfigError(
                f"{out} is not empty and is not a previous rolebench build",
                where="--out",
                fix="choose a new or empty folder",
            )


def _finalize(staging: Path, out: Path) -> None:
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(staging, 0o777 & ~mask)  # mkdtemp made it private
    if out.exists():
        trash = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        os.replace(out, trash / out.name)
        os.replace(staging, out)
        shutil.rmtree(trash, ignore_errors=True)
    else:
        os.replace(staging, out)


def build_dataset(source: DataSource, options: BuildOptions) -> BuildResult:
    """Build the dataset from `source` into `options.out` (see the module docstring)."""
    started = time.perf_counter()
    out = options.out.expanduser().resolve()
    _check_out(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    collected = collect(source, clean=options.clean)
    collected.issues += card_lines(audit_source(source).values())
    if not collected.tables:
        raise ConfigError(
            "the source has none of the RoleBench files",
            where=source.describe_location(),
            fix="point SOURCE at a folder in the Hub layout, or use hub[:REV]",
        )
    version = CLEAN_VERSION if options.clean else FAITHFUL_VERSION
    changes = clean_rows(collected.tables) if options.clean else []
    origin = provenance(source)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    try:
        infos = _write_all(collected, staging, options)
        card = render_card(
            version=version,
            tables=infos,
            absent=collected.absent,
            issues=collected.issues,
            changes=changes,
            provenance=origin,
            hub_repo=options.hub_repo,
        )
        (staging / CARD_NAME).write_text(card, encoding="utf-8")
        manifest = Manifest(
            kind="build",
            files=scan(staging),
            repo=origin["repo"],
            revision=origin["revision"],
            extra={
                "version": version,
                "tables": [i.to_json() for i in infos],
                "missing_source_files": collected.absent,
                "source": origin,
                "hub_repo": options.hub_repo,
            },
        )
        write_manifest(staging / MANIFEST_NAME, manifest)
        _finalize(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return BuildResult(
        out,
        version,
        infos,
        collected.absent,
        collected.issues,
        changes,
        origin,
        time.perf_counter() - started,
    )
