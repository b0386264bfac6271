"""What a Ray worker does for one model of a sweep, and where it reports (the driver's `Monitor` actor).

`run_model` waits until no other command holds the model's run folder, runs `evaluate` (every answer
stored as it arrives, so a retried or re-run job goes on from what is stored), then the judge if the
sweep asks for one. A thread counts the answers stored per task and reports them; attempts (node,
process, GPUs, start, end, error) are reported to the monitor, so Ray's retries are recorded even
when a worker is killed. A user error (bad key, unreachable server, ...) is returned as the job's
error, not raised: retrying would not help. Anything else is raised, and Ray retries the job.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from model_adapters.parallel import replica_resources
from model_adapters.ray_runtime import where_am_i
from rolebench.errors import RoleBenchError, first_line
from rolebench.evaluation.api import evaluate_definition
from rolebench.report.summary import failures
from rolebench.results.schema import RunResults
from rolebench.run.folder import RunFolder
from rolebench.run.session_log import read_log, session_over
from rolebench.sweep.plan import ModelRun
from rolebench.sweep.state import WORKER_DIED
from rolebench.tasks.sessions import SESSION_TASKS

POLL_S = 0.5  # how often a job counts its stored answers
FOLDER_WAIT_S = 1800.0  # how long a job waits for another command (e.g. an orphaned attempt) on its folder


class Monitor:
    """The sweep's mailbox (a Ray actor owned by the driver and pinned to its node): jobs report attempts
    and answers stored."""

    def __init__(self) -> None:
        self.runs: dict[str, dict[str, Any]] = {}

    def _run(self, name: str) -> dict[str, Any]:
        return self.runs.setdefault(name, {"attempts": [], "stored": {}})

    def attempt_started(self, name: str, where: dict[str, Any]) -> int:
        attempts = self._run(name)["attempts"]
        for (
            earlier
        ) in attempts:  # a new attempt means the earlier ones are over (a killed worker says nothing)
            earlier.setdefault("ended", time.time())
            earlier.setdefault("error", WORKER_DIED)
        attempts.append({"attempt": len(attempts), **where, "started": time.time()})
        return len(attempts) - 1

    def attempt_ended(self, name: str, attempt: int, error: str | None) -> None:
        attempts = self._run(name)["attempts"]
        if 0 <= attempt < len(attempts):
            attempts[attempt].update(ended=time.time(), error=error)

    def stored(self, name: str, counts: dict[str, int]) -> None:
        self._run(name)["stored"] = dict(counts)

    def snapshot(self) -> dict[str, dict[str, Any]]:
        return self.runs

    def node(self) -> str:
        """The Ray node this monitor lives on (the driver's: it is pinned there)."""
        return str(where_am_i()["node_id"])


class StoredCounter(threading.Thread):
    """Counts the answers in the run folder's store and reports each task's when they change.

    `evaluate` generates its tasks in order, each one whole before the next, so the answers stored are
    the first task's up to its total, then the next task's: the sweep's totals tell them apart, and the
    run is never planned again here. A task is generated when its answers are all stored. A session
    task (played after the single-turn tasks; its calls, the opponent's and the judge's too, are not
    answers of a task) counts the turns its sessions file holds (`turns_played`) out of its items x
    turns."""

    def __init__(self, run: ModelRun, totals: dict[str, int], monitor: Any) -> None:
        super().__init__(name=f"count {run.name}", daemon=True)
        self.job, self.monitor = run, monitor
        self.totals = {task: totals.get(task, 0) for task in run.tasks}  # in the order evaluate runs them
        self.finished = threading.Event()
        self.reported: dict[str, int] = {}
        self.generated: dict[str, float] = {}  # when each task's answers were seen complete

    def count(self) -> None:
        stored = self.job.folder.stored_answers()
        if stored is None:  # evaluate has not claimed the folder yet
            return
        counts: dict[str, int] = {}
        for task, total in self.totals.items():
            if task in SESSION_TASKS:  # played after the single-turn tasks: its turns, from its file
                counts[task] = min(total, turns_played(self.job.folder, task, self.job.definition.turns))
            else:
                counts[task] = min(total, stored)
            stored -= counts[task]
            if counts[task] == total:
                self.generated.setdefault(task, time.time())
        if counts != self.reported:
            self.reported = counts
            self.monitor.stored.remote(self.job.name, counts)

    def run(self) -> None:
        while not self.finished.wait(POLL_S):
            try:
                self.count()
            except Exception:  # noqa: BLE001 - progress is best effort; the job's outcome is what counts
                continue

    def stop(self) -> None:
        if self.finished.is_set():
            return
        self.finished.set()
        self.join(timeout=10)
        try:
            self.count()
        except Exception:  # noqa: BLE001
            pass
        for task in self.totals:  # evaluate has returned: every task's answers are in
            self.generated.setdefault(task, time.time())


def turns_played(folder: RunFolder, task: str, turns: int) -> int:
    """The turns a session task's file holds, a session that is over (a failure ends one early) counting
    all its turns."""
    found: dict[str, list[dict[str, Any]]] = {}
    for record in read_log(folder.session_log_path(task))[1]:
        found.setdefault(str(record["item"]), []).append(record)
    played = 0
    for records in found.values():
        ordered = sorted(records, key=lambda r: int(r["turn"]))
        played += turns if session_over(ordered, turns) else int(ordered[-1]["turn"])
    return played


def evaluate_and_judge(run: ModelRun) -> RunResults:
    """What `rolebench evaluate` does for this model (with --judge when the sweep has one)."""
    with replica_resources(run.replica_resources):
        return evaluate_definition(run.definition, run.execution, run.judge, run.judge_settings)


def run_model(run: ModelRun, totals: dict[str, int], monitor: Any) -> dict[str, Any]:
    """The Ray task of one model (`totals`: each task's samples): `{"created": ..., "failed": line or
    None}` or `{"error": line}`."""
    import ray

    attempt = ray.get(monitor.attempt_started.remote(run.name, where_am_i()))
    counter = StoredCounter(run, totals, monitor)
    counter.start()
    outcome: dict[str, Any]
    try:
        run.folder.wait_until_free(FOLDER_WAIT_S)  # e.g. an attempt a crashed sweep left running
        results = evaluate_and_judge(run)
        counter.stop()
        outcome = {"created": results.created, "failed": failures(results), "generated": counter.generated}
    except RoleBenchError as exc:  # retrying would not help: the sweep reports it
        outcome = {"error": exc.line()}
    except BaseException as exc:
        monitor.attempt_ended.remote(run.name, attempt, f"{type(exc).__name__}: {first_line(exc)}")
        raise  # Ray retries the job (max_retries)
    finally:
        counter.stop()
    monitor.attempt_ended.remote(run.name, attempt, outcome.get("error") or outcome.get("failed"))
    return outcome
