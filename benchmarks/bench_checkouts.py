"""The same commands under two checkouts of rolebench: does a change cost speed?

A structural change (moving code between modules, new seams) must cost no time a user sees. This times the
commands a user waits on under this checkout and under another git revision (`--before`, checked out into a
temporary worktree), alternately, in new processes, each on its own fresh copy of the same run folder:

- `score` on a whole split: `rolebench score DIR` on the question floor of English role generalization
  (`baseline:question`, all 5,000 items; `--demo`: the packaged demo's 27 items): every file read and
  checked, results.json derived again (the remembered floor scores in a fresh `$ROLEBENCH_CACHE` each time);
- a cached main-job rerun: `rolebench demo` (the data it finds, as a user runs it) into a folder that already
  holds every answer (the generation store answers; the model is never loaded): what a user waits for when
  they run the main job again (`--limit N`: N items per task instead of the main job's 30).

Each case is prepared once, by this checkout, then copied before every timed run (the copy is not timed).
Both checkouts must derive the same results (every figure but the timings; the script exits 1 otherwise).

    python -m benchmarks.bench_checkouts --before REV [--rounds 5] [--demo] [--limit N] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
ACCELERATORS = "rolebench/scoring"  # the compiled C accelerators (not in git), copied into the other checkout


def cli(checkout: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`python -m rolebench.cli ARGS` run from `checkout` (`-m` puts the working folder first on the path,
    so the working folder decides whose code runs)."""
    done = subprocess.run(
        [sys.executable, "-m", "rolebench.cli", *args],
        cwd=checkout,
        env={**env, "PYTHONPATH": str(checkout)},
        capture_output=True,
        text=True,
    )
    if done.returncode:
        sys.exit(f"{' '.join(args)} under {checkout} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return done


def code_of(checkout: Path, env: dict[str, str]) -> Path:
    """The folder whose `rolebench` a command run from `checkout` imports."""
    found = subprocess.run(
        [sys.executable, "-c", "import rolebench; print(rolebench.__file__)"],
        cwd=checkout,
        env={**env, "PYTHONPATH": str(checkout)},
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(found.stdout.strip()).parent.parent


def data_env(env: dict[str, str]) -> dict[str, str]:
    """`env` naming the RoleBench folder both checkouts read ($ROLEBENCH_DATA, else ../shared/rolebench
    beside this checkout), so that neither finds other data from its own folder; unchanged without one."""
    found = env.get("ROLEBENCH_DATA") or str(REPO_ROOT.parent / "shared" / "rolebench")
    return {**env, "ROLEBENCH_DATA": found} if Path(found).is_dir() else env


def other_checkout(revision: str, into: Path) -> Path:
    """`revision` checked out (detached) into a new worktree under `into`, with this checkout's compiled
    accelerators beside its sources."""
    path = into / "before"
    subprocess.run(
        ["git", "worktree", "add", "--detach", "-q", str(path), revision], cwd=REPO_ROOT, check=True
    )
    for built in (REPO_ROOT / ACCELERATORS).glob("*.so"):
        shutil.copy2(built, path / ACCELERATORS / built.name)
    return path


def prepare(
    work: Path, demo: bool, limit: int | None, env: dict[str, str]
) -> dict[str, tuple[Path, list[str]]]:
    """The run folders each case starts from, made once by this checkout; the command each case times."""
    task = "rolebench_demo" if demo else "rolebench_eng_role"
    limited = ["--limit", str(limit)] if limit else []
    floor = work / "floor"
    if not (floor / "results.json").is_file():
        cli(REPO_ROOT, "evaluate", "--model", "baseline:question", "--tasks", task, "--output", str(floor),
            "--no-progress", env=env)  # fmt: skip
    main_job = work / "main-job"
    if not (main_job / "results.json").is_file():
        cli(REPO_ROOT, "demo", "--output", str(main_job), "--no-progress", *limited, env=env)
    return {
        "score, a whole split": (floor, ["score", "{run}"]),
        "main job again (cached)": (main_job, ["demo", "--output", "{run}", "--no-progress", *limited]),
    }


def timed(
    checkout: Path, start: Path, command: list[str], scratch: Path, env: dict[str, str]
) -> tuple[float, str]:
    """Seconds one run of `command` took on a fresh copy of `start`, and the results it derived."""
    run = scratch / "run"
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(start, run)
    cache = scratch / "cache"
    args = [part.replace("{run}", str(run)) for part in command]
    began = time.perf_counter()
    cli(checkout, *args, env={**env, "ROLEBENCH_CACHE": str(cache)})
    seconds = time.perf_counter() - began
    results = json.loads((run / "results.json").read_text(encoding="utf-8"))
    scores = {  # every figure but the timings (a cached rerun times nothing new)
        task: {key: value for key, value in result.items() if key != "context"}
        for task, result in results["results"].items()
    }
    return seconds, json.dumps(scores, sort_keys=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="the git revision to compare against (e.g. a commit)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--demo", action="store_true", help="the packaged demo: no RoleBench files needed")
    parser.add_argument("--work", type=Path, default=REPO_ROOT / "runs" / "bench_checkouts")
    parser.add_argument(
        "--limit", type=int, help="items per task of the main job (default: the main job's 30)"
    )
    args = parser.parse_args(argv)
    env = data_env({**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
    args.work.mkdir(parents=True, exist_ok=True)
    cases = prepare(args.work.resolve(), args.demo, args.limit, env)
    with tempfile.TemporaryDirectory() as tmp:
        before = other_checkout(args.before, Path(tmp))
        try:
            checkouts = {"before": before, "now": REPO_ROOT}
            for label, checkout in checkouts.items():  # each command runs the code it is meant to
                if code_of(checkout, env).resolve() != checkout.resolve():
                    sys.exit(f"{label}: a command run from {checkout} imports {code_of(checkout, env)}")
            print(f"before = {args.before}; now = this checkout; {args.rounds} rounds, alternately")
            print("| case | before s (min / median) | now s (min / median) | now / before (median) |")
            print("| --- | ---: | ---: | ---: |")
            differ = False
            for name, (start, command) in cases.items():
                seconds: dict[str, list[float]] = {"before": [], "now": []}
                printed: dict[str, set[str]] = {"before": set(), "now": set()}
                for _ in range(args.rounds):
                    for label, checkout in checkouts.items():
                        took, scores = timed(checkout, start, command, Path(tmp) / "scratch", env)
                        seconds[label].append(took)
                        printed[label].add(scores)
                differ |= printed["before"] != printed["now"]
                b, n = (statistics.median(seconds[k]) for k in ("before", "now"))
                low = {k: min(v) for k, v in seconds.items()}
                print(
                    f"| {name} | {low['before']:.2f} / {b:.2f} | {low['now']:.2f} / {n:.2f} | {n / b:.2f} |"
                )
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(before)], cwd=REPO_ROOT, check=False)
    if differ:
        print("the two checkouts gave different scores", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
