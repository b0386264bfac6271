"""Task YAMLs: the catalogue, group expansion, and clear errors for bad task files."""

from __future__ import annotations

from pathlib import Path

import pytest

from rolebench.errors import ConfigError
from rolebench.tasks.catalogue import catalogue, resolve

SPLIT_TASKS = {
    "rolebench_eng_instruct_general": "eng_instruct_general",
    "rolebench_eng_instruct_specific": "eng_instruct_specific",
    "rolebench_eng_role_general": "eng_role_general",
    "rolebench_eng_role_specific": "eng_role_specific",
    "rolebench_zh_general": "zh_general",
    "rolebench_zh_specific": "zh_specific",
}


def test_every_split_has_a_versioned_task():
    tasks, groups = catalogue()
    for name, split in SPLIT_TASKS.items():
        assert tasks[name].split.id == split
        assert tasks[name].version == 2.0
        assert tasks[name].max_new_tokens == (
            160 if split.startswith("eng") else 256 if split == "zh_general" else 320
        )
    assert set(groups) >= {
        "rolebench",
        "rolebench_eng_instruct",
        "rolebench_eng_role",
        "rolebench_zh",
        "rolebench_demo",
    }


def test_groups_expand_in_order_without_repeats():
    tasks, groups = resolve(["rolebench_zh", "rolebench_zh_general", "rolebench"])
    assert [t.name for t in tasks][:2] == ["rolebench_zh_general", "rolebench_zh_specific"]
    assert len(tasks) == 6 and len({t.name for t in tasks}) == 6
    assert {g.name for g in groups} == {
        "rolebench_zh",
        "rolebench",
        "rolebench_eng_instruct",
        "rolebench_eng_role",
    }


def test_unknown_task_suggests_a_close_name():
    with pytest.raises(ConfigError, match="did you mean 'rolebench_zh_general'"):
        resolve(["rolebench_zh_generel"])


def test_bad_yaml_names_file_and_line(tmp_path):
    (tmp_path / "broken.yaml").write_text("task: x\n  bad: [\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"broken\.yaml:\d+"):
        catalogue((tmp_path,))


def test_task_without_split_or_version_is_rejected(tmp_path):
    (tmp_path / "t.yaml").write_text("task: mine\nmetadata:\n  version: 2\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="dataset_kwargs.split"):
        catalogue((tmp_path,))


def test_extra_task_folder_with_include(tmp_path):
    (tmp_path / "_base.yaml").write_text("generation_kwargs:\n  max_gen_toks: 64\n", encoding="utf-8")
    (tmp_path / "mine.yaml").write_text(
        "include: _base.yaml\ntask: my_demo\n"
        "dataset_kwargs:\n  split: demo_general\nmetadata:\n  version: 3\n",
        encoding="utf-8",
    )
    tasks, _ = resolve(["my_demo"], (tmp_path,))
    assert tasks[0].split.id == "demo_general" and tasks[0].max_new_tokens == 64 and tasks[0].version == 3


def test_task_files_are_found_in_one_place_the_top_level_folder():
    from rolebench.tasks.catalogue import TASKS_DIR, default_task_dirs

    top_level = Path(__file__).resolve().parent.parent / "tasks"
    assert default_task_dirs() == [TASKS_DIR] and TASKS_DIR.resolve() == top_level.resolve()


@pytest.mark.parametrize("name", ["../../escape", "a/b", ".hidden", "x..y", "é" * 3, "a" * 129])
def test_an_unsafe_task_name_is_refused_naming_its_file_before_any_model_loads(name, tmp_path, capsys):
    from rolebench.cli.main import main

    task = tmp_path / "tasks" / "mine.yaml"
    task.parent.mkdir()
    task.write_text(
        f"task: {name!r}\ndataset_kwargs:\n  split: demo_general\nmetadata:\n  version: 1\n", encoding="utf-8"
    )
    with pytest.raises(ConfigError, match=f"unsafe task name .*{task.name}"):
        catalogue((task.parent,))
    # a model that cannot load: the refusal comes first, and nothing is written
    argv = ["evaluate", "--model", f"hf:{tmp_path / 'no-model'}", "--tasks", name, "--include-path"]
    capsys.readouterr()
    assert main([*argv, str(task.parent), "--output", str(tmp_path / "out"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"unsafe task name {name!r} ({task})" in err, err
    assert not (tmp_path / "out").exists()
