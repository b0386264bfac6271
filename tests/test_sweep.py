"""`rolebench sweep`: jobs on a local Ray (2 CPUs, loopback only), run folders, sweep.json, resume, failures.

The Ray tests share one session-scoped local Ray (`tests.ray_cluster`); the checks of sweep files run
without Ray. Models: the data-only `baseline:rolegpt` and fakes (`slowecho:`, `broken:`) registered in
this process and in every Ray worker.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from rolebench import evaluate
from rolebench.cli.main import main
from rolebench.errors import ConfigError, MissingDependency
from rolebench.run.folder import read_results
from tests.fake_openai import fake_openai  # noqa: F401 - fixture
from tests.ray_cluster import (  # noqa: F401 - fakes, ray_cluster: fixtures
    REPO_ROOT,
    fakes,
    log_lines,
    loopback_cluster,
    node_of,
    ray_cluster,
)

DEMO = ["rolebench_demo_general", "rolebench_demo_specific"]


def sweep_file(tmp_path: Path, models: list[Any], **options: Any) -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump({"models": models, "tasks": ["rolebench_demo"], **options}))
    return path


def run(file: Path, output: Path, **kwargs: Any) -> Any:
    from rolebench.commands._sweep_file import load_sweep
    from rolebench.sweep.driver import run_sweep

    return run_sweep(load_sweep(file, output), output, progress=False, **kwargs)


# sweep files are checked before anything runs ---------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"models": ["baseline:rolegpt"], "tasks": "rolebench_demo", "limitt": 3}, "unknown option 'limitt'"),
        ({"models": ["baseline:rolegpt"], "tasks": "rolebench_demo", "limitt": 3}, "did you mean 'limit'?"),
        ({"models": ["baseline:rolegpt"], "tasks": "rolebench_demo", "max-new-token": 9}, "'max_new_tokens'"),
        ({"models": [{"spec": "baseline:rolegpt", "num_gpu": 1}], "tasks": "rolebench_demo"}, "num_gpus"),
        ({"models": ["nope:x"], "tasks": "rolebench_demo"}, "unknown model scheme 'nope'"),
        ({"models": ["hf:"], "tasks": "rolebench_demo"}, "has no scheme"),
        ({"models": ["baseline:rolegpt"], "tasks": ["rolebench_demo", "no_such_task"]}, "unknown task"),
        (
            {"models": [{"spec": "smollm2:135m", "model_args": {"n_ctxx": 9}}], "tasks": "rolebench_demo"},
            "n_ctx",
        ),
        ({"models": ["baseline:rolegpt"], "tasks": "rolebench_demo", "limit": "abc"}, "--limit"),
        ({"models": ["baseline:rolegpt"], "tasks": "rolebench_demo", "limit": 0}, "--limit 0"),
        ({"models": ["baseline:rolegpt"], "tasks": "rolebench_demo", "model": "x"}, "no `model:`"),
        ({"models": [], "tasks": "rolebench_demo"}, "no models"),
        ({"models": ["baseline:rolegpt"]}, "no tasks"),
        (
            {"models": ["baseline:rolegpt", "baseline:rolegpt"], "tasks": "rolebench_demo"},
            "share the run folder",
        ),
        (
            {"models": ["baseline:rolegpt"], "tasks": "rolebench_demo", "judge": "nope:x"},
            "unknown model scheme",
        ),
    ],
)
def test_bad_sweep_files_are_refused_in_one_line_before_any_job(tmp_path, content, message):
    from rolebench.commands._sweep_file import load_sweep

    file = tmp_path / "bad.yaml"
    file.write_text(yaml.safe_dump(content))
    with pytest.raises(ConfigError, match=re.escape(message)) as caught:
        load_sweep(file, tmp_path / "out")
    assert "\n" not in caught.value.line() and str(file) in caught.value.line()
    assert not (tmp_path / "out").exists()


def test_without_ray_the_sweep_says_what_to_install(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("model_adapters.ray_runtime.ray_available", lambda: False)
    file = sweep_file(tmp_path, ["baseline:rolegpt"])
    assert main(["sweep", str(file), "--output", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and 'pip install "rolebench[ray]"' in err
    with pytest.raises(MissingDependency):
        from model_adapters import load_model

        load_model("smollm2:135m", data_parallel="2")


# on Ray -----------------------------------------------------------------------------------------------------


@pytest.mark.usefixtures("ray_cluster")
def test_every_ray_process_listens_on_loopback_only():
    out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=False).stdout
    ours = [
        line.split()[3] for line in out.splitlines() if re.search(r'"(raylet|gcs_server|ray::[^"]*)"', line)
    ]
    assert ours and all(address.startswith(("127.0.0.1:", "[::ffff:127.0.0.1]:")) for address in ours), ours


@pytest.mark.usefixtures("ray_cluster", "fakes")
def test_sweep_runs_every_job_into_ordinary_run_folders_and_a_rerun_redoes_nothing(tmp_path, monkeypatch):
    log = tmp_path / "alpha.log"
    file = sweep_file(
        tmp_path, ["baseline:rolegpt", {"spec": "slowecho:alpha", "model_args": {"log": str(log)}}]
    )
    out = tmp_path / "out"
    outcome = run(file, out, leaderboard=True)
    assert (outcome.jobs, outcome.done, outcome.failed, outcome.skipped) == (4, 4, 0, 0)

    direct = evaluate(
        **dict(
            model="baseline:rolegpt", tasks=("rolebench_demo",), output=tmp_path / "direct", progress=False
        )
    )
    swept = read_results(out / "baseline_rolegpt")
    for task in DEMO:  # exactly what `rolebench evaluate` writes
        assert swept.results[task].model_dump(exclude={"samples_sha256"}) == direct.results[task].model_dump(
            exclude={"samples_sha256"}
        )
        assert (out / "baseline_rolegpt/samples" / f"{task}.jsonl").read_bytes() == (
            tmp_path / "direct/samples" / f"{task}.jsonl"
        ).read_bytes()
    assert set(read_results(out / "slowecho_alpha").groups) == {"rolebench_demo"}

    state = json.loads((out / "sweep.json").read_text())
    assert set(state["jobs"]) == {f"{m}/{t}" for m in ("baseline_rolegpt", "slowecho_alpha") for t in DEMO}
    for job in state["jobs"].values():
        assert job["state"] == "done" and job["stored"] == job["total"] and job["seconds"] > 0
        assert len(job["attempts"]) == 1 and job["node"]["node_ip"] == "127.0.0.1"
        assert job["submitted"] <= job["started"] <= job["generated"] <= job["finished"]
    board = json.loads((out / "leaderboard/leaderboard.json").read_text())
    assert {"baseline:rolegpt", "slowecho:alpha"} <= {
        row["spec"] for b in board["boards"] if not b["reference"] for row in b["rows"]
    }
    calls = log_lines(log)
    assert sorted(len(c["ids"]) for c in calls) == [9, 18]

    monkeypatch.setattr("rolebench.sweep.driver._run_on_ray", lambda *a: pytest.fail("Ray used again"))
    again = run(file, out)
    assert (again.done, again.skipped) == (4, 4) and log_lines(log) == calls
    assert len(json.loads((out / "sweep.json").read_text())["invocations"]) == 2


@pytest.mark.usefixtures("ray_cluster", "fakes")
def test_a_worker_killed_mid_sweep_is_retried_and_nothing_is_lost(tmp_path):
    log = tmp_path / "beta.log"
    file = sweep_file(tmp_path, [{"spec": "slowecho:beta", "model_args": {"log": str(log), "delay": 0.08}}])
    out = tmp_path / "out"
    store = out / "slowecho_beta/generations.sqlite"
    killed: dict[str, int] = {}

    def kill_when_some_are_stored(state: dict[str, Any]) -> None:
        job = state["jobs"]["slowecho_beta/rolebench_demo_general"]
        if not killed and (job.get("stored") or 0) >= 3 and job["attempts"]:
            os.kill(job["attempts"][-1]["pid"], signal.SIGKILL)
            # read at once: Ray's retry (a new Python process importing rolebench) takes far longer to
            # store anything, while a kill is complete within milliseconds
            time.sleep(0.05)
            with sqlite3.connect(store) as db:  # what survived: every answer stored before the kill
                killed["stored"] = db.execute("SELECT COUNT(*) FROM generations").fetchone()[0] - 1

    outcome = run(file, out, observer=kill_when_some_are_stored)
    assert killed and (outcome.done, outcome.failed) == (2, 0)
    first, *rest = log_lines(log)
    assert len(first["ids"]) == 18 and rest[0]["pid"] != first["pid"]
    assert len(rest[0]["ids"]) == 18 - killed["stored"]  # only what was not stored is asked again
    assert sorted(len(call["ids"]) for call in rest[1:]) == [9]
    state = json.loads((out / "sweep.json").read_text())
    attempts = state["jobs"]["slowecho_beta/rolebench_demo_general"]["attempts"]
    assert len(attempts) == 2 and "died" in attempts[0]["error"] and attempts[1]["error"] is None
    samples = read_results(out / "slowecho_beta").results["rolebench_demo_general"]
    assert samples.n_generated == 18 and samples.n_failed == 0


@pytest.mark.usefixtures("ray_cluster", "fakes")
def test_a_failing_job_is_retried_then_reported_and_the_rest_finishes(tmp_path, capsys):
    file = sweep_file(tmp_path, ["slowecho:gamma", "broken:x"], tasks=["rolebench_demo_specific"])
    out = tmp_path / "out"
    code = main(["sweep", str(file), "--output", str(out), "--max-retries", "1", "--no-progress"])
    captured = capsys.readouterr()
    assert code == 1
    line = captured.err.strip()
    assert line.count("\n") == 0 and "2 jobs: 1 done" in line and "1 failed" in line and "boom" in line
    state = json.loads((out / "sweep.json").read_text())
    broken = state["jobs"]["broken_x/rolebench_demo_specific"]
    assert (
        broken["state"] == "failed"
        and len(broken["attempts"]) == 2
        and "RuntimeError: boom" in broken["error"]
    )
    assert state["jobs"]["slowecho_gamma/rolebench_demo_specific"]["state"] == "done"
    assert read_results(out / "slowecho_gamma").results["rolebench_demo_specific"].n == 9
    assert not (out / "broken_x/results.json").exists()


def test_a_sweep_with_a_judge_judges_each_run_as_evaluate_does(tmp_path, fake_openai, monkeypatch):  # noqa: F811
    """The worker's step (no Ray needed): evaluate, then judge the run folder, as `evaluate --judge` does."""
    from rolebench.commands._sweep_file import load_sweep
    from rolebench.sweep.job import evaluate_and_judge
    from tests.test_judge import ranking

    monkeypatch.setenv("ROLEBENCH_CACHE", str(tmp_path / "cache"))
    server = fake_openai(lambda body: ranking("model_a"))
    file = sweep_file(
        tmp_path,
        ["baseline:rolegpt"],
        tasks=["rolebench_demo_specific"],
        judge="openai:fake-model",
        judge_base_url=server.base_url,
        judge_limit=3,
    )
    plan = load_sweep(file, tmp_path / "out")
    settings = plan.runs[0].judge_settings
    assert plan.runs[0].judge == "openai:fake-model" and settings is not None and settings.progress is False
    results = evaluate_and_judge(plan.runs[0])
    task = results.results["rolebench_demo_specific"]
    assert task.value("judged") == 3 and task.value("win_rate") is not None
    assert results.config.judge["spec"] == "openai:fake-model"


