"""A run folder holds one run: reruns with other settings are refused, more tasks are added, a damaged
results.json is rebuilt, an empty run fails (`rolebench demo`: tests/test_demo.py).

Models: the data-only `baseline:rolegpt` (its answers are the released RoleGPT answers), on the packaged
demo and on the real RoleBench files (those tests skip without them).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from rolebench.cli.main import main
from rolebench.run.folder import read_results, write_results

BASE = ["evaluate", "--model", "baseline:rolegpt", "--no-progress"]
VALUES = ("n", "n_generated", "cus", "raw", "spe", "cus_ci", "spe_ci", "per_role", "rolebench")


def evaluate(capsys: pytest.CaptureFixture[str], output: Path, *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main([*BASE, "--output", str(output), *args])
    return code, capsys.readouterr().err.strip()


def values(output: Path) -> dict[str, dict[str, Any]]:
    """Each task's numbers (what a rerun must give again)."""
    results = read_results(output).results
    return {task: {k: r.model_dump().get(k) for k in VALUES} for task, r in results.items()}


def stored_answers(output: Path) -> int:
    with sqlite3.connect(output / "generations.sqlite") as db:
        return int(db.execute("SELECT COUNT(*) FROM generations").fetchone()[0])


def samples_files(output: Path) -> set[str]:
    return {p.stem for p in (output / "samples").glob("*.jsonl")}


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--repetition-penalty", "1.15"], "--repetition-penalty 1.0 there, 1.15 now"),
        (["--temperature", "0.7"], "--temperature 0.0 there, 0.7 now"),
        (["--limit-seed", "3"], "--limit-mode/--limit-seed stratified/0 there, stratified/3 now"),
        (["--protocol", "rolebench"], "--protocol rolellm there, rolebench now"),
        (["--max-new-tokens", "64"], "--max-new-tokens (rolebench_demo_specific) 160 there, 64 now"),
        (["--bootstrap", "10"], "--bootstrap 1000 there, 10 now"),
    ],
)
def test_a_rerun_with_other_settings_is_refused_naming_what_differs(tmp_path, capsys, args, named):
    run, task = tmp_path / "run", ["--tasks", "rolebench_demo_specific", "--limit", "5"]
    assert evaluate(capsys, run, *task)[0] == 0
    before = (run / "results.json").read_bytes()
    code, err = evaluate(capsys, run, *task, *args)
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert named in err and "--overwrite" in err, err
    assert (run / "results.json").read_bytes() == before  # nothing replaced
    answers = stored_answers(run)
    assert evaluate(capsys, run, *task, *args, "--overwrite")[0] == 0
    assert stored_answers(run) >= answers  # --overwrite replaces the run; the stored answers stay
    assert evaluate(capsys, run, *task, *args)[0] == 0  # now the same run


def test_a_larger_limit_is_the_same_run_when_every_task_is_evaluated_again(tmp_path, capsys):
    run = tmp_path / "run"
    assert evaluate(capsys, run, "--tasks", "rolebench_demo", "--limit", "3")[0] == 0
    answers = stored_answers(run)
    code, err = evaluate(capsys, run, "--tasks", "rolebench_demo_general", "--limit", "6")
    assert code == 2 and "--limit 3 there, 6 now" in err  # rolebench_demo_specific would keep 3
    assert evaluate(capsys, run, "--tasks", "rolebench_demo", "--limit", "6")[0] == 0
    assert {r.n for r in read_results(run).results.values()} == {6}
    assert stored_answers(run) == answers + 2 * 3  # the 3 stored per task reused (an item with no answer too)


def test_a_rerun_with_other_data_is_refused(rolebench_data, tmp_path, capsys):
    copy = tmp_path / "data"
    zh = "rolebench-zh/role_specific"
    for relpath in (f"{zh}/test.jsonl", f"{zh}/rolegpt_baseline.jsonl", "profiles-zh/desc.json"):
        (copy / relpath).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(rolebench_data / relpath, copy / relpath)
    run, task = tmp_path / "run", ["--tasks", "rolebench_zh_specific", "--limit", "5"]
    assert evaluate(capsys, run, *task, "--data-dir", str(copy))[0] == 0
    code, err = evaluate(capsys, run, *task)  # $ROLEBENCH_DATA: another folder
    assert code == 2 and f"data local {copy} there, local {rolebench_data.resolve()} now" in err, err
    desc = json.loads((copy / "profiles-zh/desc.json").read_text(encoding="utf-8"))
    desc = {role: text + "！" for role, text in desc.items()}  # the same folder, other role descriptions
    (copy / "profiles-zh/desc.json").write_text(json.dumps(desc, ensure_ascii=False), encoding="utf-8")
    code, err = evaluate(capsys, run, *task, "--data-dir", str(copy))
    assert code == 2 and "data file profiles-zh/desc.json changed" in err, err


