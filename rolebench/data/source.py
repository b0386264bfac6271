"""Where RoleBench files come from: a local folder in the Hub layout, or the Hub repo at a pinned revision.

Everything else asks a `DataSource` for a path relative to the dataset root (e.g.
`rolebench-zh/general/test.jsonl`), or for every file a split needs at once (`DataSource.paths`), and
never cares which kind it is; a demo split reads the packaged demo's own folder (`source_for`). The
upstream repo cannot be read with `datasets.load_dataset`, so Hub files are fetched one by one with
`huggingface_hub`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model_adapters.files import file_sha256
from model_adapters.network import offline
from rolebench.data.hub_errors import hub_errors
from rolebench.data.splits import DEMO_ROOT, SplitDef
from rolebench.errors import DataError, MissingDependency

UPSTREAM_REPO = "ZenMoore/RoleBench"
# main of ZenMoore/RoleBench when this harness was written (the copy the tests read is this commit).
# A full sha: the Hub does not resolve short commit hashes.
UPSTREAM_REVISION = "a57ed54f9613921e4a5f1b63601a558cd5acf971"
DATA_DIR_ENV = "ROLEBENCH_DATA"
LOCAL_COPY = (
    f"point --data-dir / {DATA_DIR_ENV} at a local copy in the Hub layout "
    "(`rolebench data download --to DIR` makes one where the Hub answers)"
)

_KINDS = {
    stat.S_IFDIR: "a folder",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


@dataclass
class DataSource:
    """A RoleBench root: `local` (a folder) or `hub` (repo + revision, files cached by huggingface_hub)."""

    kind: str
    location: str
    revision: str | None = None
    files: dict[str, str] = field(default_factory=dict)  # relpath -> sha256 of every file read
    chosen_by: str | None = None  # "--data-dir" or "$ROLEBENCH_DATA": how a command was told (remedies)
    _demo: DataSource | None = field(default=None, repr=False, compare=False)

    def demo(self) -> DataSource:
        """The packaged demo's own folder, read alongside this source by the demo tasks (one per source,
        so the files it records are those of this run only)."""
        if self._demo is None:
            self._demo = DataSource("local", str(DEMO_ROOT))
        return self._demo

    def require(self, relpath: str, purpose: str = "") -> Path:
        """Local path of a dataset file that must exist (a DataError saying how to get it otherwise)."""
        found = self.path(relpath, required=True, purpose=purpose)
        if found is None:  # pragma: no cover - path() raises for a required file
            raise DataError(f"RoleBench file {relpath} not found", where=self.describe_location())
        return found

    def path(self, relpath: str, *, required: bool = True, purpose: str = "") -> Path | None:
        """Local path of a dataset file; None (or a DataError when required) if it does not exist."""
        found = self._local(relpath) if self.kind == "local" else self._hub(relpath)
        if found is None:
            if required:
                raise DataError(
                    f"RoleBench file {relpath} not found{' (' + purpose + ')' if purpose else ''}",
                    where=self.describe_location(),
                    fix=self._how_to_get(relpath),
                )
            return None
        if relpath not in self.files:
            self.files[relpath] = file_sha256(found)
        return found

    def paths(
        self, required: Mapping[str, str], optional: Sequence[str]
    ) -> tuple[dict[str, Path], dict[str, Path | None]]:
        """Local paths of several dataset files, resolved in order: the `required` ones (relpath -> what
        for) as `require` does, then the `optional` ones (None: absent)."""
        found = {relpath: self.require(relpath, purpose) for relpath, purpose in required.items()}
        return found, {relpath: self.path(relpath, required=False) for relpath in optional}

    def describe_location(self) -> str:
        return self.location if self.kind == "local" else f"hf://datasets/{self.location}@{self.revision}"

    def describe(self) -> dict[str, Any]:
        """Provenance for results: kind, location, revision, and the checksum of every file read."""
        return {
            "kind": self.kind,
            "location": self.location,
            "revision": self.revision,
            "files": dict(sorted(self.files.items())),
        }

    def _local(self, relpath: str) -> Path | None:
        """The file at `relpath`; None when nothing is there. Anything else in its place (a folder, a
        FIFO, a device, a symlink loop or to nothing) is a DataError naming it: its type is checked
        without opening it, so a FIFO never blocks a read."""
        candidate = Path(self.location) / relpath
        try:
            mode = candidate.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            if not candidate.is_symlink():
                return None
            what = f"a symlink to {os.readlink(candidate)}, which does not exist"
        except OSError as exc:  # a symlink loop (ELOOP), no permission, ...
            what = f"not readable ({exc.strerror or type(exc).__name__})"
        else:
            if stat.S_ISREG(mode):
                return candidate
            what = f"{_KINDS.get(stat.S_IFMT(mode), 'something else')}, not a file"
        raise DataError(
            f"RoleBench file {relpath} is {what}",
            where=str(candidate),
            fix="put the file there, or remove what is in its place",
        )

    def _hub(self, relpath: str) -> Path | None:
        try:
            from huggingface_hub import hf_hub_download
            from huggingface_hub.errors import EntryNotFoundError, LocalEntryNotFoundError
        except ImportError as exc:  # pragma: no cover - huggingface_hub is a core dependency
            raise MissingDependency("reading RoleBench from the Hub", "huggingface_hub", "data") from exc
        offline()  # no Hub: the local cache only, and a missing file fails at once
        with hub_errors(f"read RoleBench file {relpath}", self.describe_location(), local_copy=LOCAL_COPY):
            try:
                return Path(
                    hf_hub_download(self.location, relpath, repo_type="dataset", revision=self.revision)
                )
            except EntryNotFoundError as exc:  # not in the repo: the caller says what it needed it for
                if isinstance(exc, LocalEntryNotFoundError):  # its subclass: not cached, no Hub
                    raise
                return None

    def _how_to_get(self, relpath: str) -> str:
        if self.kind == "local":
            return (
                f"download it from hf://datasets/{UPSTREAM_REPO} (rolebench data download --to "
                f"{self.location}) or {self.hub_remedy()}"
            )
        return f"the file is not in {self.location} at revision {self.revision}"

    def hub_remedy(self) -> str:
        """How to read the Hub instead of this local folder, as the user chose it."""
        if self.chosen_by == f"${DATA_DIR_ENV}":
            return f"unset {DATA_DIR_ENV} to read the Hub"
        if os.environ.get(DATA_DIR_ENV):
            return f"run without --data-dir and with {DATA_DIR_ENV} unset to read the Hub"
        return "run without --data-dir to read the Hub"


def source_for(split: SplitDef, source: DataSource) -> DataSource:
    """The packaged demo reads its own folder; every other split reads the chosen source."""
    return source.demo() if split.builtin else source