def test_the_sweep_builds_the_evaluate_options_that_rolebench_evaluate_builds(
    tmp_path,
    monkeypatch,
    fake_openai,  # noqa: F811
):
    """Every `rolebench evaluate` option, set away from its default in a sweep file, reaches the run as
    it would through `rolebench evaluate --config FILE` (both read it into the same records with
    `rolebench.evaluation.api.split_options`; a new evaluate option fails this test until it is added
    here)."""
    from rolebench.commands._sweep_file import load_sweep
    from rolebench.evaluation.api import EVALUATE_OPTIONS

    prices = tmp_path / "prices.yaml"
    prices.write_text("gpt-4o: {input: 2.5, output: 10}\n")
    (tmp_path / "tasks").mkdir()
    values = {
        "tasks": "rolebench_demo_specific",
        "data_dir": str(tmp_path),
        "revision": "main",
        "limit": 3,
        "limit_mode": "first",
        "limit_seed": 5,
        "protocol": "rolebench",
        "elicitation": "few-shot-dialogue",
        "shots": 2,
        "max_new_tokens": 64,
        "temperature": 0.5,
        "top_p": 0.9,
        "repetition_penalty": 1.1,
        "seed": 3,
        "batch_size": 4,
        "concurrency": 2,
        "base_url": "http://127.0.0.1:9/v1",
        "model_args": "timeout=5",
        "judge": "openai:gpt-4o",
        "judge_limit": 4,
        "judge_base_url": fake_openai(lambda body: "never asked").base_url,  # evaluate checks it answers
        "judge_config": "rolellm_rank",
        "price_table": str(prices),
        "bootstrap": 50,
        "include_path": [str(tmp_path / "tasks")],
        "overwrite": True,
        "opponent": "openai:opp-model",
        "opponent_args": "timeout=7",
        "opponent_base_url": "http://127.0.0.1:9/v1",
        "turns": 3,
    }
    every = {name for model in EVALUATE_OPTIONS for name in model.model_fields}
    assert every - {"model", "output", "progress"} == set(values), "a new evaluate option: add it here"
    config = tmp_path / "evaluate.yaml"
    config.write_text(yaml.safe_dump(values))
    spec = "openai:some-model"
    built: list[tuple[Any, ...]] = []

    def capture(*args: Any) -> None:
        built.append(args)
        raise KeyboardInterrupt  # stop `rolebench evaluate` right there

    monkeypatch.setattr("rolebench.evaluation.api.evaluate_definition", capture)
    run_dir = tmp_path / "run"
    assert main(["evaluate", "--config", str(config), "--model", spec, "--output", str(run_dir)]) == 130
    definition, execution, judge, settings, _ = built[0]
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(yaml.safe_dump({"models": [{"spec": spec, "name": "run"}], **values}))
    [swept] = load_sweep(sweep, tmp_path).runs
    assert swept.definition == definition
    assert swept.execution.model_copy(update={"progress": True}) == execution
    assert (swept.judge, swept.judge_settings.model_copy(update={"progress": True})) == (judge, settings)