def test_a_rerun_with_more_tasks_adds_them_and_keeps_the_others(tmp_path, capsys):
    run, direct = tmp_path / "run", tmp_path / "direct"
    assert evaluate(capsys, run, "--tasks", "rolebench_demo_general")[0] == 0
    first = values(run)
    assert evaluate(capsys, run, "--tasks", "rolebench_demo_specific")[0] == 0
    both = values(run)
    assert set(both) == {"rolebench_demo_general", "rolebench_demo_specific"} == samples_files(run)
    assert both["rolebench_demo_general"] == first["rolebench_demo_general"]
    answers = stored_answers(run)
    assert evaluate(capsys, run, "--tasks", "rolebench_demo")[0] == 0  # the group: nothing new to generate
    assert stored_answers(run) == answers
    assert evaluate(capsys, direct, "--tasks", "rolebench_demo")[0] == 0
    assert values(run) == values(direct)  # the same numbers as one run of both tasks
    results = read_results(run)
    assert set(results.groups) == {"rolebench_demo"} and set(results.config.tasks) == set(both)
    assert results.groups["rolebench_demo"].avg == read_results(direct).groups["rolebench_demo"].avg


def test_a_samples_file_results_json_does_not_list_is_added_or_goes(tmp_path, capsys):
    run = tmp_path / "run"
    assert evaluate(capsys, run, "--tasks", "rolebench_demo")[0] == 0
    expected = values(run)
    results = read_results(run)  # an interrupted write: the samples file is there, results.json lacks it
    del results.results["rolebench_demo_specific"]
    write_results(run, results)
    capsys.readouterr()
    assert main(["report", str(run)]) == 0
    assert "rolebench_demo_specific" in capsys.readouterr().err
    assert values(run) == expected
    stray = run / "samples" / "rolebench_zh_general.jsonl"  # left by a run results.json never listed
    shutil.copy(run / "samples" / "rolebench_demo_general.jsonl", stray)
    code, err = evaluate(capsys, run, "--tasks", "rolebench_demo_specific")
    assert code == 0 and "removed samples/rolebench_zh_general.jsonl" in err and not stray.exists()
    assert samples_files(run) == set(read_results(run).results) and values(run) == expected


