"""`rolebench leaderboard publish`: the upload plan, model-index eval results, the model-card merge, a clear
refusal offline, and the real upload path against the Hub stand-in on 127.0.0.1 (tests/hub_standin.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from rolebench import evaluate
from rolebench.cli.main import main
from rolebench.errors import ConfigError, DataError
from rolebench.leaderboard import publish as hub_publish
from rolebench.leaderboard.boards import collect
from rolebench.leaderboard.build import build
from rolebench.run.folder import read_results, write_results
from tests.hub_standin import HubStandIn


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """A real demo run of baseline:rolegpt, and a copy of it renamed as a second model."""
    root = tmp_path_factory.mktemp("runs")
    evaluate(
        **dict(
            model="baseline:rolegpt", tasks=("rolebench_demo",), output=root / "demo-rolegpt", progress=False
        )
    )
    shutil.copytree(root / "demo-rolegpt", root / "other")
    other = read_results(root / "other")
    other.config.model = {**other.config.model, "name": "other model", "spec": "test:other"}
    write_results(root / "other", other)
    return root


def test_publish_plan_and_model_index(runs, tmp_path, capsys):
    out = tmp_path / "board"
    shutil.copytree(
        runs / "demo-rolegpt", out / "results" / "demo-rolegpt", ignore=shutil.ignore_patterns("*.sqlite")
    )
    build([out / "results"], out)
    files = hub_publish.files_to_publish(out)
    assert files == [
        "index.html",
        "leaderboard.csv",
        "leaderboard.json",
        "leaderboard.md",
        "leaderboard.tex",
        "results/demo-rolegpt/results.json",
    ]
    args = ["leaderboard", "publish", str(out), "--repo", "org/rolebench-board", "--dry-run"]
    index_file = tmp_path / "index.yaml"
    assert main([*args, "--model-card-repo", "org/model", "--model-index-out", str(index_file)]) == 0
    printed = capsys.readouterr().out
    assert "would upload 6 files to datasets/org/rolebench-board" in printed and "samples" not in printed
    assert "would merge 4 metrics into the model card of org/model" in printed
    index = yaml.safe_load(index_file.read_text(encoding="utf-8"))["model-index"]
    assert index[0]["name"] == "RoleGPT (released baseline answers)"
    results = index[0]["results"]
    assert (
        results[0]["dataset"]["type"] == "ZenMoore/RoleBench"
        and results[0]["dataset"]["config"] == "rolebench_demo"
    )
    values = {m["name"]: m["value"] for r in results for m in r["metrics"]}
    group = read_results(out / "results" / "demo-rolegpt").groups["rolebench_demo"]
    assert values["ROUGE-L avg"] == round(group.avg, 4)


def test_publish_refuses_clearly(runs, tmp_path, capsys):
    with pytest.raises(ConfigError, match="bad Hub repo id"):
        hub_publish.check_repo_id("not a repo", "--repo")
    with pytest.raises(DataError, match="not a built leaderboard folder"):
        hub_publish.files_to_publish(tmp_path)
    build([runs / "demo-rolegpt"], tmp_path)
    # HF_HUB_OFFLINE=1 in tests: the upload is refused before any connection, with one line.
    assert main(["leaderboard", "publish", str(tmp_path), "--repo", "org/board"]) == 2
    assert "Hub offline mode is on" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="2 models"):
        hub_publish.model_index(collect([runs]))  # several models: say which one
    with pytest.raises(ConfigError, match="no complete row"):
        hub_publish.model_index(collect([runs]), "nobody")


@pytest.fixture
def hub(monkeypatch, tmp_path):
    """The Hub stand-in on 127.0.0.1 (tests/hub_standin.py); offline mode lifted for it only."""
    from huggingface_hub import constants

    standin = HubStandIn()
    standin.start()
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))
    monkeypatch.setenv("HF_TOKEN", "hf_standin_token")
    yield standin
    standin.stop()


def test_publish_uploads_to_a_hub_standin(runs, hub, tmp_path, capsys):
    from huggingface_hub import HfApi

    out = tmp_path / "board"
    shutil.copytree(runs / "demo-rolegpt", out / "results" / "demo-rolegpt")  # samples + sqlite stay local
    build([out / "results"], out)
    HfApi(endpoint=hub.url, token="hf_standin_token").create_repo("org/model")
    args = ["leaderboard", "publish", str(out), "--repo", "org/board", "--endpoint", hub.url]
    assert main([*args, "--model-card-repo", "org/model"]) == 0
    assert "uploaded 6 files" in capsys.readouterr().out
    dataset = hub.repo("dataset", "org/board")
    files = dataset.commits[dataset.branches["main"]].files
    assert sorted(files) == sorted([".gitattributes", *hub_publish.files_to_publish(out)])
    assert files["leaderboard.md"] == (out / "leaderboard.md").read_bytes()
    assert (
        files["results/demo-rolegpt/results.json"] == (out / "results/demo-rolegpt/results.json").read_bytes()
    )
    model = hub.repo("model", "org/model")
    card = yaml.safe_load(model.commits[model.branches["main"]].files["README.md"].decode().split("---")[1])
    metrics = {m["name"]: m["value"] for m in card["model-index"][0]["results"][0]["metrics"]}
    group = read_results(out / "results/demo-rolegpt").groups["rolebench_demo"]
    assert metrics["ROUGE-L avg"] == round(group.avg, 4)
    assert main([*args[:3], "--repo", "bad repo"]) == 2


def test_model_card_merge_keeps_other_results(runs):
    boards = collect([runs], names={"other": "other model"})  # the name the user gives the run
    index = hub_publish.model_index(boards, "other model")
    existing = (
        "---\nlicense: mit\nmodel-index:\n- name: other model\n  results:\n"
        "  - task: {type: text-generation}\n"
        "    dataset: {name: other, type: other/data}\n"
        "    metrics: [{type: accuracy, value: 0.9}]\n---\n# Weak\n"
    )
    card = hub_publish.merge_model_card(existing, index)
    merged = hub_publish.merge_model_card(card, hub_publish.model_index(boards, "test:other"))
    assert merged == card and merged.endswith("# Weak\n") and "license: mit" in merged
    results = yaml.safe_load(merged.split("---")[1])["model-index"][0]["results"]
    assert [r["dataset"]["type"] for r in results] == ["other/data", "ZenMoore/RoleBench"]


def test_a_published_leaderboard_holds_the_results_its_tables_are_built_from(runs, hub, tmp_path, capsys):
    """`leaderboard build` copies every results.json into OUT/results/, `publish` uploads them with the
    tables, and the tables built again from the published folder alone are the published ones."""
    from huggingface_hub import snapshot_download

    out = tmp_path / "board"
    assert main(["leaderboard", "build", str(runs), "--out", str(out)]) == 0
    assert "(2 results.json, the tables' sources; 2 item_scores.json" in capsys.readouterr().out
    copies = sorted(p.relative_to(out).as_posix() for p in (out / "results").rglob("results.json"))
    assert copies == ["results/demo-rolegpt/results.json", "results/other/results.json"]
    assert not list((out / "results").rglob("*.jsonl"))  # results only: samples and stores stay in runs/
    assert len(list((out / "results").rglob("item_scores.json"))) == 2  # the ranked runs' per-item scores
    args = ["leaderboard", "publish", str(out), "--repo", "org/board", "--endpoint", hub.url]
    assert main(args) == 0 and "uploaded 9 files" in capsys.readouterr().out
    published = Path(
        snapshot_download(
            "org/board", repo_type="dataset", endpoint=hub.url, local_dir=tmp_path / "published"
        )
    )
    assert (published / "results/other/results.json").read_bytes() == (
        runs / "other/results.json"
    ).read_bytes()
    rebuilt = tmp_path / "rebuilt"
    assert main(["leaderboard", "build", str(published / "results"), "--out", str(rebuilt)]) == 0
    for name in ("leaderboard.md", "leaderboard.csv", "leaderboard.tex", "leaderboard.json", "index.html"):
        assert (rebuilt / name).read_bytes() == (published / name).read_bytes(), name
