"""What rank intervals add to `rolebench leaderboard build`, and ours against the obvious per-resample loop.

Input: the folders given (default: the published `leaderboard/results`, whose ranked runs carry their per-item
scores in `item_scores.json`, and `runs/leaderboard`, the run folders `leaderboard/build.sh --rerun` writes,
read from their samples files), or with `--demo` one board built here: RoleGPT's released answers on the
packaged demo (or the run `--from` names) and `--rows` - 1 models dealt the same per-item scores (shuffled,
scaled), each a run folder read from its samples.

- build: `rolebench.leaderboard.build.build` as the command runs it, against the same build with the rank
  intervals taken out (no per-item scores read, none computed, none copied), one for one, best CPU time of
  each: the share they add;
- intervals: the largest board's rank intervals, ours (`rolebench.scoring.ranks.rank_intervals`: one
  matrix of draw counts per task, one matrix product for every row and resample) against one numpy draw per
  resample in a Python loop; both give the same values and, from other draws, intervals equal up to
  sampling noise (reported: how many rank intervals differ).

    python -m benchmarks.bench_rank_intervals [PATH ...] [--repeat 3] [--demo --rows 8 [--from RUN_DIR]]
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np

from rolebench.leaderboard import boards as boards_module
from rolebench.leaderboard import build as build_module
from rolebench.leaderboard.boards import collect
from rolebench.leaderboard.items import RunScores, read_item_scores, write_item_scores
from rolebench.leaderboard.ranking import RANKING, _row_items, _task_items, add_rank_intervals
from rolebench.leaderboard.rows import Board
from rolebench.leaderboard.runs import present_splits
from rolebench.run.folder import read_results, read_samples, write_results, write_samples
from rolebench.scoring.ranks import rank_intervals
from rolebench.scoring.resampling import Layout, Resampling, TaskItems, interval

REPO_ROOT = Path(__file__).resolve().parent.parent


def board_runs(root: Path, rows: int, given: Path | None) -> Path:
    """A run (`given`, else RoleGPT on the packaged demo) and `rows` - 1 models dealt its per-item scores,
    shuffled and scaled, each a run folder of its own."""
    source = root / "source"
    if given is not None:
        shutil.copytree(given, source, ignore=shutil.ignore_patterns("*.sqlite*", ".rolebench.lock"))
    else:
        subprocess.run(
            [sys.executable, "-m", "rolebench.cli.main", "evaluate", "--model", "baseline:rolegpt"]
            + ["--tasks", "rolebench_demo", "--output", str(source), "--no-progress"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    for number in range(1, rows):
        target = shutil.copytree(source, root / f"model-{number}")
        scale = 1 - 0.01 * number
        results = read_results(target)
        results.config.model = {**results.config.model, "spec": f"model {number}", "name": f"model {number}"}
        for task, entry in results.results.items():
            records = read_samples(target, task)
            scores = [
                {
                    p: {m: None if v is None else v * scale for m, v in block.items()}
                    for p, block in r.protocol_scores.items()
                }
                for r in records
            ]
            random.Random(number).shuffle(scores)
            records = [
                r.model_copy(update={"protocol_scores": s}) for r, s in zip(records, scores, strict=True)
            ]
            entry.samples_sha256 = write_samples(target, task, records)
        write_results(target, results)
        subprocess.run(  # its results.json computed again from the new samples
            [sys.executable, "-m", "rolebench.cli.main", "score", str(target), "--protocol", "rolebench"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return root


@contextmanager
def without_intervals() -> Iterator[None]:
    """The build as it was before rank intervals: no per-item scores read, computed or copied."""
    with (
        mock.patch.object(boards_module, "read_item_scores", lambda path, results: {}),
        mock.patch.object(boards_module, "add_rank_intervals", lambda board, scores: None),
    ):
        yield


def timed(function: Callable[[], Any], repeat: int) -> float:
    """The best CPU time of `repeat` calls (the machine is shared: CPU time, not wall)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        function()
        best = min(best, time.process_time() - start)
    return best


def board_items(
    board: Board, scores: Mapping[str, RunScores]
) -> tuple[dict[str, TaskItems], Layout, list[str]]:
    """The largest board's items as the ranking reads them."""
    ranked = [r for r in board.rows if r.rank is not None]
    protocols = list(dict.fromkeys([board.protocol, "rolebench"]))
    items = [_row_items(r, scores) for r in ranked]
    tasks = {}
    for split in present_splits(ranked[0]):
        built = _task_items(split, [i[split] for i in items if i], protocols)
        assert built is not None
        tasks[split] = built[0]
    derived = {f"{p}:avg": [f"{p}:{m}" for m in ("cus", "raw", "spe")] for p in protocols}
    return tasks, Layout({board.split: list(tasks)}, frozenset(), derived), protocols


