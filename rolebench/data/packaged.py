"""A packaged RoleBench build as a data source: `hf://ORG/NAME@REV` on the Hub, or a local build folder.

`rolebench.data` asks every `DataSource` for upstream paths (`rolebench-zh/general/test.jsonl`,
`profiles-zh/desc.json`, ...). A `PackagedSource` answers by writing that file from the build's
Parquet rows in the upstream shape (`role`, `question`, `generated`, `type`; baseline and raw-answer
files from their columns), so the same `SPLITS`, loaders and joins give the same samples as the
upstream files did. Every shard is checked against the build's `checksums.json`, and `describe()`
records the resolved commit, the dataset version and the sha256 of every shard read.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model_adapters.files import file_sha256
from rolebench.data.layout import (
    HF_SPLITS,
    MANIFEST_NAME,
    PROFILE_CONFIGS,
    PROFILE_SPLIT,
    QA_CONFIGS,
    import_pyarrow,
)
from rolebench.data.manifest import Manifest, read_manifest
from rolebench.data.source import DataSource
from rolebench.errors import ConfigError, DataError
from rolebench.storage.files import write_json_atomic, write_jsonl_atomic

HF_PREFIX = "hf://"
Record = dict[str, Any]


def is_packaged_location(location: str) -> bool:
    """`hf://...`, or a folder holding a build's checksums.json."""
    if location.startswith(HF_PREFIX):
        return True
    marker = Path(location).expanduser() / MANIFEST_NAME
    try:
        return marker.is_file() and json.loads(marker.read_text(encoding="utf-8")).get("kind") == "build"
    except (OSError, json.JSONDecodeError, AttributeError):
        return False


def parse_hf_uri(uri: str, revision: str | None = None) -> tuple[str, str]:
    """`hf://[datasets/]ORG/NAME[@REV]` -> (repo, revision); `revision` applies when the URI has none."""
    rest = uri[len(HF_PREFIX) :].removeprefix("datasets/")
    repo, _, rev = rest.partition("@")
    if repo.count("/") != 1 or not all(repo.split("/")):
        raise ConfigError(
            f"bad packaged dataset location {uri!r}",
            where="--data-dir",
            fix="write hf://ORG/NAME@VERSION, e.g. hf://my-org/RoleBench@v1.0",
        )
    return repo, rev or revision or "main"


def _fetch_manifest(repo: str, revision: str) -> tuple[Path, str]:
    """checksums.json at `revision` and the commit it resolved to (huggingface_hub records the ref in its
    cache, so a branch or tag read once online also resolves offline)."""
    from rolebench.data.hub import fetch_file

    path = fetch_file(repo, MANIFEST_NAME, revision)
    commit = path.parent.name  # the cache stores files under snapshots/<commit>/
    if not re.fullmatch(r"[0-9a-f]{40}", commit):
        raise DataError(
            f"cannot tell which commit {revision!r} resolved to",
            where=f"hf://datasets/{repo}",
            fix="pass a full commit sha as the revision",
        )
    return path, commit


def open_packaged(location: str, revision: str | None = None) -> PackagedSource:
    """The packaged source at `location` (see `is_packaged_location`), its revision resolved to a commit."""
    if location.startswith(HF_PREFIX):
        repo, requested = parse_hf_uri(location, revision)
        path, commit = _fetch_manifest(repo, requested)
        source = PackagedSource("packaged", repo, commit, requested=requested)
    else:
        root = Path(location).expanduser().resolve()
        path = root / MANIFEST_NAME
        source = PackagedSource("packaged", str(root), None, root=root)
    source.manifest, source.manifest_sha256 = read_manifest(path), file_sha256(path)
    manifest = source.manifest
    if manifest.kind != "build" or not isinstance(manifest.extra.get("tables"), list):
        raise DataError(
            f"{MANIFEST_NAME} is not the manifest of a rolebench dataset build",
            where=source.describe_location(),
            fix="build one with rolebench data build",
        )
    return source


