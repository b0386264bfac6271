"""What a Ray worker does for one model of a sweep, and where it reports (the driver's `Monitor` actor).

`run_model` waits until no other command holds the model's run folder, runs `evaluate` (every answer
stored as it arrives, so a retried or re-run job goes on from what is stored), then the judge if the
sweep asks for one. A thread counts the answers stored per task and reports them; attempts (node,
process, GPUs, start, end, error) are reported to the monitor, so Ray's retries are recorded even
when a worker is killed. A user error (bad key, unreachable server, ...) is returned as the job's
error, not raised: retrying would not help. Anything else is raised, and Ray retries the job.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from typing import Any

from model_adapters.parallel import replica_resources
from model_adapters.ray_runtime import where_am_i
from rolebench.cached_model import CachedModel
from rolebench.errors import RoleBenchError, first_line
from rolebench.evaluation.api import evaluate_definition
from rolebench.evaluation.generate import generation_key
from rolebench.evaluation.pipeline import resolve_run
from rolebench.report.summary import failures
from rolebench.results.schema import RunResults
from rolebench.run.folder import GENERATIONS_TABLE, RunFolder
from rolebench.sweep.plan import ModelRun
from rolebench.sweep.state import WORKER_DIED

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
    """Counts the answers of each task in the run folder's store, and reports them when they change.

    Each poll reads only the rows added since the last one (by rowid), so it costs nothing however
    large the task; a task's keys are the ones `evaluate` stores (`generation_key`)."""

    def __init__(self, run: ModelRun, monitor: Any) -> None:
        super().__init__(name=f"count {run.name}", daemon=True)
        self.job, self.monitor = run, monitor
        self.finished = threading.Event()
        self.task_of: dict[str, str] | None = None  # store key -> task
        self.totals: dict[str, int] = {}
        self.counts: dict[str, int] = {}
        self.seen: set[str] = set()
        self.rowid = 0
        self.db: sqlite3.Connection | None = None
        self.reported: dict[str, int] = {}
        self.generated: dict[str, float] = {}  # when each task's answers were seen complete
        self.first: dict[str, int] = {}

    def _open(self) -> bool:
        folder = RunFolder(self.job.run_dir)
        if not folder.generations_path.is_file():  # evaluate has not claimed the folder yet
            return False
        plans = resolve_run(self.job.definition, self.job.execution).plans
        with folder.generation_store() as store:
            model = CachedModel(
                self.job.definition.model,
                self.job.definition.adapter_options(self.job.execution.base_url),
                store,
            )
            self.task_of = {
                generation_key(model, p.config, r, p.elicitation): p.spec.name
                for p in plans
                for r in p.requests
            }
        self.totals = {p.spec.name: len(p.requests) for p in plans}
        self.counts = dict.fromkeys(self.totals, 0)
        path = folder.generations_path
        self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=60, check_same_thread=False)
        return True

    def count(self) -> None:
        if self.task_of is None and not self._open():
            return
        if self.task_of is None or self.db is None:
            return
        rows = self.db.execute(
            f"SELECT rowid, key FROM {GENERATIONS_TABLE} WHERE rowid > ? ORDER BY rowid", (self.rowid,)
        ).fetchall()
        for rowid, key in rows:
            self.rowid = max(self.rowid, int(rowid))
            task = self.task_of.get(key)
            if task is not None and key not in self.seen:
                self.seen.add(key)
                self.counts[task] += 1
        counts = dict(self.counts)
        self.first = self.first or counts
        tasks = list(counts)  # in the order evaluate generates them
        for i, task in enumerate(tasks):  # a task is generated when it is full or a later one began
            later = any(counts[t] > self.first[t] for t in tasks[i + 1 :])
            if counts[task] == self.totals[task] or later:
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
        if self.db is not None:
            self.db.close()
        for task in self.totals:  # evaluate has returned: every task's answers are in
            self.generated.setdefault(task, time.time())


def evaluate_and_judge(run: ModelRun) -> RunResults:
    """What `rolebench evaluate` does for this model (with --judge when the sweep has one)."""
    with replica_resources(run.replica_resources):
        return evaluate_definition(run.definition, run.execution, run.judge, run.judge_settings)


def run_model(run: ModelRun, monitor: Any) -> dict[str, Any]:
    """The Ray task of one model: `{"created": ..., "failed": line or None}` or `{"error": line}`."""
    import ray

    attempt = ray.get(monitor.attempt_started.remote(run.name, where_am_i()))
    counter = StoredCounter(run, monitor)
    counter.start()
    outcome: dict[str, Any]
    try:
        RunFolder(run.run_dir).wait_until_free(FOLDER_WAIT_S)  # e.g. an attempt a crashed sweep left running
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
