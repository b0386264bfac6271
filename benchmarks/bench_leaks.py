"""What the leak checks cost: `rolebench data audit` of every local split, and what the train floor and
the `verbatim-references` measure add to `rolebench score`.

Part `audit`: `rolebench.data.audit.audit_source` over every released split of the data folder, against
the obvious alternative: pandas for the exact matches (`isin` and `merge` on the stripped texts, the
references and train answers exploded) and, for the 13-gram near-duplicates, every test question held
against every train question (the intersection of their n-gram sets, pair by pair). Both read the same
files; their counts must be equal (the script exits 1 otherwise). Best CPU time of `--repeats` (and the
wall time of the first audit of every split).

Part `score`: `rolebench score RUN --protocol rolebench` (`rolebench.evaluation.rescore.rescore`) on a
run of `baseline:rolegpt` over whole splits (`--tasks`, default the Chinese general and role-specific
splits and English instruction-generalization role-specific: every split whose RoleGPT answers are
local; the Chinese ones have their train files), the same code with and without the train floor and
the `verbatim-references` measure (both switched off), alternately, best CPU time of each over
`--repeats` rounds and the median of the rounds' ratios: warm (the floors and copying shares
remembered when the run was evaluated, `rolebench.scoring.remembered`: what `score` meets after
`evaluate`) and cold (an empty cache each time: the first time these items are seen). And the
verbatim measure (numpy,
`rolebench.scoring.copying`) against the per-item n-gram sets of the same rule, identical per answer.
The benchmark's cache lives in a temporary folder, never the user's.

    python -m benchmarks.bench_leaks [--part all|audit|score] [--repeats 5] [--rows N] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.bench_rouge import REPO_ROOT

TASKS = "rolebench_zh_general,rolebench_zh_specific,rolebench_eng_instruct_specific"


def data_folder() -> Path | None:
    import os

    data = Path(os.environ.get("ROLEBENCH_DATA", REPO_ROOT.parent / "shared" / "rolebench"))
    if (data / "rolebench-zh" / "general" / "train.jsonl").is_file():
        return data
    print(
        f"RoleBench files not found under {data}: set ROLEBENCH_DATA to a copy in the Hub layout",
        file=sys.stderr,
    )
    return None


# ---- audit --------------------------------------------------------------------------------------------


def pandas_audit(data: Path, split_ids: list[str], rows: int | None) -> dict[str, dict[str, int | None]]:
    """The audit's train counts the obvious way: pandas for exact matches, pairwise n-gram sets."""
    import pandas as pd

    from rolebench.data.audit import question_grams
    from rolebench.data.splits import get_split

    found: dict[str, dict[str, int | None]] = {}
    for split_id in split_ids:
        split = get_split(split_id)
        test_path, train_path = data / split.file("test.jsonl"), data / split.file("train.jsonl")
        if not test_path.is_file() or not train_path.is_file():
            continue
        test = pd.read_json(test_path, lines=True).head(rows) if rows else pd.read_json(test_path, lines=True)
        train = pd.read_json(train_path, lines=True)
        test["q"], train["q"] = test["question"].str.strip(), train["question"].str.strip()
        seen = test["q"].isin(set(train["q"]))
        pairs = test.merge(
            train[["role", "q"]].drop_duplicates(), on=["role", "q"], how="left", indicator=True
        )
        answers = set(train["generated"].explode().dropna().astype(str).str.strip())
        refs = test["generated"].explode().astype(str).str.strip()
        in_train = refs.isin(answers).groupby(level=0).any()
        train_grams = [question_grams(r, q) for r, q in zip(train["role"], train["question"], strict=True)]
        near = 0
        for role, question, was_seen in zip(test["role"], test["question"], seen, strict=True):
            grams = question_grams(role, question)
            if not was_seen and grams and any(grams & other for other in train_grams):
                near += 1
        found[split_id] = {
            "instruction_in_train": int(seen.sum()),
            "pair_in_train": int((pairs["_merge"] == "both").sum()),
            "reference_in_train": int(in_train.sum()),
            "instruction_near_train": near,
        }
    return found


def our_audit(data: Path, split_ids: list[str], rows: int | None) -> dict[str, dict[str, int | None]]:
    from rolebench.data.audit import audit_samples
    from rolebench.data.joins import train_index
    from rolebench.data.samples import load_samples
    from rolebench.data.source import DataSource
    from rolebench.data.splits import get_split

    source = DataSource("local", str(data))
    found: dict[str, dict[str, int | None]] = {}
    for split_id in split_ids:
        split = get_split(split_id)
        if source.path(split.file("test.jsonl"), required=False) is None:
            continue
        train = train_index(split, source)
        if train is None:
            continue
        samples = load_samples(split_id, source)[:rows] if rows else load_samples(split_id, source)
        audit = audit_samples(split, samples, train)
        found[split_id] = {k: audit.count(k) for k in ("instruction_in_train", "pair_in_train")} | {
            k: audit.count(k) for k in ("reference_in_train", "instruction_near_train")
        }
    return found


