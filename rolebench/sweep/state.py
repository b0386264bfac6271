"""DIR/sweep.json: every job's state, attempts, Ray node and timings, rewritten atomically as they change.

```
{"schema_version": 1,
 "invocations": [{"started", "finished", "file", "submitted", "skipped", "done", "failed",
                  "ray": {"address", "nodes", "resources", "driver_node", "monitor_node"}}],
 "models": {NAME: {"spec", "run_dir", "key", "resources", "state", "results_created", "error"}},
 "jobs": {"NAME/TASK": {"model", "task", "state", "attempts": [{"attempt", "invocation", "node_id",
          "node_ip", "hostname", "pid", "gpus", "started", "ended", "error"}], "node", "submitted",
          "started", "generated", "finished", "seconds", "stored", "total", "error"}}}
```
A job's state is `pending`, `running`, `done`, `failed` or `interrupted`. The jobs of one model run in
one Ray task, so they share its attempts; `generated` is when a task's last answer was stored,
`finished` when the model's results.json was written. A model whose jobs are all done, whose key
(everything that decides its results) is unchanged and whose results.json is the one the sweep
wrote is skipped by the next run.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rolebench.errors import RoleBenchError
from rolebench.run.folder import read_results
from rolebench.storage.files import write_json_atomic
from rolebench.sweep.plan import ModelRun, SweepPlan, job_id

WORKER_DIED = "the worker died (killed, or out of memory)"  # an attempt that ended without a word

SWEEP_FILE = "sweep.json"
SCHEMA_VERSION = 1
SAVE_EVERY_S = 2.0  # progress-only changes are written at most this often (state changes at once)


def iso(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return (
        datetime.fromtimestamp(seconds, timezone.utc)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("schema_version") == SCHEMA_VERSION else {}


class SweepState:
    """sweep.json in memory; `save()` writes it atomically."""

    def __init__(self, output: Path, plan: SweepPlan, *, ray: dict[str, Any] | None = None) -> None:
        self.path = Path(output) / SWEEP_FILE
        self.data = _read(self.path) or {"schema_version": SCHEMA_VERSION}
        for key in ("invocations", "models", "jobs"):
            self.data.setdefault(key, [] if key == "invocations" else {})
        self.invocation: dict[str, Any] = {"started": iso(time.time()), "file": str(plan.file), "ray": ray}
        self.data["invocations"].append(self.invocation)
        self.number = len(self.data["invocations"]) - 1
        self.earlier_attempts: dict[str, list[dict[str, Any]]] = {}
        self.saved_at = 0.0
        for run in plan.runs:
            self._describe(run, plan.totals)

    # records -----------------------------------------------------------------------------------------

    def model(self, name: str) -> dict[str, Any]:
        record: dict[str, Any] = self.data["models"][name]
        return record

    def job(self, run: ModelRun, task: str) -> dict[str, Any]:
        record: dict[str, Any] = self.data["jobs"][job_id(run.name, task)]
        return record

    def jobs_of(self, run: ModelRun) -> list[dict[str, Any]]:
        return [self.job(run, task) for task in run.tasks]

    def _describe(self, run: ModelRun, totals: dict[str, int]) -> None:
        model = self.data["models"].setdefault(run.name, {"state": "pending"})
        model.update(spec=run.spec, run_dir=str(run.run_dir), resources=run.resources)
        for task in run.tasks:
            job = self.data["jobs"].setdefault(
                job_id(run.name, task), {"model": run.name, "task": task, "state": "pending", "attempts": []}
            )
            job["total"] = totals.get(task)

    def finished(self, run: ModelRun) -> bool:
        """Whether this model's results are complete, current, and the ones the sweep wrote."""
        model = self.model(run.name)
        if model.get("key") != run.key() or model.get("state") != "done":
            return False
        if any(job.get("state") != "done" for job in self.jobs_of(run)):
            return False
        try:
            results = read_results(run.run_dir)
        except RoleBenchError:
            return False
        held = set(results.results) | set(results.sessions)  # single-turn and session tasks
        return results.created == model.get("results_created") and set(run.tasks) <= held

    # transitions -----------------------------------------------------------------------------------

    def submitted(self, run: ModelRun) -> None:
        now = iso(time.time())
        self.model(run.name).update(state="running", key=run.key(), error=None)
        for job in self.jobs_of(run):
            self.earlier_attempts[job_id(run.name, job["task"])] = list(job.get("attempts") or [])
            job.update(state="pending", submitted=now, started=None, generated=None, finished=None)
            job.update(seconds=None, error=None, stored=job.get("stored") or 0)

    def progress(self, run: ModelRun, report: dict[str, Any]) -> None:
        """Fold what the run's worker reported (attempts, answers stored per task) into its jobs."""
        attempts = [self._attempt(a) for a in report.get("attempts", [])]
        stored = report.get("stored", {})
        for job in self.jobs_of(run):
            if job["state"] in ("done", "failed"):
                continue
            job["attempts"] = self.earlier_attempts.get(job_id(run.name, job["task"]), []) + attempts
            if attempts:
                last = attempts[-1]
                job["node"] = {k: last.get(k) for k in ("node_id", "node_ip", "hostname")}
                job["started"] = job.get("started") or attempts[0]["started"]
                job["state"] = "running"
            if job["task"] in stored:
                job["stored"] = stored[job["task"]]
                if job["stored"] == job.get("total") and not job.get("generated"):
                    job["generated"] = iso(time.time())

    def _attempt(self, attempt: dict[str, Any]) -> dict[str, Any]:
        return {
            **attempt,
            "invocation": self.number,
            "started": iso(attempt.get("started")),
            "ended": iso(attempt.get("ended")),
        }

    def ended(self, run: ModelRun, outcome: dict[str, Any], error: str | None) -> None:
        """The model's Ray task ended: its jobs are done (results.json written), or failed with `error`."""
        now = time.time()
        state = "failed" if error else "done"
        self.model(run.name).update(state=state, error=error, results_created=outcome.get("created"))
        generated = outcome.get("generated") or {}
        for job in self.jobs_of(run):
            job.update(state=state, error=error, finished=iso(now))
            for earlier in (job.get("attempts") or [])[:-1]:  # over, as the task ended: one that said
                earlier.setdefault("error", WORKER_DIED)  # nothing died (what the monitor also records)
                earlier["ended"] = earlier.get("ended") or iso(now)
            if job["task"] in generated:
                job["generated"] = iso(generated[job["task"]])
            if state == "done":
                job["stored"] = job.get("total")
            submitted = job.get("submitted")
            if submitted:
                started = datetime.fromisoformat(submitted.replace("Z", "+00:00")).timestamp()
                job["seconds"] = round(now - started, 3)

    def interrupted(self, run: ModelRun) -> None:
        self.model(run.name)["state"] = "interrupted"
        for job in self.jobs_of(run):
            if job["state"] not in ("done", "failed"):
                job["state"] = "interrupted"

    # writing ---------------------------------------------------------------------------------------------

    def counts(self, runs: list[ModelRun]) -> dict[str, int]:
        states = [job["state"] for run in runs for job in self.jobs_of(run)]
        return {
            state: states.count(state) for state in ("done", "failed", "running", "pending", "interrupted")
        }

    def save(self, *, progress_only: bool = False) -> None:
        if progress_only and time.monotonic() - self.saved_at < SAVE_EVERY_S:
            return
        self.invocation["updated"] = iso(time.time())
        write_json_atomic(self.path, self.data)
        self.saved_at = time.monotonic()
