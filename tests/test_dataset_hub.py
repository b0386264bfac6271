"""Download, push, tag and read back through the real `huggingface_hub` client, against a local Hub stand-in.

`tests/hub_standin.py` serves the Hub endpoints on 127.0.0.1; the `hub` fixture points
huggingface_hub at it (its endpoint and offline flag are read at import, so the constants are patched)
and gives it a fresh cache. The upstream repo `ZenMoore/RoleBench` is seeded there with a copy of the
real Chinese files from the shared data folder, uploaded with `HfApi.upload_folder`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rolebench.cli.main import main
from rolebench.data.layout import MANIFEST_NAME
from rolebench.data.manifest import read_manifest
from rolebench.data.resolve import resolve_source
from rolebench.data.samples import load_samples
from rolebench.data.source import UPSTREAM_REPO, file_sha256
from rolebench.errors import DataError
from tests.hub_standin import HubStandIn

pytest.importorskip("pyarrow", reason="building the dataset needs pyarrow (rolebench[data])")
UPSTREAM_FILES = [
    "rolebench-zh/general/test.jsonl",
    "rolebench-zh/general/train.jsonl",
    "rolebench-zh/general/rolegpt_baseline.jsonl",
    "rolebench-zh/role_specific/test.jsonl",
    "rolebench-zh/role_specific/train.jsonl",
    "rolebench-zh/role_specific/rolegpt_baseline.jsonl",
    "profiles-zh/desc.json",
    "profiles-eng/desc.json",
]


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    from huggingface_hub import constants

    standin = HubStandIn()
    url = standin.start()
    monkeypatch.setattr(constants, "ENDPOINT", url)
    monkeypatch.setattr(
        constants, "HUGGINGFACE_CO_URL_TEMPLATE", url + "/{repo_id}/resolve/{revision}/{filename}"
    )
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))
    monkeypatch.setenv("HF_TOKEN", "hf_standin_token")
    yield standin
    standin.stop()
    # huggingface_hub's best-effort agent registry is the only call the stand-in may leave unanswered
    assert {path for _, path in standin.unhandled} <= {"/api/agent-harnesses"}, standin.unhandled


def seed_upstream(rolebench_data: Path, tmp_path: Path) -> str:
    """Upload the real zh files (plus files rolebench must not download) as ZenMoore/RoleBench; its commit."""
    from huggingface_hub import HfApi

    folder = tmp_path / "upstream"
    for relpath in UPSTREAM_FILES:
        (folder / relpath).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(rolebench_data / relpath, folder / relpath)
    (folder / "instructions-zh").mkdir()
    (folder / "instructions-zh/role-specific-李白.jsonl").write_text(
        '{"instruction": "问", "answer": "答"}\n', encoding="utf-8"
    )
    (folder / "README.md").write_text("---\nlicense: apache-2.0\n---\n# upstream card\n", encoding="utf-8")
    (folder / "assets").mkdir()
    (folder / "assets/picture.txt").write_text("not a file rolebench uses")
    api = HfApi()
    api.create_repo(UPSTREAM_REPO, repo_type="dataset", exist_ok=True)
    return api.upload_folder(repo_id=UPSTREAM_REPO, folder_path=str(folder), repo_type="dataset").oid


def test_download_pins_the_commit_writes_checksums_and_resumes(
    hub, rolebench_data: Path, tmp_path: Path
) -> None:
    commit = seed_upstream(rolebench_data, tmp_path)
    target = tmp_path / "download"
    assert main(["data", "download", "--revision", "main", "--to", str(target)]) == 0
    manifest = read_manifest(target / MANIFEST_NAME)
    assert manifest.revision == commit and len(commit) == 40
    assert manifest.extra["requested_revision"] == "main"
    assert sorted(manifest.files) == sorted([*UPSTREAM_FILES, "instructions-zh/role-specific-李白.jsonl"])
    for relpath in UPSTREAM_FILES:
        assert manifest.files[relpath]["sha256"] == file_sha256(rolebench_data / relpath)
    assert not (target / "README.md").exists() and not (target / "assets").exists()
    assert main(["data", "verify", str(target)]) == 0
    assert load_samples("zh_specific", resolve_source(target)) == load_samples(
        "zh_specific", resolve_source(rolebench_data)
    )
    fetched = len(hub.downloads())
    (target / "rolebench-zh/general/test.jsonl").unlink()
    assert main(["data", "download", "--revision", commit, "--to", str(target)]) == 0
    assert hub.downloads()[fetched:] == [
        f"/datasets/{UPSTREAM_REPO}/resolve/{commit}/rolebench-zh/general/test.jsonl"
    ]
    assert main(["data", "verify", str(target)]) == 0

    from huggingface_hub import HfApi

    HfApi().upload_file(
        path_or_fileobj=b"{}",
        path_in_repo="profiles-zh/scripts.json",
        repo_id=UPSTREAM_REPO,
        repo_type="dataset",
    )
    assert (
        main(["data", "download", "--revision", "main", "--to", str(target)]) == 2
    )  # one revision per folder
    assert main(["data", "download", "--revision", "main", "--to", str(tmp_path / "newer")]) == 0
    assert "profiles-zh/scripts.json" in read_manifest(tmp_path / "newer" / MANIFEST_NAME).files


def test_build_from_hub_push_tag_and_read_back(
    hub, rolebench_data: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    commit = seed_upstream(rolebench_data, tmp_path)
    out = tmp_path / "build"
    assert main(["data", "build", "hub:main", "--out", str(out), "--no-progress"]) == 0
    built = read_manifest(out / MANIFEST_NAME)
    assert (built.repo, built.revision) == (UPSTREAM_REPO, commit)
    card = (out / "README.md").read_text(encoding="utf-8")
    assert f"`{UPSTREAM_REPO}` at revision `{commit}` (downloaded from the Hub at this commit)" in card
    assert "`rolebench-eng/role-generalization/general/test.jsonl` | no general rows" in card

    assert main(["data", "push", str(out), "--repo", "rolebench-org/RoleBench"]) == 0
    repo = hub.repo("dataset", "rolebench-org/RoleBench")
    tagged = repo.tags["v1.0"]
    assert repo.commits[tagged].files[MANIFEST_NAME] == (out / MANIFEST_NAME).read_bytes()
    assert "tag v1.0" in capsys.readouterr().out

    packaged = resolve_source("hf://rolebench-org/RoleBench@v1.0")
    for split in ("zh_general", "zh_specific"):
        assert load_samples(split, packaged) == load_samples(split, resolve_source(rolebench_data))
    described = packaged.describe()
    assert (described["kind"], described["revision"], described["requested_revision"]) == (
        "packaged",
        tagged,
        "v1.0",
    )
    assert described["dataset_version"] == "v1.0" and described["upstream"]["revision"] == commit

    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)  # the tag resolves from the cache, offline
    offline = resolve_source("hf://datasets/rolebench-org/RoleBench@v1.0")
    assert offline.revision == tagged and len(load_samples("zh_specific", offline)) == 239
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)

    assert (
        main(["data", "push", str(out), "--repo", "rolebench-org/RoleBench"]) == 2
    )  # versions are immutable
    assert "already tagged" in capsys.readouterr().err
    assert hub.repo("dataset", "rolebench-org/RoleBench").tags == {"v1.0": tagged}


def test_pushed_dataset_loads_with_datasets(hub, rolebench_data: Path, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    from huggingface_hub import snapshot_download

    seed_upstream(rolebench_data, tmp_path)
    out = tmp_path / "build"
    pinned_absent = main(["data", "build", "hub", "--out", str(out), "--no-progress"])
    assert pinned_absent == 2  # the pinned a57ed54 is not in the stand-in
    build = [
        "data",
        "build",
        "hub:main",
        "--out",
        str(out),
        "--repo",
        "rolebench-org/RoleBench",
        "--no-progress",
    ]
    assert main(build) == 0
    card = (out / "README.md").read_text(encoding="utf-8")
    assert 'load_dataset("rolebench-org/RoleBench", "instruction_generalization_zh"' in card
    assert "--data-dir hf://rolebench-org/RoleBench@v1.0 ...`." in card
    assert main(["data", "push", str(out), "--repo", "someone/else"]) == 2  # the card names another repo
    assert main(["data", "push", str(out), "--repo", "rolebench-org/RoleBench", "--version", "v1.0"]) == 0
    local = snapshot_download(
        "rolebench-org/RoleBench", repo_type="dataset", revision="v1.0", local_dir=str(tmp_path / "snapshot")
    )
    test = datasets.load_dataset(
        local, "instruction_generalization_zh", split="test", cache_dir=str(tmp_path / "hf-cache")
    )
    assert len(test) == 1451 + 239


def test_hub_failures_are_one_line_errors(
    hub, rolebench_data: Path, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["data", "download", "--repo", "nobody/nothing", "--to", str(tmp_path / "x")]) == 2
    assert "repository not found" in capsys.readouterr().err
    seed_upstream(rolebench_data, tmp_path)
    assert main(["data", "download", "--revision", "no-such-branch", "--to", str(tmp_path / "x")]) == 2
    assert "revision not found" in capsys.readouterr().err
    with pytest.raises(DataError, match="no such file in the repository"):
        resolve_source(f"hf://{UPSTREAM_REPO}@main")  # the upstream repo is not a packaged build
    monkeypatch.delenv("HF_TOKEN")
    out = tmp_path / "build"
    assert main(["data", "build", str(rolebench_data), "--out", str(out), "--no-progress"]) == 0
    assert main(["data", "push", str(out), "--repo", "rolebench-org/RoleBench"]) == 2
    assert "HTTP 401" in capsys.readouterr().err and not hub.repo("dataset", "rolebench-org/RoleBench")


def test_standin_serves_model_repos_too(hub, tmp_path: Path) -> None:
    from huggingface_hub import HfApi, hf_hub_download

    api = HfApi()
    api.create_repo("org/model")
    api.upload_file(
        path_or_fileobj=b"---\nlicense: mit\n---\n", path_in_repo="README.md", repo_id="org/model"
    )
    assert Path(hf_hub_download("org/model", "README.md")).read_bytes() == b"---\nlicense: mit\n---\n"
    assert api.model_info("org/model").sha == hub.repo("model", "org/model").branches["main"]
