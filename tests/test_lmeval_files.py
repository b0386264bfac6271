"""lm-eval's task files are written from the one definition of each benchmark and metric
(`rolebench.data.splits.BENCHMARKS`, `rolebench.scoring.metrics.METRICS`): the files in the repository say
what those say, and a new benchmark or metric reaches lm-eval with no hand edit."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml

from rolebench.data.splits import BENCHMARKS, Benchmark, SplitDef
from rolebench.scoring.lmeval_files import FOLDER, GROUP_FILE, KIND_FILES, lagging_files, main, task_files
from rolebench.scoring.metrics import CUS, METRICS
from rolebench.tasks.catalogue import TASKS_DIR, catalogue


def _parsed(*args) -> dict[str, dict]:
    return {name: yaml.safe_load(text) for name, text in task_files(*args).items()}


def test_the_task_files_say_what_the_definitions_say():
    assert FOLDER == TASKS_DIR / "rolebench"  # the folder the catalogue reads (scoring does not import tasks)
    assert lagging_files() == []
    assert main(["--check"]) == 0
    files = _parsed()
    for kind, name in KIND_FILES.items():
        assert [m["metric"] for m in files[name]["metric_list"]] == [m.key for m in METRICS if m.kind == kind]
    assert [m["metric"] for m in files[GROUP_FILE]["aggregate_metric_list"]] == [m.key for m in METRICS]


def test_the_catalogue_reads_each_split_as_its_definition_says():
    tasks, groups = catalogue()
    for benchmark in BENCHMARKS:
        assert groups[benchmark.group].members == tuple(f"rolebench_{s.id}" for s in benchmark.splits)
        for split in benchmark.splits:
            spec = tasks[f"rolebench_{split.id}"]
            assert (spec.split, spec.max_new_tokens, spec.version) == (
                split,
                split.max_new_tokens,
                benchmark.version,
            )
            assert spec.path.parent.resolve() == FOLDER.resolve()


def test_a_new_metric_reaches_its_kinds_list_and_the_groups():
    files = _parsed(BENCHMARKS, (*METRICS, dataclasses.replace(CUS, key="bleu", label="BLEU")))
    assert files[KIND_FILES["general"]]["metric_list"][-1] == {
        "metric": "bleu",
        "aggregation": "mean",
        "higher_is_better": True,
    }
    assert "bleu" not in {m["metric"] for m in files[KIND_FILES["role_specific"]]["metric_list"]}
    assert files[GROUP_FILE]["aggregate_metric_list"][-1]["metric"] == "bleu"


def test_a_new_benchmark_is_its_task_files_and_its_group(tmp_path: Path):
    split = SplitDef("xx_general", "en", "general", "xx/general", "profiles-xx/desc.json", max_new_tokens=99)
    new = Benchmark("rolebench_xx", "A new benchmark", (split,), version=3.0)
    files = _parsed((*BENCHMARKS, new), METRICS)
    assert files["rolebench_xx_general.yaml"] == {
        "include": KIND_FILES["general"],
        "task": "rolebench_xx_general",
        "dataset_kwargs": {"split": "xx_general"},
        "generation_kwargs": {"until": [], "max_gen_toks": 99, "do_sample": False},
        "metadata": {"version": 3.0},
    }
    assert files["rolebench_xx.yaml"] == {
        "include": GROUP_FILE,
        "group": "rolebench_xx",
        "task": ["rolebench_xx_general"],
        "metadata": {"version": 3.0},
    }


def test_a_lagging_file_is_named_and_written_again(tmp_path: Path, capsys):
    for name, text in task_files().items():
        (tmp_path / name).write_text(text, "utf-8")
    (tmp_path / GROUP_FILE).write_text("aggregate_metric_list: []\n", "utf-8")
    (tmp_path / "rolebench_zh_general.yaml").unlink()
    assert main(["--check", "--folder", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"{tmp_path / GROUP_FILE}: does not say what" in err and "rolebench_zh_general.yaml" in err
    assert main(["--folder", str(tmp_path)]) == 0
    assert lagging_files(tmp_path) == []
