"""`rolebench demo`: the job it prints runs as printed in a new shell (where `.venv` is not activated) and
is the same job; the RoleBench demo and the packaged demo (not RoleBench) never share a run folder.

The data-only `baseline:question` (it answers with the question) stands in for the embedded model (the
command line is the same but for --model). "The packaged demo" is what the demo runs where no RoleBench
data is reachable; here, where the data may be at hand, the demo is told so (`find_data`)."""

from __future__ import annotations

import os
import shlex
import sqlite3
import subprocess
import sysconfig
from pathlib import Path

import pytest

from rolebench.cli.main import main
from rolebench.commands import demo
from rolebench.run.folder import read_results

SAME_JOB = "the same job (it reuses every stored answer): "


@pytest.fixture
def data_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo with the data-only model, and the packaged demo unless --data-dir names a folder."""
    monkeypatch.setattr(demo, "MODEL", "baseline:question")
    monkeypatch.setattr(
        demo, "find_data", lambda explicit: (explicit, "--data-dir") if explicit else (None, "-")
    )
    monkeypatch.delenv("ROLEBENCH_DATA", raising=False)


def numbers(output: Path) -> dict[str, object]:
    return {task: result.model_dump() for task, result in read_results(output).results.items()}


def stored_answers(output: Path) -> int:
    with sqlite3.connect(output / "generations.sqlite") as db:
        return int(db.execute("SELECT COUNT(*) FROM generations").fetchone()[0])


def new_shell(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`line` run by a shell that has nothing of this one: no activated environment on PATH."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(cwd),
        "HF_HUB_OFFLINE": "1",
        "ROLEBENCH_CACHE": os.environ["ROLEBENCH_CACHE"],
    }
    return subprocess.run(["/bin/sh", "-c", line], cwd=cwd, env=env, capture_output=True, text=True)


@pytest.mark.usefixtures("data_only")
def test_the_same_job_runs_as_printed_in_a_new_shell_and_reuses_every_answer(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # `rolebench` is not on PATH, as after `make demo`
    assert main(["demo", "--limit", "2", "--no-progress"]) == 0
    line = capsys.readouterr().out.split(SAME_JOB)[1].strip()
    run = tmp_path / demo.PACKAGED_OUTPUT
    before, answers = numbers(run), stored_answers(run)
    done = new_shell(line, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert numbers(run) == before and stored_answers(run) == answers


def test_the_command_is_plain_rolebench_only_when_that_is_this_environments(tmp_path, monkeypatch):
    script = Path(sysconfig.get_path("scripts")) / "rolebench"
    if not script.is_file():
        pytest.skip("rolebench is not installed as a script in this environment")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    [command] = demo.rolebench_command()
    assert Path(command).resolve() == script.resolve()
    monkeypatch.setenv("PATH", f"{script.parent}{os.pathsep}/usr/bin:/bin")
    assert demo.rolebench_command() == ["rolebench"]
    other = tmp_path / "elsewhere"  # another environment's rolebench first on PATH
    other.mkdir()
    (other / "rolebench").write_text("#!/bin/sh\nexit 3\n", encoding="utf-8")
    (other / "rolebench").chmod(0o755)
    monkeypatch.setenv("PATH", f"{other}{os.pathsep}{script.parent}")
    assert demo.rolebench_command() != ["rolebench"]


@pytest.mark.usefixtures("data_only")
def test_the_rolebench_demo_and_the_packaged_demo_never_share_a_folder(
    rolebench_data, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    packaged, real = tmp_path / demo.PACKAGED_OUTPUT, tmp_path / demo.OUTPUT
    assert main(["demo", "--limit", "2", "--no-progress"]) == 0
    assert main(["demo", "--limit", "2", "--no-progress", "--data-dir", str(rolebench_data)]) == 0
    capsys.readouterr()
    assert set(read_results(packaged).results) == {"rolebench_demo_general", "rolebench_demo_specific"}
    assert set(read_results(real).results) == {"rolebench_eng_role_general", "rolebench_eng_role_specific"}
    before = {run: numbers(run) for run in (packaged, real)}

    argv = [
        "demo",
        "--limit",
        "2",
        "--no-progress",
        "--output",
        str(packaged),
        "--data-dir",
        str(rolebench_data),
    ]
    assert main(argv) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "holds the packaged demo's run (not RoleBench)" in line and "choose another --output" in line
    assert main(["demo", "--limit", "2", "--no-progress", "--output", str(real)]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert f"{real} holds a RoleBench run" in line and str(demo.PACKAGED_OUTPUT) in line
    assert {run: numbers(run) for run in (packaged, real)} == before


def test_the_same_job_of_a_rolebench_demo_names_its_folder_and_data(
    rolebench_data, tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(demo, "MODEL", "baseline:question")
    monkeypatch.chdir(tmp_path)
    run = tmp_path / "my-demo"
    assert main(["demo", "--output", str(run), "--data-dir", str(rolebench_data), "--no-progress"]) == 0
    argv = shlex.split(capsys.readouterr().out.split(SAME_JOB)[1].strip())
    assert argv[1] == "evaluate"
    assert ["--output", str(run)] == argv[argv.index("--output") : argv.index("--output") + 2]
    assert ["--data-dir", str(rolebench_data)] == argv[
        argv.index("--data-dir") : argv.index("--data-dir") + 2
    ]
    before, answers = numbers(run), stored_answers(run)
    assert main(["evaluate", *argv[2:], "--no-progress"]) == 0
    assert numbers(run) == before and stored_answers(run) == answers and not (tmp_path / "runs").exists()
