"""One run definition: every setting that changes the numbers is one field of `RunDefinition`, and the run
guard, a sweep's "already done" test and results.json's config all read it.

Models: the data-only `baseline:rolegpt` on the packaged demo (no data, no model, no network needed).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from rolebench import evaluate
from rolebench.cli.main import main
from rolebench.run.definition import RunDefinition
from rolebench.run.folder import read_results

BASE = {"model": "baseline:rolegpt", "tasks": ("rolebench_demo",)}
# a value other than the default for every field (a new field fails `test_every_setting_...` until added)
OTHER = {
    "model": "baseline:question",
    "tasks": ("rolebench_demo_general",),
    "model_args": {"timeout": "5"},
    "data_dir": "/elsewhere",
    "revision": "main",
    "limit": 3,
    "limit_mode": "first",
    "limit_seed": 4,
    "protocol": "rolebench",
    "elicitation": "few-shot-dialogue",
    "shots": 2,
    "max_new_tokens": 64,
    "temperature": 0.5,
    "top_p": 0.9,
    "repetition_penalty": 1.15,
    "seed": 7,
    "bootstrap": 10,
    "include_path": ("/tasks",),
    "opponent": "baseline:question",
    "opponent_args": {"timeout": "5"},
    "turns": 3,
}
# fields that do not enter a run's identity by value: backend transport options (the model's identity
# leaves them out), task files (they enter by their version and file digest, given to `identity`)
NOT_BY_VALUE = {"model_args", "include_path", "opponent_args"}


def cli(capsys: pytest.CaptureFixture[str], output: Path, *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["evaluate", "--model", "baseline:rolegpt", "--no-progress", "--output", str(output), *args])
    return code, capsys.readouterr().err.strip()


def test_every_setting_that_changes_the_numbers_changes_the_runs_identity():
    assert set(OTHER) == set(RunDefinition.model_fields), "a new setting: give it another value in OTHER"
    tasks = {"rolebench_demo": {"version": 1}}
    limited = {**BASE, "limit": 3}  # the --limit sample's mode and seed matter only with a limit
    dialogue = {**BASE, "elicitation": "few-shot-dialogue"}  # shots matter only with a few-shot method
    sessions = {**BASE, "opponent": "openai:m@http://127.0.0.1:9/v1"}  # turns: only with an opponent
    for name, value in OTHER.items():
        base = limited if name in ("limit_mode", "limit_seed") else dialogue if name == "shots" else BASE
        base = sessions if name in ("turns", "opponent_args") else base
        before = RunDefinition.model_validate(base).checked()
        after = RunDefinition.model_validate({**base, name: value}).checked()
        assert after != before, name
        if name not in NOT_BY_VALUE | {"tasks"}:
            assert after.identity(tasks) != before.identity(tasks), name
    base = RunDefinition.model_validate(BASE).checked()
    unlimited = RunDefinition.model_validate({**BASE, "limit_seed": 4}).checked()
    assert unlimited.identity(tasks) == base.identity(tasks)  # no limit: no sample to seed
    no_sessions = RunDefinition.model_validate({**BASE, "turns": 3}).checked()
    assert no_sessions.identity(tasks) == base.identity(tasks)  # no opponent: no sessions' settings
    assert base.identity(tasks) != base.identity({"rolebench_demo": {"version": 2}})  # task files too


def test_a_sweep_with_another_elicitation_is_another_run_not_a_finished_one(tmp_path):
    """A zero-shot sweep, then the same sweep with `elicitation: few-shot-dialogue` into the same output:
    another key (so not "already finished") and its own run folder (as `rolebench evaluate` names it)."""
    from rolebench.commands._sweep_file import load_sweep

    def plan(**options: Any) -> Any:
        file = tmp_path / "sweep.yaml"
        file.write_text(
            yaml.safe_dump({"models": ["baseline:rolegpt"], "tasks": "rolebench_demo", **options})
        )
        [run] = load_sweep(file, tmp_path / "out").runs
        return run

    zero, dialogue, two = (
        plan(),
        plan(elicitation="few-shot-dialogue"),
        plan(elicitation="few-shot-dialogue", shots=2),
    )
    assert len({zero.key(), dialogue.key(), two.key()}) == 3
    assert len({zero.run_dir, dialogue.run_dir, two.run_dir}) == 3
    assert dialogue.run_dir.name == "baseline_rolegpt-few-shot-dialogue-3"
    assert plan(temperature=0.2).key() != zero.key() and plan(bootstrap=10).key() != zero.key()
    assert plan(concurrency=2, batch_size=3).key() == zero.key()  # how it runs is not what it computes


def test_a_smaller_limit_never_shrinks_a_finished_run(tmp_path, capsys):
    run = tmp_path / "run"
    assert cli(capsys, run, "--tasks", "rolebench_demo", "--limit", "6")[0] == 0
    before = (run / "results.json").read_bytes()
    for args, named in [
        (["--limit", "3"], "--limit 6 there, 3 now (a smaller sample would shrink the results)"),
        (
            ["--limit", "6", "--limit-seed", "1"],
            "--limit-mode/--limit-seed stratified/0 there, stratified/1 now",
        ),
        (
            ["--limit", "6", "--limit-mode", "first"],
            "--limit-mode/--limit-seed stratified/0 there, first/0 now",
        ),
    ]:
        code, err = cli(capsys, run, "--tasks", "rolebench_demo", *args)
        assert code == 2 and named in err and "--overwrite" in err and len(err.splitlines()) == 1, err
        assert (run / "results.json").read_bytes() == before  # nothing shrank, nothing was replaced
    assert cli(capsys, run, "--tasks", "rolebench_demo")[0] == 0  # no limit: every item, a larger run
    assert [r.n for r in read_results(run).results.values()] == [18, 9]  # every item of each task
    assert cli(capsys, run, "--tasks", "rolebench_demo", "--limit", "3", "--overwrite")[0] == 0  # asked for
    assert {r.n for r in read_results(run).results.values()} == {3}


def test_the_definition_is_recorded_in_run_json_and_results_json(tmp_path, capsys):
    run = tmp_path / "run"
    assert cli(capsys, run, "--tasks", "rolebench_demo", "--limit", "4", "--seed", "2")[0] == 0
    recorded = json.loads((run / "run.json").read_text())["definition"]
    config = read_results(run).config
    assert config.run == recorded
    assert RunDefinition.model_validate(recorded).settings()["--seed"] == 2
    assert recorded["limit"] == 4 and recorded["tasks"] == ["rolebench_demo"]
    assert config.bootstrap["seed"] == 2 and config.sampling and config.sampling["limit"] == 4


def test_each_run_records_the_packaged_demo_files_it_read_and_no_others(tmp_path):
    """The packaged demo's source is made per run: a role-specific run after a general one in the same
    process records only the files it read."""
    evaluate("baseline:rolegpt", "rolebench_demo_general", output=tmp_path / "general", progress=False)
    specific = evaluate(
        "baseline:rolegpt", "rolebench_demo_specific", output=tmp_path / "spec", progress=False
    )
    files = set(specific.config.data["files"])
    assert files and all("general" not in f for f in files), files
    assert "rolebench-demo/role_specific/test.jsonl" in files
