"""Running a checked sweep on Ray: skip what is finished, submit the rest, watch, record, summarise.

Ray is started (or joined) only when a job has to run: a re-run of a finished sweep touches no Ray.
Each model's job is one Ray task asking for the model's resources, retried by Ray `max_retries` times
when its worker dies or it raises anything but a user error. The driver waits on the tasks, reads
the monitor (attempts, answers stored) twice a second, keeps one progress bar over all jobs and
rewrites DIR/sweep.json as things change.

The monitor, the sweep's bookkeeping, lives with the driver: it is pinned to the driver's node, so a
worker node that dies takes only its jobs (Ray retries them elsewhere), never the bookkeeping. If Ray
itself fails under the driver (its node, the cluster's head, the monitor), the sweep ends in one line
(`RunFailed`, exit 1) saying that running it again resumes: every answer is in the run folders.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from model_adapters.ray_runtime import connect, disconnect, import_ray
from rolebench.errors import RunFailed, first_line
from rolebench.leaderboard.build import build as build_leaderboard
from rolebench.sweep.job import Monitor, run_model
from rolebench.sweep.plan import ModelRun, SweepPlan
from rolebench.sweep.state import SweepState

FEATURE = "rolebench sweep"
WAIT_S = 0.5
LEADERBOARD_DIR = "leaderboard"
Observer = Callable[[dict[str, Any]], None]


@dataclass
class SweepOutcome:
    """What one `rolebench sweep` did: job counts, the failed jobs' lines, where things were written."""

    jobs: int
    done: int = 0
    failed: int = 0
    skipped: int = 0
    failures: list[str] = field(default_factory=list)
    state_file: Path | None = None
    leaderboard: Path | None = None
    ray_started: bool = False

    def line(self) -> str:
        text = f"{self.jobs} jobs: {self.done} done ({self.skipped} already finished), {self.failed} failed"
        if self.failures:
            text += f"; first failure: {self.failures[0]}"
        return text


def task_error(ray: Any, exc: BaseException) -> str:
    """One line for a job that failed after Ray's retries."""
    if isinstance(exc, ray.exceptions.RayTaskError):
        cause = exc.cause if isinstance(exc.cause, BaseException) else exc
        return f"{type(cause).__name__}: {first_line(cause)}"
    if isinstance(exc, ray.exceptions.WorkerCrashedError):
        return "its worker process died on every attempt (killed, or out of memory)"
    if isinstance(exc, ray.exceptions.TaskCancelledError):
        return "cancelled"
    return f"{type(exc).__name__}: {first_line(exc)}"


class Watch:
    """The driver's loop over the submitted model runs."""

    def __init__(
        self, ray: Any, state: SweepState, plan: SweepPlan, bar: Any, observer: Observer | None
    ) -> None:
        self.ray, self.state, self.plan, self.bar, self.observer = ray, state, plan, bar, observer
        self.node = ray.get_runtime_context().get_node_id()  # the driver's node
        pinned = ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy(node_id=self.node, soft=False)
        self.monitor = ray.remote(Monitor).options(num_cpus=0, scheduling_strategy=pinned).remote()
        if isinstance(state.invocation.get("ray"), dict):
            state.invocation["ray"]["monitor_node"] = ray.get(self.monitor.node.remote(), timeout=60)
        self.model_names = {run.name for run in plan.runs}
        self.pending: dict[Any, ModelRun] = {}
        self.outcome = SweepOutcome(jobs=plan.jobs())
        self.drawn: tuple[int, str] | None = None

    def submit(self, runs: list[ModelRun], max_retries: int) -> None:
        task = self.ray.remote(run_model)
        for run in runs:
            options = {
                "max_retries": max_retries,
                "retry_exceptions": True,
                "name": f"rolebench-sweep:{run.name}",
                **run.resources,
            }
            totals = {name: self.plan.totals.get(name, 0) for name in run.tasks}
            self.pending[task.options(**options).remote(run, totals, self.monitor)] = run
            self.state.submitted(run)
        self.state.save()

    def loop(self) -> None:
        while self.pending:
            ready, _ = self.ray.wait(list(self.pending), num_returns=1, timeout=WAIT_S)
            self.read_monitor()
            for ref in ready:
                self.settle(ref, self.pending.pop(ref))
            self.state.save(progress_only=not ready)
            self.draw()
            if self.observer is not None:
                self.observer(self.state.data)

    def read_monitor(self) -> None:
        snapshot = self.ray.get(self.monitor.snapshot.remote(), timeout=60)
        for run in self.pending.values():
            if run.name in snapshot:
                self.state.progress(run, snapshot[run.name])

    def settle(self, ref: Any, run: ModelRun) -> None:
        try:
            result: dict[str, Any] = self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:
            result = {"error": task_error(self.ray, exc)}
        error = result.get("error") or result.get("failed")
        self.state.ended(run, result, error)
        if error:
            self.outcome.failures.append(f"{run.name}: {error}")

    def draw(self) -> None:
        jobs = self.state.data["jobs"]
        stored = sum(job.get("stored") or 0 for job in jobs.values() if job["model"] in self.model_names)
        counts = self.state.counts(list(self.plan.runs))
        text = f"jobs {counts['done']}/{self.outcome.jobs} done, {counts['failed']} failed"
        if (stored, text) != self.drawn:
            self.drawn = (stored, text)
            self.bar.n = stored
            self.bar.set_postfix_str(text, refresh=False)
            self.bar.refresh()

    def cancel(self, *, reach_ray: bool = True) -> None:
        """Mark the pending jobs interrupted in sweep.json (and cancel them, when Ray can be reached)."""
        for ref, run in self.pending.items():
            if reach_ray:
                self.ray.cancel(ref)
            self.state.interrupted(run)
        self.state.save()


