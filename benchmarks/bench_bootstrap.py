"""The per-metric bootstrap interval of results.json (`rolebench.scoring.stats.bootstrap_ci`): numpy against
the loop it replaced, and what it makes of `rolebench score`.

Part `interval`: per-sample scores of real sizes (the packaged demo's 27 items up to English role
generalization's 7,534; `--rows` caps them), three kinds of values (ROUGE-L floats, 0/1, halves as a judge's
ties give), 1,000 resamples, seed 0. The obvious way is the one every earlier version ran: one
`random.Random(seed).choices` draw per resample and a Python `sum`. Both must give the very same interval
(equal floats, not close ones); reported: CPU seconds of each and their ratio.

Part `score`: `rolebench score` on a `baseline:rolegpt` run of a whole split (`--task`, needs the RoleBench
files) with the bootstrap as it is and with the loop put back, alternately, `--repeats` rounds, best CPU time
of each; the results.json of both must be equal.

    python -m benchmarks.bench_bootstrap [--part all|interval|score] [--repeats 5] [--rows N] [--task T]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rolebench.scoring import stats

SIZES = (27, 239, 1451, 4750, 7534)  # the demo, zh specific, zh general, eng instruct specific, eng role


def loop_interval(
    values: Sequence[float], *, resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float] | None:
    """The obvious way (and rolebench's before): one seeded `choices` draw and one `sum` per resample."""
    n = len(values)
    if n < 2 or resamples < 1:
        return None
    rng = random.Random(seed)
    data = list(values)
    return stats.percentile_interval([sum(rng.choices(data, k=n)) / n for _ in range(resamples)], confidence)


def best_cpu(work: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeats):
        started = time.process_time()
        result = work()
        best = min(best, time.process_time() - started)
    return best, result


def interval_part(args: argparse.Namespace) -> list[dict[str, Any]]:
    rng = random.Random(7)
    makers: dict[str, Callable[[], float]] = {
        "ROUGE-L floats": rng.random,
        "0/1": lambda: float(rng.random() < 0.3),
        "halves": lambda: rng.choice((0.0, 0.5, 1.0)),
    }
    rows = []
    for size in SIZES:
        n = min(size, args.rows) if args.rows else size
        for kind, make in makers.items():
            values = [make() for _ in range(n)]
            ours_s, ours = best_cpu(lambda v=values: stats.bootstrap_ci(v), args.repeats)
            loop_s, loop = best_cpu(lambda v=values: loop_interval(v), args.repeats)
            rows.append(
                {
                    "items": n,
                    "values": kind,
                    "ours_s": round(ours_s, 4),
                    "loop_s": round(loop_s, 4),
                    "ratio": round(loop_s / ours_s, 1) if ours_s else None,
                    "identical": ours == loop,
                }
            )
    return rows


def score_part(args: argparse.Namespace) -> dict[str, Any]:
    from rolebench import evaluate, score
    from rolebench.scoring import aggregate

    data = os.environ.get("ROLEBENCH_DATA")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["ROLEBENCH_CACHE"] = str(Path(tmp) / "cache")  # never the user's cache
        run = Path(tmp) / "rolegpt"
        evaluate(
            "baseline:rolegpt", (args.task,), output=run, data_dir=data, limit=args.limit, progress=False
        )
        score(run)  # the floors remembered: both ways time the same work but the interval
        ours = aggregate.bootstrap_ci
        times: dict[str, list[float]] = {"numpy": [], "loop": []}
        documents: dict[str, Any] = {}
        try:
            for _ in range(args.repeats):
                for way in times:
                    aggregate.bootstrap_ci = ours if way == "numpy" else loop_interval
                    started = time.process_time()
                    score(run)
                    times[way].append(time.process_time() - started)
                    document = json.loads((run / "results.json").read_text(encoding="utf-8"))
                    documents[way] = document["results"]
        finally:
            aggregate.bootstrap_ci = ours
    best = {way: min(values) for way, values in times.items()}
    return {
        "task": args.task,
        "limit": args.limit,
        "score_numpy_s": round(best["numpy"], 3),
        "score_loop_s": round(best["loop"], 3),
        "ratio": round(best["loop"] / best["numpy"], 2),
        "results_identical": documents["numpy"] == documents["loop"],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("all", "interval", "score"), default="all")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rows", type=int, default=0, help="cap the items per interval (0: real sizes)")
    parser.add_argument("--task", default="rolebench_eng_instruct_specific")
    parser.add_argument("--limit", type=int, default=None, help="--limit of the run `score` is timed on")
    args = parser.parse_args(argv)
    report: dict[str, Any] = {}
    if args.part in ("all", "interval"):
        report["interval"] = interval_part(args)
        for row in report["interval"]:
            print(
                f"| {row['items']:,} | {row['values']} | {row['ours_s']} | {row['loop_s']} | "
                f"**{row['ratio']}x** | {'yes' if row['identical'] else 'NO'} |"
            )
    if args.part in ("all", "score"):
        if not os.environ.get("ROLEBENCH_DATA") and args.task != "rolebench_demo":
            print("part score: set ROLEBENCH_DATA to the RoleBench files (or --task rolebench_demo)")
            return 2
        report["score"] = score_part(args)
    print(json.dumps(report, indent=2))
    identical = all(r["identical"] for r in report.get("interval", [])) and report.get("score", {}).get(
        "results_identical", True
    )
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