def best_wall(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Best CPU time of `repeats` calls (CPU, not wall: the machine is shared) and the last value."""
    best, value = float("inf"), None
    for _ in range(repeats):
        started = time.process_time()
        value = fn()
        best = min(best, time.process_time() - started)
    return best, value


def audit_part(data: Path, args: argparse.Namespace) -> dict[str, Any]:
    from rolebench.data.audit import audit_source
    from rolebench.data.layout import upstream_splits
    from rolebench.data.source import DataSource

    split_ids = [s.id for s in upstream_splits()]
    started = time.perf_counter()
    audit_source(DataSource("local", str(data)))
    wall = time.perf_counter() - started
    whole, _ = best_wall(lambda: audit_source(DataSource("local", str(data))), args.repeats)
    ours_s, ours = best_wall(lambda: our_audit(data, split_ids, args.rows), args.repeats)
    theirs_s, theirs = best_wall(lambda: pandas_audit(data, split_ids, args.rows), args.repeats)
    return {
        "every_local_split_s": round(whole, 3),
        "every_local_split_wall_s_first": round(wall, 3),
        "train_counts_s": round(ours_s, 3),
        "pandas_and_pairwise_s": round(theirs_s, 3),
        "speedup": round(theirs_s / ours_s, 1),
        "identical": ours == theirs,
        "counts": ours,
    }


# ---- score --------------------------------------------------------------------------------------------


def slow_copies(answer: str, references: list[str], question: str) -> bool:
    """The verbatim rule with Python sets of token tuples, one answer at a time."""
    from rolebench.scoring.copying import MIN_TOKENS, SPAN
    from rolebench.scoring.tokenize import tokenize_cjk_char

    def grams(tokens: list[str], n: int) -> set[tuple[str, ...]]:
        return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}

    answer_tokens, question_tokens = tokenize_cjk_char(answer), tokenize_cjk_char(question)
    for reference in references:
        tokens = tokenize_cjk_char(reference)
        n = min(SPAN, len(tokens))
        if n >= MIN_TOKENS and (grams(answer_tokens, n) - grams(question_tokens, n)) & grams(tokens, n):
            return True
    return False


def timed_rescores(run: Path, cache: Path, repeats: int, cold: bool) -> dict[str, float]:
    """Best CPU time of `rescore` with and without the train floor and the verbatim measure, alternately;
    `cold`: each one with an empty cache of remembered numbers (the first time these items are seen)."""
    import os

    from rolebench import score
    from rolebench.results.schema import Verbatim
    from rolebench.scoring import aggregate, floors

    held, measure = floors.held_floors, aggregate.verbatim
    times: dict[str, list[float]] = {"with": [], "without": []}
    try:
        for round_number in range(repeats):
            for name in times:
                if name == "with":
                    floors.held_floors, aggregate.verbatim = held, measure
                else:
                    floors.held_floors = lambda records: tuple(f for f in held(records) if f != "train")
                    aggregate.verbatim = lambda records, items=None: Verbatim()
                folder = cache / (f"cold-{round_number}-{name}" if cold else "warm")
                os.environ["ROLEBENCH_CACHE"] = str(folder)
                started = time.process_time()
                score(run, protocol="rolebench")
                times[name].append(time.process_time() - started)
    finally:
        floors.held_floors, aggregate.verbatim = held, measure
    ratios = sorted(w / o for w, o in zip(times["with"], times["without"], strict=True))
    return {**{name: min(values) for name, values in times.items()}, "median_ratio": ratios[len(ratios) // 2]}


def added(times: dict[str, float]) -> dict[str, Any]:
    """Best times with and without, what the additions add by them, and the median of the rounds' ratios."""
    return {
        "with_s": round(times["with"], 3),
        "without_s": round(times["without"], 3),
        "added_best": f"{times['with'] / times['without'] - 1:+.1%}",
        "added_median_round": f"{times['median_ratio'] - 1:+.1%}",
    }


def score_part(data: Path, args: argparse.Namespace) -> dict[str, Any]:
    import os

    from rolebench import evaluate
    from rolebench.run.folder import read_samples
    from rolebench.scoring.copying import copies_references

    tasks = tuple(args.tasks.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        run, cache = Path(tmp) / "rolegpt", Path(tmp) / "cache"
        os.environ["ROLEBENCH_CACHE"] = str(cache / "warm")  # never the user's cache
        evaluate("baseline:rolegpt", tasks, output=run, data_dir=str(data), limit=args.limit, progress=False)
        timed_rescores(run, cache, 1, cold=False)  # every protocol held, the numbers remembered
        warm = timed_rescores(run, cache, args.repeats, cold=False)
        cold = timed_rescores(run, cache, args.repeats, cold=True)
        records = [r for task in tasks for r in read_samples(run, task) if r.output is not None]
    answers = (
        [r.output or "" for r in records],
        [r.references for r in records],
        [r.question for r in records],
    )
    fast_s, fast = best_wall(lambda: copies_references(*answers), args.repeats)
    slow_s, slow = best_wall(
        lambda: [slow_copies(*item) for item in zip(*answers, strict=True)], args.repeats
    )
    return {
        "tasks": list(tasks),
        "items": len(records),
        "warm": added(warm),
        "cold": added(cold),
        "verbatim_numpy_s": round(fast_s, 4),
        "verbatim_sets_s": round(slow_s, 4),
        "verbatim_speedup": round(slow_s / fast_s, 1),
        "verbatim_identical": fast == slow,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("all", "audit", "score"), default="all")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rows", type=int, help="audit only the first N test items of each split")
    parser.add_argument("--limit", type=int, help="score a --limit N run instead of whole splits")
    parser.add_argument("--tasks", default=TASKS, help=f"the run's tasks (default {TASKS})")
    args = parser.parse_args(argv)
    data = data_folder()
    if data is None:
        return 2
    report: dict[str, Any] = {}
    if args.part in ("all", "audit"):
        report["audit"] = audit_part(data, args)
    if args.part in ("all", "score"):
        report["score"] = score_part(data, args)
    print(json.dumps(report, indent=2, ensure_ascii=False))
    identical = [report[p].get("identical", report[p].get("verbatim_identical")) for p in report]
    return 0 if all(identical) else 1


if __name__ == "__main__":
    sys.exit(main())
