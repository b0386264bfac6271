"""RoleBench and the Hugging Face Hub: resolve revisions, download the upstream files, push a versioned build.

Everything goes through `huggingface_hub` (`HfApi`, `snapshot_download`, `hf_hub_download`), so
`HF_ENDPOINT`, `HF_TOKEN`, `HF_HUB_OFFLINE` and the Hub cache behave as everywhere else. Downloads are
resumable (re-running fetches only what is missing or incomplete) and always pinned to a full commit
sha, which is recorded with the sha256 of every file in `DIR/checksums.json`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model_adapters.network import offline
from rolebench.data.hub_errors import hub_errors
from rolebench.data.layout import MANIFEST_NAME, upstream_patterns
from rolebench.data.manifest import Manifest, packaged_manifest, read_manifest, scan, verify, write_manifest
from rolebench.data.source import UPSTREAM_REPO
from rolebench.errors import ConfigError, DataError

REPO_TYPE = "dataset"
LOCAL_BUILD = "give --data-dir a local build folder (`rolebench data build`) instead"


def _api() -> Any:
    from huggingface_hub import HfApi

    return HfApi()  # a fresh client: reads the endpoint and token configured now


def resolve_revision(repo: str, revision: str | None) -> str:
    """The full commit sha of `revision` (branch, tag or sha; default: the default branch) of a dataset."""
    offline()  # no Hub: refused at once, not after a minute of retries
    with hub_errors(f"resolve revision {revision or 'main'!r}", f"hf://datasets/{repo}"):
        info = _api().dataset_info(repo, revision=revision)
    if not info.sha:
        raise DataError("the Hub returned no commit sha", where=f"hf://datasets/{repo}@{revision}")
    return str(info.sha)


def fetch_file(repo: str, relpath: str, commit: str) -> Path:
    """One file of a dataset repo at a commit (or branch or tag), through the huggingface_hub cache; without
    a network (probed once), from the cache alone, and a file not there is refused at once."""
    from huggingface_hub import hf_hub_download

    offline()
    with hub_errors(f"download {relpath}", f"hf://datasets/{repo}@{commit}", local_copy=LOCAL_BUILD):
        return Path(hf_hub_download(repo, relpath, repo_type=REPO_TYPE, revision=commit))


@dataclass
class DownloadResult:
    repo: str
    revision: str  # full commit sha
    folder: Path
    manifest: Manifest


def download_upstream(to: Path, *, repo: str = UPSTREAM_REPO, revision: str | None = None) -> DownloadResult:
    """Fetch the files rolebench uses at a pinned revision into `to` (resumable); write to/checksums.json."""
    from huggingface_hub import snapshot_download

    commit = resolve_revision(repo, revision)
    previous = read_manifest(to / MANIFEST_NAME) if (to / MANIFEST_NAME).is_file() else None
    if previous is not None and (previous.repo, previous.revision) != (repo, commit):
        raise ConfigError(
            f"{to} holds another download ({previous.repo}@{previous.revision})",
            where="--to",
            fix="download each revision into its own folder",
        )
    patterns = upstream_patterns()
    with hub_errors("download the files", f"hf://datasets/{repo}@{commit}"):
        snapshot_download(
            repo, repo_type=REPO_TYPE, revision=commit, local_dir=str(to), allow_patterns=patterns
        )
    manifest = Manifest(
        kind="upstream",
        files=scan(to, include=patterns),
        repo=repo,
        revision=commit,
        extra={"requested_revision": revision, "patterns": patterns},
    )
    known = packaged_manifest(commit)
    if known is not None:
        report = verify(to, known, partial=True)
        if report.changed:
            raise DataError(
                f"downloaded files differ from rolebench's known checksums of {repo}@{known.revision}: "
                + ", ".join(report.changed),
                where=str(to),
                fix="delete those files and download again; report it if it persists",
            )
    write_manifest(to / MANIFEST_NAME, manifest)
    return DownloadResult(repo, commit, to, manifest)


@dataclass
class PushResult:
    repo: str
    version: str
    commit: str
    url: str


def _check_version(folder: Path, version: str | None) -> tuple[Manifest, str]:
    manifest_path = folder / MANIFEST_NAME
    if not manifest_path.is_file():
        raise ConfigError(
            f"{folder} is not a rolebench dataset build (no {MANIFEST_NAME})",
            fix="build it first: rolebench data build SOURCE --out DIR",
        )
    manifest = read_manifest(manifest_path)
    built = manifest.extra.get("version")
    if manifest.kind != "build" or not built:
        raise ConfigError(f"{manifest_path} is not the manifest of a dataset build", fix="rebuild the folder")
    if version is not None and version != built:
        raise ConfigError(
            f"--version {version} does not match the build's version {built}",
            where=str(folder),
            fix=f"push it as {built}, or rebuild (v1.0 = faithful, v1.1 = --clean)",
        )
    report = verify(folder, manifest)
    if not report.ok:
        raise DataError(
            f"{folder} does not match its {MANIFEST_NAME}: " + "; ".join(report.lines()[1:]),
            fix="rebuild the folder; never edit a build by hand",
        )
    return manifest, built


def _check_repo(manifest: Manifest, repo: str) -> None:
    planned = manifest.extra.get("hub_repo")
    if planned and planned != repo:
        raise ConfigError(
            f"this build's card names {planned}, not {repo}",
            where="--repo",
            fix=f"push it to {planned}, or rebuild with --repo {repo}",
        )


def _tag_exists(api: Any, repo: str, tag: str) -> bool:
    from huggingface_hub.errors import RevisionNotFoundError

    try:
        api.dataset_info(repo, revision=tag)
    except RevisionNotFoundError:
        return False
    return True


def push_dataset(folder: Path, repo: str, *, version: str | None = None, private: bool = False) -> PushResult:
    """Upload a verified build to a dataset repo and tag the commit with its version (never moved)."""
    if repo.count("/") != 1:
        raise ConfigError(f"bad repo id {repo!r}", where="--repo", fix="write ORG/NAME")
    manifest, version = _check_version(folder, version)
    _check_repo(manifest, repo)
    api = _api()
    where = f"hf://datasets/{repo}"
    with hub_errors(f"push {version}", where):
        api.create_repo(repo, repo_type=REPO_TYPE, exist_ok=True, private=private)
        if _tag_exists(api, repo, version):
            raise ConfigError(
                f"version {version} is already tagged in {repo}",
                where=where,
                fix="versions are immutable: build a new version (e.g. --clean for v1.1)",
            )
        commit = api.upload_folder(
            repo_id=repo,
            folder_path=str(folder),
            repo_type=REPO_TYPE,
            commit_message=f"RoleBench {version}",
            delete_patterns=["*.parquet"],
        )
        api.create_tag(
            repo, tag=version, revision=commit.oid, repo_type=REPO_TYPE, tag_message=f"RoleBench {version}"
        )
    return PushResult(repo, version, str(commit.oid), f"{api.endpoint}/datasets/{repo}/tree/{version}")