def loop_way(
    tasks: Mapping[str, TaskItems], protocol: str, settings: Resampling
) -> list[tuple[int, int] | None]:
    """Rank intervals the obvious way: per resample, draw each task's items, every row's avg, the ranks."""
    rng = np.random.default_rng(settings.seed)
    rows = next(iter(tasks.values())).values.shape[0]
    ranks = np.empty((settings.resamples, rows))
    for r in range(settings.resamples):
        metrics: dict[str, list[np.ndarray]] = {}
        for items in tasks.values():
            drawn = items.values[:, rng.integers(0, items.n, items.n), :]
            for c, column in enumerate(items.columns):
                if column.startswith(f"{protocol}:"):
                    metrics.setdefault(column, []).append(np.nanmean(drawn[:, :, c], axis=1))
        avg = np.nanmean([np.mean(v, axis=0) for v in metrics.values()], axis=0)
        ranks[r] = [1 + np.sum(avg > avg[i]) for i in range(rows)]
    bounds = [interval(ranks[:, i], settings.confidence) for i in range(rows)]
    return [None if b is None else (int(b[0]), int(b[1])) for b in bounds]


def intervals_work(paths: list[Path], scratch: Path) -> Callable[[], None]:
    """Exactly what rank intervals add to a build, to be timed alone: the ranked runs' per-item scores read,
    every board's intervals computed, the scores written beside the copies."""
    found = boards_module.find_results(paths)
    runs = [(read_results(path), name) for path, name in found]
    boards = boards_module.build_boards(runs)
    needed = {run for b in boards if not b.reference for run in boards_module.ranked_together(b)}
    chosen = [
        (path, name, results)
        for (path, name), (results, _) in zip(found, runs, strict=True)
        if name in needed
    ]

    def work() -> None:
        scores = {name: read_item_scores(path, results) for path, name, results in chosen}
        for name, run_scores in scores.items():
            write_item_scores(scratch / name, run_scores)
        for board in boards:
            add_rank_intervals(board, scores)

    return work


def measure(paths: list[Path], out: Path, repeat: int) -> list[str]:
    """One table row's cells for `paths` (after a first, untimed build: imports and templates warm)."""
    build_module.build(paths, out)
    plain, full = float("inf"), float("inf")
    for _ in range(repeat):  # one for one, so that both see the same load
        with without_intervals():
            plain = min(plain, timed(lambda: build_module.build(paths, out), 1))
        full = min(full, timed(lambda: build_module.build(paths, out), 1))
    extra = timed(intervals_work(paths, out / "scratch"), max(repeat, 5))
    ours = [b for b in collect(paths) if not b.reference]
    ranked = sum(1 for b in ours for r in b.rows if r.rank is not None)
    largest = max(ours, key=lambda b: sum(r.rank is not None for r in b.rows))
    found = boards_module.find_results(paths)
    scores = {name: read_item_scores(path, read_results(path)) for path, name in found}
    tasks, layout, protocols = board_items(largest, scores)
    column = f"{protocols[0]}:avg"
    mine_s = timed(lambda: rank_intervals(tasks, layout, largest.split, [column], RANKING), repeat)
    mine = rank_intervals(tasks, layout, largest.split, [column], RANKING)[column].rank_intervals
    loop_s = timed(lambda: loop_way(tasks, protocols[0], RANKING), 1)
    differ = sum(a != b for a, b in zip(mine, loop_way(tasks, protocols[0], RANKING), strict=True))
    rows, n = next(iter(tasks.values())).values.shape[0], sum(t.n for t in tasks.values())
    return [
        str(len(ours)),
        str(ranked),
        f"{plain:.3f}",
        f"{full:.3f}",
        f"{100 * (full - plain) / plain:+.1f}%",
        f"{extra:.4f} ({100 * extra / plain:.1f}%)",
        f"{rows} x {n:,}",
        f"{mine_s:.4f}",
        f"{loop_s:.4f}",
        f"**{loop_s / mine_s:.1f}x**",
        f"{differ} of {rows}",
    ]


def _name(paths: list[Path]) -> str:
    return ", ".join(str(p.relative_to(REPO_ROOT)) if p.is_relative_to(REPO_ROOT) else str(p) for p in paths)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--demo", action="store_true", help="a board of the packaged demo built here")
    parser.add_argument("--rows", type=int, default=8, help="with --demo: the board's ranked rows")
    parser.add_argument("--from", dest="source", type=Path, help="with --demo: copy this run, not the demo's")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-ranks-"))
    defaults = [REPO_ROOT / "leaderboard" / "results", REPO_ROOT / "runs" / "leaderboard"]
    try:
        inputs = (
            [[board_runs(work / "runs", args.rows, args.source)]] if args.demo else [[p] for p in args.paths]
        )
        inputs = inputs or [[p] for p in defaults if p.is_dir()]
        print(
            "| input | boards | ranked rows | build without s | build with s | added | intervals' own work s "
            "| largest board: rows x items | ours s | loop s | ratio | intervals that differ |"
        )
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
        for paths in inputs:
            name = (
                (f"{args.source.name} x {args.rows}" if args.source else "demo board")
                if args.demo
                else _name(paths)
            )
            print("| " + " | ".join([name, *measure(paths, work / "out", args.repeat)]) + " |")
            if args.demo:  # and again from the folder it built (results.json + item_scores.json copies)
                copies = [work / "out" / "results"]
                print(
                    "| "
                    + " | ".join([f"{name}, built", *measure(copies, work / "again", args.repeat)])
                    + " |"
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