@pytest.mark.usefixtures("ray_cluster", "fakes")
def test_a_data_parallel_model_in_a_sweep_gives_its_resources_to_the_replicas(tmp_path):
    log = tmp_path / "dp.log"
    model = {"spec": "slowecho:dp", "model_args": {"data_parallel": 2, "log": str(log)}, "num_cpus": 1}
    file = sweep_file(tmp_path, [model], tasks=["rolebench_demo_specific"], batch_size=3)
    outcome = run(file, tmp_path / "out")
    assert (outcome.done, outcome.failed) == (1, 0)
    state = json.loads((tmp_path / "out/sweep.json").read_text())
    assert state["models"]["slowecho_dp"]["resources"] == {"num_cpus": 0}  # the job holds nothing
    calls = log_lines(log)
    assert sorted(len(c["ids"]) for c in calls) == [3, 3, 3]  # chunks = batches, from the replicas
    assert read_results(tmp_path / "out/slowecho_dp").results["rolebench_demo_specific"].n_generated == 9


# the sweep's bookkeeping on a cluster of several nodes -------------------------------------------------


def _wait(ready: Any, what: str, limit_s: float = 300.0) -> None:
    """Poll until `ready()`; a limit against a hang only (never a timing assertion)."""
    deadline = time.monotonic() + limit_s
    while not ready():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {limit_s:.0f} s for {what}")
        time.sleep(0.2)


