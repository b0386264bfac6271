"""Nothing lost under kill -9 and concurrent commands: real `rolebench` processes on one run folder."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rolebench.run.folder import RunFolder, read_results

TASK = "rolebench_zh_specific"  # 239 samples


def rolebench(*args: str) -> list[str]:
    return [sys.executable, "-m", "rolebench.cli", *args]


def evaluate_args(model_dir: Path, out: Path, *extra: str) -> list[str]:
    return rolebench(
        "evaluate",
        "--model",
        f"hf:{model_dir}",
        "--tasks",
        TASK,
        "--output",
        str(out),
        "--max-new-tokens",
        "24",
        "--batch-size",
        "2",
        "--no-progress",
        *extra,
    )


def stored(out: Path) -> int:
    """Answers in the store; 0 while the file exists but its table does not yet (a run just starting)."""
    with sqlite3.connect(out / "generations.sqlite") as db:
        try:
            return int(db.execute("SELECT COUNT(*) FROM generations").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


def outputs(out: Path) -> dict[str, str | None]:
    lines = (out / "samples" / f"{TASK}.jsonl").read_text(encoding="utf-8").splitlines()
    return {record["id"]: record["output"] for record in map(json.loads, lines)}


@pytest.fixture(scope="module")
def clean_run(tiny_model_dir: Path, rolebench_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("clean") / "run"
    subprocess.run(evaluate_args(tiny_model_dir, out), check=True, capture_output=True, timeout=600)
    return out


def test_kill_9_mid_run_loses_no_answer_and_the_rerun_finishes(clean_run, tiny_model_dir, tmp_path):
    out = tmp_path / "run"
    process = subprocess.Popen(
        evaluate_args(tiny_model_dir, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:  # kill once answers are being stored
        if (out / "generations.sqlite").is_file() and stored(out) > 20:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    kept = stored(out) if (out / "generations.sqlite").is_file() else 0
    rerun = subprocess.run(evaluate_args(tiny_model_dir, out), capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert stored(out) >= kept  # nothing stored before the kill was lost
    assert outputs(out) == outputs(clean_run)  # and the resumed run is the uninterrupted one
    assert RunFolder(out).stale_tasks(read_results(out)) == []
    assert not [p for p in out.rglob(".*") if p.is_file() and p.name != ".rolebench.lock"]  # no temp files


def test_evaluate_extending_a_run_while_score_rescores_it(tiny_model_dir, rolebench_data, tmp_path):
    """The reported race: `score` read the samples, `evaluate` extended them, `score` wrote its stale copy."""
    out = tmp_path / "run"
    subprocess.run(
        evaluate_args(tiny_model_dir, out, "--limit", "30"), check=True, capture_output=True, timeout=600
    )
    for attempt in range(1):
        extend = subprocess.Popen(
            evaluate_args(tiny_model_dir, out, "--limit", str(60 + 40 * attempt)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(0.5 * attempt)
        score = subprocess.run(
            rolebench("score", str(out), "--protocol", "opencompass"),
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ},
        )
        _, extend_err = extend.communicate(timeout=600)
        assert extend.returncode in (0, 2), extend_err
        assert score.returncode in (0, 2), score.stderr
        for code, err in ((extend.returncode, extend_err), (score.returncode, score.stderr)):
            if code == 2:
                assert "another rolebench command is using this run folder" in err
        results = read_results(out)
        assert RunFolder(out).stale_tasks(results) == []  # samples and results agree
        assert len(outputs(out)) == results.results[TASK].n  # never a rolled-back samples file
        if extend.returncode == 0:
            assert results.results[TASK].n == 60 + 40 * attempt


# a failing command removes the folder it created while another waits for its lock -------------------


def _race(path: Path, second_creates: bool) -> tuple[BaseException | None, bool]:
    """A (a thread) creates the folder, holds its lock and fails; B waits for the lock meanwhile.
    Returns what B raised (None: it held the folder) and whether B wrote into the folder it held."""
    import threading

    from rolebench.run.folder import LOCK_FILE

    holding, failed = threading.Event(), threading.Event()
    outcome: dict[str, Any] = {"error": None, "wrote": False}

    def first() -> None:
        try:
            with RunFolder(path).lock(create=True):
                holding.set()
                failed.wait(60)
                raise RuntimeError("the first command fails before storing anything")
        except RuntimeError:
            pass

    def second() -> None:
        try:
            with RunFolder(path).lock(create=second_creates, wait_s=120) as folder:
                (folder.path / "written.txt").write_text("kept", encoding="utf-8")
                outcome["wrote"] = (path / "written.txt").is_file() and (path / LOCK_FILE).is_file()
        except Exception as exc:  # noqa: BLE001 - the test reports it
            outcome["error"] = exc

    a = threading.Thread(target=first)
    a.start()
    assert holding.wait(60)
    b = threading.Thread(target=second)
    b.start()
    time.sleep(0.5)  # B is waiting for the lock by now (either way B must end well: not a timing check)
    failed.set()
    a.join(60)
    b.join(120)
    return outcome["error"], bool(outcome["wrote"])


@pytest.mark.parametrize("attempt", range(5))
def test_a_command_waiting_on_a_folder_its_creator_removes_makes_it_again(attempt, tmp_path):
    error, wrote = _race(tmp_path / "run", second_creates=True)
    assert error is None and wrote


def test_a_reading_command_waiting_on_a_removed_folder_says_it_is_gone(tmp_path):
    from rolebench.errors import DataError

    error, wrote = _race(tmp_path / "run", second_creates=False)
    assert isinstance(error, DataError) and "no such run folder" in str(error) and not wrote
