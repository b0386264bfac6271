"""`rolebench compare` on a whole split: the command's wall time, and its statistics against the obvious loop.

Two real runs on the same items: the released RoleGPT answers (`baseline:rolegpt`) and the question as the
answer (`baseline:question`), on English instruction generalization's role-specific split (4,750 items;
`--demo`: the packaged demo, 27 items, no RoleBench files needed). Measured, in the same process:

- ours: `rolebench.report.paired.compare_runs`, every resample at once (a matrix of draw counts and one of
  signs per task, one matrix product each; `rolebench.scoring.resampling`);
- the obvious loop: the same statistics with one numpy draw per resample, in a Python loop (the bootstrap,
  then the permutation test), per task and metric, the group's avg recomputed per resample.

Both must give the same means and differences; the intervals come from other draws, so they agree to
sampling noise (reported: the largest gap between the two intervals' ends). Also timed: `rolebench compare`
as a user runs it (a new process: imports, both runs' samples read and checked, the table printed).

    python -m benchmarks.bench_compare [--resamples 1000] [--repeat 3] [--demo] [--work runs/bench_compare]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from rolebench.report.paired import Run, _task_arrays, compare_runs, compared_protocols, load_run
from rolebench.run.folder import read_results
from rolebench.scoring.permutation import permutation_p
from rolebench.scoring.resampling import Resampling, interval

REPO_ROOT = Path(__file__).resolve().parent.parent
SPLIT_TASK = "rolebench_eng_instruct_specific"


def make_runs(work: Path, demo: bool) -> tuple[Path, Path]:
    """The two runs (evaluated once into `work`, then reused)."""
    task = "rolebench_demo" if demo else SPLIT_TASK
    folders = []
    for model in ("rolegpt", "question"):
        folder = work / f"{'demo' if demo else 'eng-instruct'}-{model}"
        if not (folder / "results.json").is_file():
            subprocess.run(
                [sys.executable, "-m", "rolebench.cli.main", "evaluate", "--model", f"baseline:{model}"]
                + ["--tasks", task, "--output", str(folder), "--no-progress"],
                check=True,
                stdout=subprocess.DEVNULL,
            )
        folders.append(folder)
    return folders[0], folders[1]


def loop_way(a: Run, b: Run, settings: Resampling) -> dict[str, dict[str, Any]]:
    """The obvious way: per task and metric, one resample (and one permutation) at a time."""
    protocols = compared_protocols(a, b, "bench")
    arrays = {t: _task_arrays(a, b, t, protocols, None, "bench") for t in a.samples}
    diffs = {t: (x - y)[:, :] for t, (x, y, _) in ((t, v) for t, v in arrays.items() if v)}
    columns = {t: v[2] for t, v in arrays.items() if v}
    found: dict[str, dict[str, Any]] = {}
    rng = np.random.default_rng(settings.seed)
    boot = {t: np.empty((settings.resamples, d.shape[1])) for t, d in diffs.items()}
    flips = {t: np.empty((settings.resamples, d.shape[1])) for t, d in diffs.items()}
    for t, d in diffs.items():
        n = len(d)
        for r in range(settings.resamples):
            drawn = d[rng.integers(0, n, n)]
            boot[t][r] = np.nanmean(drawn, axis=0)
        for r in range(settings.resamples):
            signs = rng.integers(0, 2, n) * 2 - 1
            flips[t][r] = np.nanmean(d * signs[:, None], axis=0)
        observed = np.nanmean(d, axis=0)
        found[t] = {
            c: {
                "diff": float(observed[j]),
                "ci": interval(boot[t][:, j], settings.confidence),
                "p": permutation_p(float(observed[j]), flips[t][:, j]),
            }
            for j, c in enumerate(columns[t])
        }
    for group, entry in a.results.groups.items():
        if not all(t in diffs for t in entry.tasks):
            continue
        for protocol in protocols:
            parts = [
                (t, j) for t in entry.tasks for j, c in enumerate(columns[t]) if c.startswith(f"{protocol}:")
            ]
            point = float(np.mean([np.nanmean(diffs[t][:, j]) for t, j in parts]))
            spread = np.mean([boot[t][:, j] for t, j in parts], axis=0)
            permuted = np.mean([flips[t][:, j] for t, j in parts], axis=0)
            found.setdefault(group, {})[f"{protocol}:avg"] = {
                "diff": point,
                "ci": interval(spread, settings.confidence),
                "p": permutation_p(point, permuted),
            }
    return found


def timed(function: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The best CPU time of `repeat` calls (the machine is shared: CPU time, not wall), and the result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        result = function()
        best = min(best, time.process_time() - start)
    return best, result


def command_seconds(a: Path, b: Path, resamples: int, repeat: int) -> tuple[float, float]:
    """`rolebench compare A B` in a new process, as a user runs it: the best wall time and the best CPU time
    (user + system of the process; on a shared machine the wall time includes waiting for a core)."""
    argv = [
        sys.executable,
        "-m",
        "rolebench.cli.main",
        "compare",
        str(a),
        str(b),
        "--bootstrap",
        str(resamples),
    ]
    wall, cpu = float("inf"), float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        wall = min(wall, time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = min(cpu, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall, cpu


def largest_gap(ours: dict[str, Any], theirs: dict[str, Any]) -> tuple[float, float]:
    """The largest |difference| of the point estimates, and of the intervals' ends, over what both give."""
    points, ends = [0.0], [0.0]
    for entry, columns in theirs.items():
        for column, found in columns.items():
            protocol, metric = column.split(":")
            mine = ours["groups" if entry in ours["groups"] else "tasks"][entry]
            mine = mine.get(protocol, {}).get(metric)
            points.append(abs(mine["diff"] - found["diff"]))
            ends += [abs(x - y) for x, y in zip(mine["ci"], found["ci"], strict=True)]
    return max(points), max(ends)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--demo", action="store_true", help="the packaged demo (no RoleBench files needed)")
    parser.add_argument("--work", type=Path, help="keep the two runs here, for the next time (default: none)")
    args = parser.parse_args(argv)
    if not args.demo and not os.environ.get("ROLEBENCH_DATA"):
        os.environ["ROLEBENCH_DATA"] = str(REPO_ROOT.parent / "shared" / "rolebench")
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as temporary:
        return measure(args, make_runs(args.work or Path(temporary), args.demo))