def _state(out: Path) -> dict[str, Any]:
    try:
        return json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _sweep_driver(address: str, file: Path, out: Path) -> subprocess.Popen[str]:
    """`rolebench sweep FILE --output OUT` as its own process, a driver of the cluster at `address`."""
    command = [sys.executable, "-m", "tests.ray_cluster", address, "sweep", str(file), "--output", str(out)]
    return subprocess.Popen(
        [*command, "--no-progress"], cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _running_jobs(out: Path) -> list[dict[str, Any]]:
    """The jobs that have stored a few answers, with the sweep's Ray description (when both are there)."""
    state = _state(out)
    jobs = [
        j for j in state.get("jobs", {}).values() if j["state"] == "running" and (j.get("stored") or 0) >= 2
    ]
    return jobs if jobs and (state["invocations"][-1].get("ray") or {}).get("monitor_node") else []


def test_a_lost_worker_node_takes_only_its_jobs_never_the_sweeps_bookkeeping(tmp_path):
    models = [{"spec": f"slowecho:{name}", "model_args": {"delay": 0.15}} for name in ("east", "west")]
    file, out = sweep_file(tmp_path, models), tmp_path / "out"
    with loopback_cluster(nodes=2) as cluster:
        driver = _sweep_driver(cluster.address, file, out)
        ray_info: dict[str, Any] = {}

        def a_job_runs_on_the_other_node() -> bool:
            assert driver.poll() is None, driver.communicate()
            ray_info.update((_state(out).get("invocations") or [{}])[-1].get("ray") or {})
            nodes = {(j.get("node") or {}).get("node_id") for j in _running_jobs(out)}
            return bool(nodes - {ray_info.get("driver_node")})

        _wait(a_job_runs_on_the_other_node, "a job with answers on the node that is not the driver's")
        assert ray_info["monitor_node"] == ray_info["driver_node"]  # the bookkeeping stays with the driver
        other = next(n for n in cluster.worker_nodes if n.node_id != ray_info["driver_node"])
        cluster.remove_node(other, allow_graceful=False)
        _, err = driver.communicate(timeout=600)
    assert driver.returncode == 0, err
    state = _state(out)
    assert all(job["state"] == "done" for job in state["jobs"].values())
    retried = [job for job in state["jobs"].values() if len(job["attempts"]) > 1]
    assert retried and all(job["node"]["node_id"] == ray_info["driver_node"] for job in retried)
    for name in ("slowecho_east", "slowecho_west"):
        assert all(t.n_generated == t.n for t in read_results(out / name).results.values())


def test_losing_the_node_that_holds_the_bookkeeping_ends_in_one_line_and_a_rerun_resumes(tmp_path):
    log = tmp_path / "north.log"
    file = sweep_file(tmp_path, [{"spec": "slowecho:north", "model_args": {"delay": 0.15, "log": str(log)}}])
    out = tmp_path / "out"
    with loopback_cluster(nodes=2) as cluster:
        driver = _sweep_driver(cluster.address, file, out)
        _wait(lambda: driver.poll() is None and bool(_running_jobs(out)), "a job with answers stored")
        monitor_node = _state(out)["invocations"][-1]["ray"]["monitor_node"]
        cluster.remove_node(node_of(cluster, monitor_node), allow_graceful=False)
        _, err = driver.communicate(timeout=600)
    lines = [line for line in err.splitlines() if line.startswith("rolebench")]
    assert driver.returncode == 1 and "Traceback" not in err, err
    assert len(lines) == 1 and "Ray failed" in lines[0] and "run the same sweep again" in lines[0], err
    assert {job["state"] for job in _state(out)["jobs"].values()} <= {"interrupted", "done"}
    stored = len(log_lines(log)[0]["ids"])  # the first call asked for all 18 of the general task
    with loopback_cluster(nodes=1) as cluster:
        rerun = _sweep_driver(cluster.address, file, out)
        _, err = rerun.communicate(timeout=600)
    assert rerun.returncode == 0, err
    asked = [len(call["ids"]) for call in log_lines(log)]
    assert stored == 18 and sum(asked[1:]) < 27  # the rerun asked only for what was not stored
    results = read_results(out / "slowecho_north")
    assert all(t.n_generated == t.n for t in results.results.values())


def test_a_sweep_reruns_a_model_whose_chat_template_or_server_changed(tmp_path):
    """A sweep's "already done" is the run's identity: an edited `chat_template.jinja` or another base URL
    is another model, never a finished one (no Ray needed to read the keys)."""
    from rolebench.commands._sweep_file import load_sweep

    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"0" * 10)
    template = folder / "chat_template.jinja"
    template.write_text("{{ messages }}", encoding="utf-8")

    def key(model: str, **options: Any) -> str:
        file = sweep_file(tmp_path, [model], **options)
        return str(load_sweep(file, tmp_path / "out").runs[0].key())

    api = key("openai:m", base_url="http://127.0.0.1:8000/v1")
    assert key("openai:m", base_url="http://127.0.0.1:8000/v1/") == api  # the same server
    assert key("openai:m", base_url="http://127.0.0.1:8001/v1") != api
    local = key(f"hf:{folder}")
    assert key(f"hf:{folder}") == local
    template.write_text("{{ messages | reverse }}", encoding="utf-8")
    assert key(f"hf:{folder}") != local
