"""Checksum manifests: what a RoleBench folder (an upstream copy or a build) holds, byte for byte.

A manifest is a JSON file:

```json
{"format": 1, "kind": "upstream" | "build", "repo": "ZenMoore/RoleBench", "revision": "<commit>",
 "files": {"rolebench-zh/general/test.jsonl": {"sha256": "...", "size": 1048887}},
 "absent": {"instructions-zh/*": "why these known upstream files have no checksum here"},
 "ignore": ["SOURCES.md"], "...": "anything else the writer records (version, rows, provenance)"}
```

`files` must match exactly; `absent` names upstream files (paths or fnmatch patterns) known to exist
but not checksummed (a partial copy: they are reported, never an error); `ignore` names local files
that are not data. `rolebench/data/manifests/upstream-<rev>.json` ships the manifest of the partial copy
in `shared/rolebench`, so a local copy can be verified with no download.
"""

from __future__ import annotations

import fnmatch
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model_adapters.files import file_sha256
from rolebench.data.layout import MANIFEST_NAME
from rolebench.errors import DataError
from rolebench.storage.files import write_json_atomic

FORMAT = 1
PACKAGED_DIR = Path(__file__).parent / "manifests"
ALWAYS_IGNORED = (".cache/*", MANIFEST_NAME)  # huggingface_hub's local_dir metadata; the manifest itself
_KNOWN_KEYS = {"format", "kind", "repo", "revision", "files", "absent", "ignore"}


@dataclass
class Manifest:
    """Checksums of a folder's files, plus what is known to be absent and what to ignore."""

    kind: str
    files: dict[str, dict[str, Any]]
    repo: str | None = None
    revision: str | None = None
    absent: dict[str, str] = field(default_factory=dict)
    ignore: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "kind": self.kind,
            "repo": self.repo,
            "revision": self.revision,
            **self.extra,
            "files": dict(sorted(self.files.items())),
            "absent": dict(sorted(self.absent.items())),
            "ignore": sorted(self.ignore),
        }

    @classmethod
    def from_json(cls, data: Any, where: str) -> Manifest:
        files = data.get("files") if isinstance(data, dict) else None
        if not isinstance(files, dict) or not all(
            isinstance(v, dict) and isinstance(v.get("sha256"), str) for v in files.values()
        ):
            raise DataError(
                "not a rolebench checksum manifest (needs files: {path: {sha256, size}})",
                where=where,
                fix="pass a checksums.json written by rolebench data download/build",
            )
        return cls(
            kind=str(data.get("kind", "upstream")),
            files=files,
            repo=data.get("repo"),
            revision=data.get("revision"),
            absent=dict(data.get("absent") or {}),
            ignore=list(data.get("ignore") or []),
            extra={k: v for k, v in data.items() if k not in _KNOWN_KEYS},
        )

    def known_upstream(self, relpath: str) -> bool:
        """Whether `relpath` is an upstream file this manifest knows of but holds no checksum for."""
        return relpath not in self.files and _matches(relpath, list(self.absent))

    def describe(self) -> str:
        origin = f"{self.repo or 'a local folder'}" + (f"@{self.revision}" if self.revision else "")
        if self.kind == "build":
            version = self.extra.get("version")
            return f"the manifest of RoleBench build {version} (from {origin}, {len(self.files)} files)"
        if self.kind == "upstream":
            return f"rolebench's checksums of {len(self.files)} files of {origin}"
        return f"the {self.kind} manifest of {origin} ({len(self.files)} files)"


def read_manifest(path: Path) -> Manifest:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"manifest {path} does not exist", fix="check the path given to --manifest") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"malformed JSON: {exc.msg}", where=str(path)) from None
    return Manifest.from_json(data, str(path))


def write_manifest(path: Path, manifest: Manifest) -> None:
    write_json_atomic(path, manifest.to_json())


def _matches(relpath: str, patterns: list[str] | tuple[str, ...]) -> bool:
    return any(relpath == p or fnmatch.fnmatchcase(relpath, p) for p in patterns)


def list_files(root: Path, ignore: list[str] | tuple[str, ...] = ()) -> list[str]:
    """Relative POSIX paths of the files under `root`, sorted, minus the ignored ones."""
    found = []
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for name in names:
            relpath = (Path(folder) / name).relative_to(root).as_posix()
            if not _matches(relpath, (*ALWAYS_IGNORED, *ignore)):
                found.append(relpath)
    return sorted(found)


def checksum_files(root: Path, relpaths: list[str]) -> dict[str, dict[str, Any]]:
    return {r: {"sha256": file_sha256(root / r), "size": (root / r).stat().st_size} for r in relpaths}


def scan(
    root: Path, *, include: list[str] | None = None, ignore: list[str] | tuple[str, ...] = ()
) -> dict[str, dict[str, Any]]:
    """Checksums of the files under `root` (only those matching `include` patterns, when given)."""
    relpaths = [r for r in list_files(root, ignore) if include is None or _matches(r, include)]
    return checksum_files(root, relpaths)


def packaged_manifest(revision: str | None) -> Manifest | None:
    """The manifest shipped with rolebench for an upstream revision (full or short sha), if any."""
    if not revision:
        return None
    for path in sorted(PACKAGED_DIR.glob("upstream-*.json")):
        manifest = read_manifest(path)
        known = manifest.revision or ""
        if known and (revision.startswith(known) or known.startswith(revision)):
            return manifest
    return None


@dataclass
class VerifyReport:
    """The outcome of comparing a folder with a manifest."""

    checked: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    unverified: list[str] = field(
        default_factory=list
    )  # present, known upstream, no checksum in the manifest
    known_absent: dict[str, str] = field(default_factory=dict)  # absent, and the manifest says so
    partial: bool = False

    @property
    def ok(self) -> bool:
        return not (self.changed or self.extra or (self.missing and not self.partial))

    def lines(self) -> list[str]:
        out = [f"ok        {len(self.checked) - len(self.changed)} of {len(self.checked)} files match"]
        out += [f"CHANGED   {p}" for p in self.changed]
        label = "not here " if self.partial else "MISSING  "
        out += [f"{label} {p}" for p in self.missing]
        out += [f"EXTRA     {p}" for p in self.extra]
        out += [f"unverified {p} (known upstream file, no checksum in the manifest)" for p in self.unverified]
        out += [f"absent    {p} ({note})" for p, note in self.known_absent.items()]
        return out


def verify(root: Path, manifest: Manifest, *, partial: bool = False) -> VerifyReport:
    """Compare `root` with `manifest`: changed, missing and extra files, and the known-absent ones."""
    if not root.is_dir():
        raise DataError(f"{root} is not a folder", fix="pass the folder to verify")
    report = VerifyReport(partial=partial)
    present = set(list_files(root, manifest.ignore))
    for relpath, entry in sorted(manifest.files.items()):
        if relpath not in present:
            report.missing.append(relpath)
            continue
        report.checked.append(relpath)
        size = entry.get("size")
        path = root / relpath
        if (size is not None and path.stat().st_size != size) or file_sha256(path) != entry["sha256"]:
            report.changed.append(relpath)
    for relpath in sorted(present - set(manifest.files)):
        (report.unverified if manifest.known_upstream(relpath) else report.extra).append(relpath)
    for pattern, note in manifest.absent.items():
        if not any(_matches(p, [pattern]) for p in present):
            report.known_absent[pattern] = note
    return report