@dataclass(eq=False)
class PackagedSource(DataSource):
    """A rolebench build read back in the upstream layout (see the module docstring)."""

    requested: str | None = None  # the branch/tag asked for (the commit is `revision`)
    root: Path | None = None  # a local build folder; None for the Hub
    manifest: Manifest | None = field(default=None, repr=False)
    parquet: dict[str, str] = field(default_factory=dict)  # shard relpath -> sha256, for every shard read
    manifest_sha256: str | None = None  # the build's checksums.json: identifies a local build
    _workdir: Path | None = field(default=None, repr=False)
    _tables: dict[tuple[str, str], list[Record] | None] = field(default_factory=dict, repr=False)

    @property
    def version(self) -> str | None:
        return self.manifest.extra.get("version") if self.manifest else None

    def describe_location(self) -> str:
        if self.root is not None:
            return f"{self.root} (rolebench build {self.version})"
        return f"hf://datasets/{self.location}@{self.revision}"

    def describe(self) -> dict[str, Any]:
        described = super().describe()
        described.update(
            {
                "requested_revision": self.requested,
                "dataset_version": self.version,
                "upstream": {"repo": self.manifest.repo, "revision": self.manifest.revision}
                if self.manifest
                else None,
                "manifest_sha256": self.manifest_sha256,
                "parquet": dict(sorted(self.parquet.items())),
            }
        )
        return described

    def _how_to_get(self, relpath: str) -> str:
        return f"the packaged dataset has no rows for {relpath} (its card lists the missing source files)"

    def _hub(self, relpath: str) -> Path | None:
        """`DataSource.path` calls this for every non-local kind: the upstream file, written from the rows."""
        if self._workdir is None:
            self._workdir = Path(tempfile.mkdtemp(prefix="rolebench-packaged-"))
            weakref.finalize(self, shutil.rmtree, str(self._workdir), True)
        target = self._workdir / relpath
        if target.is_file():
            return target
        content = self._content(relpath)
        if content is None:
            return None
        if isinstance(content, dict):
            write_json_atomic(target, content)
        else:
            write_jsonl_atomic(target, content)
        return target

    def _content(self, relpath: str) -> list[Record] | dict[str, str] | None:
        for config in QA_CONFIGS.values():
            for split in config.split_defs():
                for hf_split in HF_SPLITS:
                    if relpath == split.file(f"{hf_split}.jsonl"):
                        return self._questions(config.name, hf_split, split.kind)
                if relpath == split.file("rolegpt_baseline.jsonl"):
                    return self._baselines(config.name, split.kind)
                if relpath == split.raw_answers:
                    return self._raw_answers(relpath)
        for profiles in PROFILE_CONFIGS.values():
            if relpath == profiles.file:
                rows = self.rows(profiles.name, PROFILE_SPLIT)
                return None if rows is None else {r["role"]: r["description"] for r in rows}
        return None

    def _questions(self, config: str, hf_split: str, kind: str) -> list[Record] | None:
        rows = [r for r in self.rows(config, hf_split) or [] if r["task_kind"] == kind]
        return [
            {
                "role": r["role"],
                "question": r["question"],
                "generated": r["references"],
                **({"type": r["type"]} if r["type"] else {}),
            }
            for r in rows
        ] or None

    def _baselines(self, config: str, kind: str) -> list[Record] | None:
        rows = [r for hf_split in HF_SPLITS for r in self.rows(config, hf_split) or []]
        return [
            {"role": r["role"], "question": r["question"], "generated": [r["rolegpt_baseline"]]}
            for r in rows
            if r["task_kind"] == kind and r["rolegpt_baseline"] is not None
        ] or None

    def _raw_answers(self, relpath: str) -> list[Record] | None:
        configs = [
            c.name for c in QA_CONFIGS.values() if any(s.raw_answers == relpath for s in c.split_defs())
        ]
        rows = [r for c in configs for hf_split in HF_SPLITS for r in self.rows(c, hf_split) or []]
        return [
            {"instruction": r["question"].strip(), "answer": r["raw_answer"]}
            for r in rows
            if r["raw_answer"] is not None
        ] or None

    def rows(self, config: str, split: str) -> list[Record] | None:
        """The rows of one (config, split), shards checked against checksums.json; None if absent."""
        if (config, split) not in self._tables:
            self._tables[(config, split)] = self._read_table(config, split)
        return self._tables[(config, split)]

    def _read_table(self, config: str, split: str) -> list[Record] | None:
        _, pq = import_pyarrow()
        if self.manifest is None:
            return None
        table = next(
            (t for t in self.manifest.extra["tables"] if (t["config"], t["split"]) == (config, split)), None
        )
        if table is None:
            return None
        rows: list[Record] = []
        for relpath in table["files"]:
            path = self._shard(relpath)
            digest = file_sha256(path)
            expected = self.manifest.files.get(relpath, {}).get("sha256")
            if digest != expected:
                raise DataError(
                    f"shard {relpath} does not match the build's {MANIFEST_NAME}",
                    where=self.describe_location(),
                    fix="re-download it or rebuild the dataset",
                )
            self.parquet[relpath] = digest
            rows.extend(pq.read_table(path).to_pylist())
        return rows

    def _shard(self, relpath: str) -> Path:
        if self.root is not None:
            return self.root / relpath
        from rolebench.data.hub import fetch_file

        return fetch_file(self.location, relpath, str(self.revision))
