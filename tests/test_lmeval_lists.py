"""lm-eval's metric lists are written from the one list of metrics (`rolebench.scoring.metrics.METRICS`):
the task files in the repository say what it says, and a new metric reaches its kind's list and the
groups' list with no hand edit."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml

from rolebench.scoring.lmeval_lists import GROUP_FILE, KIND_FILES, lagging_files, main, metric_list_files
from rolebench.scoring.metrics import CUS, METRICS
from rolebench.tasks.catalogue import catalogue


def test_the_task_files_list_the_metrics_of_the_one_list():
    assert lagging_files() == []
    assert main(["--check"]) == 0
    lists = {name: yaml.safe_load(text) for name, text in metric_list_files().items()}
    for kind, name in KIND_FILES.items():
        assert [m["metric"] for m in lists[name]["metric_list"]] == [m.key for m in METRICS if m.kind == kind]
    assert [m["metric"] for m in lists[GROUP_FILE]["aggregate_metric_list"]] == [m.key for m in METRICS]


def test_a_new_metric_reaches_its_kinds_list_and_the_groups(tmp_path: Path):
    new = dataclasses.replace(CUS, key="bleu", label="BLEU")
    lists = {name: yaml.safe_load(text) for name, text in metric_list_files((*METRICS, new)).items()}
    assert lists[KIND_FILES["general"]]["metric_list"][-1] == {
        "metric": "bleu",
        "aggregation": "mean",
        "higher_is_better": True,
    }
    assert "bleu" not in {m["metric"] for m in lists[KIND_FILES["role_specific"]]["metric_list"]}
    assert lists[GROUP_FILE]["aggregate_metric_list"][-1]["metric"] == "bleu"


def test_a_lagging_file_is_named_and_written_again(tmp_path: Path, capsys):
    for name, text in metric_list_files().items():
        (tmp_path / name).write_text(text, "utf-8")
    (tmp_path / GROUP_FILE).write_text("aggregate_metric_list: []\n", "utf-8")
    assert main(["--check", "--folder", str(tmp_path)]) == 1
    assert f"{tmp_path / GROUP_FILE}: does not list the metrics" in capsys.readouterr().err
    assert main(["--folder", str(tmp_path)]) == 0
    assert lagging_files(tmp_path) == []


def test_every_task_file_includes_the_list_of_its_splits_kind():
    """A task that included another kind's template would report that kind's metrics under lm-eval."""
    tasks, _ = catalogue()
    assert len(tasks) >= 8
    for spec in tasks.values():
        assert yaml.safe_load(spec.path.read_text("utf-8"))["include"] == KIND_FILES[spec.split.kind], (
            spec.name
        )