def ray_description(ray: Any, address: str | None) -> dict[str, Any]:
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    return {
        "address": address or "local",
        "nodes": len(nodes),
        "resources": {k: v for k, v in ray.cluster_resources().items() if k in ("CPU", "GPU", "memory")},
        "driver_node": ray.get_runtime_context().get_node_id(),  # where the monitor is pinned
    }


def ray_failure(exc: BaseException) -> RunFailed:
    """The one line a sweep ends with when Ray fails under it."""
    return RunFailed(
        f"sweep: Ray failed under the driver ({type(exc).__name__}: {first_line(exc)})",
        fix="every answer so far is stored in the run folders and DIR/sweep.json records the jobs: run the "
        "same sweep again (on a working cluster) to resume",
    )


def run_sweep(
    plan: SweepPlan,
    output: Path,
    *,
    address: str | None = None,
    max_retries: int = 2,
    progress: bool = True,
    leaderboard: bool = False,
    observer: Observer | None = None,
) -> SweepOutcome:
    """Run every job of `plan` not finished yet; DIR/sweep.json records them; optionally a leaderboard."""
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    state = SweepState(output, plan)
    todo = [run for run in plan.runs if not state.finished(run)]
    skipped = plan.jobs() - sum(len(run.tasks) for run in todo)
    outcome = SweepOutcome(jobs=plan.jobs())
    if todo:
        outcome = _run_on_ray(plan, state, todo, address, max_retries, progress, observer)
    counts = state.counts(list(plan.runs))
    outcome.done, outcome.failed, outcome.skipped = counts["done"], counts["failed"], skipped
    state.invocation.update(
        finished=state.invocation.get("updated"), submitted=len(todo), skipped_jobs=skipped, **counts
    )
    state.save()
    outcome.state_file = state.path
    if leaderboard:
        finished = [run.run_dir for run in plan.runs if run.folder.results_path.is_file()]
        if finished:
            build_leaderboard(finished, output / LEADERBOARD_DIR)
            outcome.leaderboard = output / LEADERBOARD_DIR
    return outcome


def _run_on_ray(
    plan: SweepPlan,
    state: SweepState,
    todo: list[ModelRun],
    address: str | None,
    max_retries: int,
    progress: bool,
    observer: Observer | None,
) -> SweepOutcome:
    started_here = connect(address, feature=FEATURE)
    try:
        ray = import_ray(FEATURE)
        state.invocation["ray"] = ray_description(ray, address)
        total = sum(plan.totals.get(task, 0) for run in plan.runs for task in run.tasks)
        with tqdm(total=total, desc="sweep", unit="answer", disable=not progress) as bar:
            watch: Watch | None = None
            started = time.monotonic()
            try:
                watch = Watch(ray, state, plan, bar, observer)
                watch.submit(todo, max_retries)
                watch.loop()
            except (ray.exceptions.RayError, ConnectionError) as exc:
                if watch is not None:
                    watch.cancel(reach_ray=False)
                raise ray_failure(exc) from None
            except BaseException:
                if watch is not None:
                    watch.cancel()
                raise
            state.invocation["seconds"] = round(time.monotonic() - started, 3)
            watch.outcome.ray_started = started_here
            return watch.outcome
    finally:
        if started_here:
            disconnect()
