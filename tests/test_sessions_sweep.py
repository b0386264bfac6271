"""A sweep of session tasks on the local Ray (`tests.ray_cluster`): each job runs `evaluate` as the command
line does, progress counts the turns played, and a rerun finds the run already done."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from rolebench.run.folder import read_results
from tests.ray_cluster import ray_cluster  # noqa: F401 - fixture
from tests.sessions_servers import judge_server, players_server, write_roles

TASK = "rolebench_eng_sessions"


def _run(file: Path, output: Path):  # type: ignore[no-untyped-def]
    from rolebench.commands._sweep_file import load_sweep
    from rolebench.sweep.driver import run_sweep

    return run_sweep(load_sweep(file, output), output, progress=False)


@pytest.mark.usefixtures("ray_cluster")
def test_a_sweep_plays_session_tasks_and_a_rerun_redoes_nothing(tmp_path, monkeypatch):
    players, judging = players_server(), judge_server()
    try:
        file = tmp_path / "sweep.yaml"
        options = {
            "models": [f"openai:cand@{players.base_url}"],
            "tasks": [TASK],
            "opponent": f"openai:opp@{players.base_url}",
            "judge": f"openai:judge@{judging.base_url}",
            "turns": 3,
            "seed": 7,
            "data_dir": str(write_roles(tmp_path / "data")),
        }
        file.write_text(yaml.safe_dump(options))
        out = tmp_path / "out"
        outcome = _run(file, out)
        assert (outcome.jobs, outcome.done, outcome.failed) == (1, 1, 0)
        [folder] = [p for p in out.iterdir() if p.is_dir() and (p / "results.json").is_file()]
        result = read_results(folder).sessions[TASK]
        assert (result.wins, result.ties, result.losses, result.failures) == (2, 1, 2, 1)
        [job] = json.loads((out / "sweep.json").read_text())["jobs"].values()
        assert job["task"] == TASK and job["state"] == "done" and job["stored"] == job["total"] == 2 * 3
        calls = players.count(), judging.count()
        monkeypatch.setattr("rolebench.sweep.driver._run_on_ray", lambda *a: pytest.fail("Ray used again"))
        again = _run(file, out)
        assert (again.done, again.skipped) == (1, 1) and (players.count(), judging.count()) == calls
        options["turns"] = 2  # another number of turns: another run, not one already done
        file.write_text(yaml.safe_dump(options))
        from rolebench.commands._sweep_file import load_sweep

        assert (
            load_sweep(file, out).runs[0].key()
            != json.loads((out / "sweep.json").read_text())["models"][folder.name]["key"]
        )
    finally:
        players.stop()
        judging.stop()