def measure(args: argparse.Namespace, runs: tuple[Path, Path]) -> int:
    """Time both ways and the command on the two runs; print the table; 1 if the estimates differ."""
    folder_a, folder_b = runs
    results_a, results_b = read_results(folder_a), read_results(folder_b)
    tasks = [t for t in results_a.results if t in results_b.results]
    a, b = load_run(folder_a, results_a, tasks), load_run(folder_b, results_b, tasks)
    n = sum(len(s) for s in a.samples.values())
    settings = Resampling(resamples=args.resamples)
    ours_s, ours = timed(lambda: compare_runs(a, b, settings), args.repeat)
    loop_s, theirs = timed(lambda: loop_way(a, b, settings), max(1, args.repeat // 3))
    command_wall, command_cpu = command_seconds(folder_a, folder_b, args.resamples, args.repeat)
    point_gap, interval_gap = largest_gap(ours, theirs)
    print(
        "| items | resamples | ours CPU s | per-resample loop CPU s | ratio | same estimates "
        "| largest interval gap | `rolebench compare` CPU s | wall s |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |")
    same = "yes" if point_gap < 1e-12 else f"no ({point_gap:.2g})"
    print(
        f"| {n:,} | {args.resamples:,} | {ours_s:.4f} | {loop_s:.4f} | **{loop_s / ours_s:.1f}x** | {same} | "
        f"{interval_gap:.4f} | {command_cpu:.2f} | {command_wall:.2f} |"
    )
    return 0 if point_gap < 1e-12 else 1


if __name__ == "__main__":
    sys.exit(main())