def test_a_damaged_results_json_is_derived_again_by_any_command(tmp_path, capsys):
    run = tmp_path / "run"
    assert evaluate(capsys, run, "--tasks", "rolebench_demo")[0] == 0
    expected, answers = values(run), stored_answers(run)
    config = read_results(run).config
    text = (run / "results.json").read_text(encoding="utf-8")
    for command in (["report", str(run)], ["score", str(run)]):
        (run / "results.json").write_text(text[: len(text) // 2], encoding="utf-8")  # a truncated file
        capsys.readouterr()
        assert main(command) == 0
        assert "results.json was damaged" in capsys.readouterr().err
        rebuilt = read_results(run)
        assert values(run) == expected and set(rebuilt.groups) == {"rolebench_demo"}
        assert rebuilt.config.model == config.model and rebuilt.config.data == config.data
    (run / "results.json").write_text("{", encoding="utf-8")
    assert evaluate(capsys, run, "--tasks", "rolebench_demo_general")[0] == 0
    assert values(run) == expected and stored_answers(run) == answers  # every answer came from the store
    (run / "results.json").write_text("{", encoding="utf-8")  # and no run.json to say what the run was
    (run / "run.json").unlink()
    code, err = evaluate(capsys, run, "--tasks", "rolebench_demo")
    assert code == 2 and "damaged results file" in err and "--overwrite" in err, err
    assert evaluate(capsys, run, "--tasks", "rolebench_demo", "--overwrite")[0] == 0
    assert values(run) == expected and stored_answers(run) == answers


def test_an_empty_run_fails_naming_the_missing_file(rolebench_data, tmp_path, capsys):
    missing = "rolebench-eng/role-generalization/general/rolegpt_baseline.jsonl"
    if (rolebench_data / missing).is_file():
        pytest.skip(f"this data copy has {missing}")
    code, err = evaluate(capsys, tmp_path / "run", "--tasks", "rolebench_eng_role_general")
    assert code == 1 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert "baseline:rolegpt answered none of the 5000 samples" in err and missing in err
    assert "train.jsonl" not in err and not (tmp_path / "run").exists()
    assert "unset ROLEBENCH_DATA to read the Hub" in err and "--data-dir" not in err  # as the data came
    code, err = evaluate(
        capsys, tmp_path / "run", "--tasks", "rolebench_eng_role_general", "--data-dir", str(rolebench_data)
    )
    assert code == 1 and "run without --data-dir" in err


def test_a_missing_file_remedy_follows_where_the_data_came_from(tmp_path, capsys, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("ROLEBENCH_DATA", str(empty))
    code, err = evaluate(capsys, tmp_path / "run", "--tasks", "rolebench_zh_specific")
    assert code == 2 and "rolebench-zh/role_specific/test.jsonl not found" in err
    assert "unset ROLEBENCH_DATA to read the Hub" in err and "--data-dir" not in err
    monkeypatch.delenv("ROLEBENCH_DATA")
    code, err = evaluate(
        capsys, tmp_path / "run", "--tasks", "rolebench_zh_specific", "--data-dir", str(empty)
    )
    assert code == 2 and "or run without --data-dir to read the Hub" in err


def test_packaged_demo_tasks_and_real_tasks_share_a_run_and_its_data_record(rolebench_data, tmp_path, capsys):
    run = tmp_path / "run"
    assert evaluate(capsys, run, "--tasks", "rolebench_demo_specific")[0] == 0
    assert read_results(run).config.data["kind"] == "builtin-demo"
    assert evaluate(capsys, run, "--tasks", "rolebench_zh_specific")[0] == 0
    data = read_results(run).config.data
    assert data["kind"] == "local" and data["location"] == str(rolebench_data.resolve())
    assert "rolebench-zh/role_specific/test.jsonl" in data["files"]
    assert "rolebench-demo/role_specific/test.jsonl" in data["builtin"]["files"]
    assert evaluate(capsys, run, "--tasks", "rolebench_demo_specific")[0] == 0  # the same run again
    assert read_results(run).config.data == data


def test_a_damaged_run_json_is_written_again_and_results_json_still_guards_the_run(tmp_path, capsys):
    run = tmp_path / "run"
    assert evaluate(capsys, run, "--tasks", "rolebench_demo_specific")[0] == 0
    (run / "run.json").write_text("{not json", encoding="utf-8")
    code, err = evaluate(capsys, run, "--tasks", "rolebench_demo_specific", "--seed", "2")
    assert code == 2 and "--seed 0 there, 2 now" in err
    assert evaluate(capsys, run, "--tasks", "rolebench_demo_specific")[0] == 0
    assert json.loads((run / "run.json").read_text(encoding="utf-8"))["config"]["tasks"]


def test_a_lost_samples_file_is_rebuilt_from_the_store_or_refused_in_one_line(tmp_path, capsys):
    """`score` on a run whose samples file is gone: rebuilt from the generation store (no model loaded),
    the task kept; without the answers in the store, one line naming the file, and nothing dropped."""
    run = tmp_path / "run"
    assert evaluate(capsys, run, "--tasks", "rolebench_demo")[0] == 0
    expected = values(run)
    samples = run / "samples" / "rolebench_demo_specific.jsonl"
    samples.unlink()
    capsys.readouterr()
    assert main(["score", str(run)]) == 0
    err = capsys.readouterr().err
    assert "rebuilt samples/rolebench_demo_specific.jsonl" in err and samples.is_file()
    assert values(run) == expected
    samples.write_text(samples.read_text(encoding="utf-8")[:-40], encoding="utf-8")  # a damaged file
    assert main(["score", str(run)]) == 0 and values(run) == expected
    samples.unlink()
    (run / "generations.sqlite").unlink()
    before = (run / "results.json").read_bytes()
    for command in (["score", str(run)], ["report", str(run)]):
        capsys.readouterr()
        assert main(command) == 2
        err = capsys.readouterr().err.strip()
        assert "samples/rolebench_demo_specific.jsonl is missing or damaged and cannot be rebuilt" in err
        assert "answers are not in the store" in err and len(err.splitlines()) == 1
        assert (run / "results.json").read_bytes() == before  # the task is never silently dropped
    assert evaluate(capsys, run, "--tasks", "rolebench_demo")[0] == 0 and values(run) == expected


def test_score_of_a_run_interrupted_before_any_result_says_to_resume(tmp_path, capsys):
    run = tmp_path / "run"
    assert evaluate(capsys, run, "--tasks", "rolebench_demo")[0] == 0
    for path in (run / "samples").glob("*.jsonl"):
        path.unlink()
    data = json.loads((run / "run.json").read_text(encoding="utf-8"))
    (run / "run.json").write_text(json.dumps({**data, "finished": []}), encoding="utf-8")
    (run / "results.json").unlink()
    capsys.readouterr()
    assert main(["score", str(run)]) == 2
    err = capsys.readouterr().err
    assert "interrupted before any task finished" in err and "run the same `rolebench evaluate`" in err
    assert "shared/rolebench" not in err


@pytest.mark.parametrize("protocol", ["opencompass", "rolebench", None])
def test_score_of_an_intact_run_warns_of_no_damage(tmp_path, capsys, protocol):
    """Adding a protocol (or scoring again) rewrites the samples files: that is no interrupted write, and
    neither the CLI nor the Python API says there was one (issue 36 item 1)."""
    from rolebench import score

    run = tmp_path / "run"
    assert evaluate(capsys, run, "--tasks", "rolebench_demo", "--limit", "5")[0] == 0
    capsys.readouterr()
    assert main(["score", str(run), *(["--protocol", protocol] if protocol else [])]) == 0
    err = capsys.readouterr().err
    assert "did not match" not in err and "damaged" not in err and "interrupted" not in err, err
    held = read_results(run).config.scoring
    assert protocol is None or protocol in str(held)
    score(run, "opencompass")
    err = capsys.readouterr().err
    assert "did not match" not in err and "interrupted" not in err, err
