"""Eliciting: what the paper's prompting methods cost, and what retrieving their demonstrations costs.

Part `context`: the embedded model (`smollm2:135m`, SmolLM2-135M-Instruct Q4_1 on llama.cpp) answers the
packaged demo (27 items, its roles' scripts ship with it) once per method: zero-shot, few-shot-prompt
and few-shot-dialogue with `--shots` demonstrations. Each run starts from an empty store (nothing
cached); reported per method: mean prompt tokens, the wall time of the generation step, seconds per
answer as the backend measured them, the scores, and the ratios against zero-shot measured in the
same round. Rounds repeat the three methods in turn (so machine load falls on all of them alike); the
median round is reported.

Part `retrieval`: the demonstrations of a whole split, the cost `--elicitation few-shot-*` adds before
any model runs: `plan_tasks` of `rolebench_eng_instruct_specific` (4,750 items, 95 roles) zero-shot and
with `--shots` demonstrations, best of `--repeats`. The released role scripts are not in the local copy
of RoleBench, so each role gets a synthetic script in the Hub layout, `--pairs` dialogue pairs of words
drawn (seeded) from the roles' descriptions and questions, 1,000 by default (RoleBench's scripts hold
hundreds to a few thousand lines per role).

    python -m benchmarks.bench_elicitation [--part all|context|retrieval] [--shots 3] [--repeats 3]
        [--model smollm2:135m] [--model-args K=V,...] [--max-new-tokens N] [--pairs 1000] [--limit N]
        [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

METHODS = ("zero-shot", "few-shot-prompt", "few-shot-dialogue")
SPLIT_TASK = "rolebench_eng_instruct_specific"


def run_method(args: argparse.Namespace, method: str, out: Path) -> dict[str, Any]:
    from rolebench import evaluate
    from rolebench.run.elicitation import Elicitation

    elicitation = Elicitation() if method == "zero-shot" else Elicitation(method, args.shots)
    started = time.perf_counter()
    results = evaluate(
        args.model,
        "rolebench_demo",
        output=out,
        elicitation=elicitation.method,
        shots=elicitation.shots or None,
        max_new_tokens=args.max_new_tokens,
        model_args=args.model_args,
        progress=False,
    )
    wall = time.perf_counter() - started
    tasks = list(results.results.values())
    group = results.groups["rolebench_demo"].model_dump()
    return {
        "method": elicitation.label(),
        "items": sum(t.n for t in tasks),
        "prompt_tokens": weighted(
            [(t.context.prompt_tokens_mean, t.context.n_prompt_tokens) for t in tasks if t.context]
        ),
        "generation_s": results.config.timings["generation_s"],
        "wall_s": wall,
        "seconds_per_answer": weighted(
            [(t.context.seconds_mean, t.context.n_timed) for t in tasks if t.context]
        ),
        "answer_tokens": weighted(
            [(t.lengths.answer_tokens_mean, t.n_generated) for t in tasks if t.lengths]
        ),
        **{k: group.get(k) for k in ("cus", "raw", "spe", "avg")},
        "f_avg": (group.get("rolebench") or {}).get("avg"),
    }


def weighted(values: list[tuple[float | None, int]]) -> float | None:
    """The mean of values weighted by their counts; None when none was measured."""
    found = [(v, n) for v, n in values if v is not None and n]
    return sum(v * n for v, n in found) / sum(n for _, n in found) if found else None


def ratio(value: float | None, zero: float | None) -> float | None:
    return value / zero if value is not None and zero else None


def text(value: float | None, digits: int) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def context_part(args: argparse.Namespace, work: Path) -> list[dict[str, Any]]:
    rounds: list[dict[str, dict[str, Any]]] = []
    for r in range(args.repeats):
        rounds.append({m: run_method(args, m, work / f"r{r}-{m}") for m in METHODS})
    median_round = sorted(rounds, key=lambda x: x["zero-shot"]["generation_s"])[len(rounds) // 2]
    rows = []
    for method in METHODS:
        row = dict(median_round[method])
        zero = median_round["zero-shot"]
        row["prompt_x"] = ratio(row["prompt_tokens"], zero["prompt_tokens"])
        row["generation_x"] = ratio(row["generation_s"], zero["generation_s"])
        row["generation_s_rounds"] = [x[method]["generation_s"] for x in rounds]
        rows.append(row)
    return rows


def synthetic_data(source: Path, target: Path, pairs: int) -> Path:
    """The real English instruction-generalization files (linked) and a synthetic script per role."""
    (target / "profiles-eng").mkdir(parents=True)
    (target / "profiles-eng" / "desc.json").symlink_to(source / "profiles-eng" / "desc.json")
    (target / "rolebench-eng").symlink_to(source / "rolebench-eng")
    roles = json.loads((source / "profiles-eng" / "desc.json").read_text(encoding="utf-8"))
    test = source / "rolebench-eng/instruction-generalization/role_specific/test.jsonl"
    vocabulary = " ".join(roles.values()).split()
    vocabulary += " ".join(json.loads(line)["question"] for line in test.open(encoding="utf-8")).split()
    rng = random.Random(0)
    for role in roles:
        with (target / "profiles-eng" / f"profiles-eng-{role}.jsonl").open("w", encoding="utf-8") as f:
            for i in range(pairs):
                for speaker, n in (("Someone", rng.randint(4, 20)), (role, rng.randint(5, 30))):
                    text = " ".join(rng.choices(vocabulary, k=n))
                    line = {"act_id": i // 20, "diag_id": i, "role": speaker, "content": text}
                    f.write(json.dumps(line, ensure_ascii=False) + "\n")
    return target


def retrieval_part(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    from rolebench.data.resolve import resolve_source
    from rolebench.evaluation.plan import plan_tasks
    from rolebench.run.definition import RunDefinition
    from rolebench.run.elicitation import Elicitation
    from rolebench.tasks.catalogue import resolve

    source = Path(os.environ.get("ROLEBENCH_DATA") or "../shared/rolebench")
    data = synthetic_data(source, work / "data", args.pairs)
    specs, _ = resolve([SPLIT_TASK], ())
    times: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for label, elicitation in (
        ("zero-shot", Elicitation()),
        ("few-shot", Elicitation("few-shot-dialogue", args.shots)),
    ):
        best, best_cpu = float("inf"), float("inf")
        for _ in range(args.repeats):
            definition = RunDefinition(
                model="baseline:rolegpt",
                tasks=(SPLIT_TASK,),
                limit=args.limit,
                limit_mode="first",
                elicitation=elicitation.method,
                shots=elicitation.shots or None,
            )
            started, started_cpu = time.perf_counter(), time.process_time()
            [plan] = plan_tasks(definition, specs, resolve_source(str(data)))
            best = min(best, time.perf_counter() - started)
            best_cpu = min(best_cpu, time.process_time() - started_cpu)
        times[label], cpu[label] = best, best_cpu
        items, roles = len(plan.requests), len(plan.scripts) or len({s.role for s in plan.samples})
    return {
        "task": SPLIT_TASK,
        "items": items,
        "roles": roles,
        "pairs_per_role": args.pairs,
        "shots": args.shots,
        "plan_zero_shot_s": times["zero-shot"],
        "plan_few_shot_s": times["few-shot"],
        "retrieval_adds_s": times["few-shot"] - times["zero-shot"],
        "plan_zero_shot_cpu_s": cpu["zero-shot"],
        "plan_few_shot_cpu_s": cpu["few-shot"],
        "retrieval_adds_cpu_s": cpu["few-shot"] - cpu["zero-shot"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["all", "context", "retrieval"], default="all")
    parser.add_argument("--model", default="smollm2:135m")
    parser.add_argument("--model-args", default="", help="backend options, e.g. n_threads=1")
    parser.add_argument("--shots", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-new-tokens", type=int, help="default: the task files' limits")
    parser.add_argument("--pairs", type=int, default=1000, help="dialogue pairs per synthetic role script")
    parser.add_argument("--limit", type=int, help="retrieval: the first N items only")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    report: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "load": os.getloadavg()}}
    with tempfile.TemporaryDirectory(prefix="bench-elicitation-") as tmp:
        if args.part in ("all", "retrieval"):
            report["retrieval"] = retrieval_part(args, Path(tmp) / "retrieval")
            r = report["retrieval"]
            print(
                f"retrieval: {r['items']} items of {r['task']}, {r['roles']} roles x {r['pairs_per_role']} "
                f"pairs, {r['shots']} shots: retrieval adds {r['retrieval_adds_s']:.2f} s wall "
                f"({r['retrieval_adds_cpu_s']:.2f} s CPU) to planning "
                f"({r['plan_zero_shot_s']:.2f} s zero-shot)"
            )
        if args.part in ("all", "context"):
            report["context"] = context_part(args, Path(tmp) / "context")
            print(f"\n{args.model} on rolebench_demo, median of {args.repeats} rounds:\n")
            print(
                "| method | prompt tokens | x zero-shot | generation s | x zero-shot | s/answer "
                "| CUS | RAW | SPE | avg | F avg |"
            )
            print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
            for row in report["context"]:
                cells = [
                    text(row["prompt_tokens"], 0),
                    text(row["prompt_x"], 2),
                    text(row["generation_s"], 1),
                    text(row["generation_x"], 2),
                    text(row["seconds_per_answer"], 2),
                    *(text(row[k], 4) for k in ("cus", "raw", "spe", "avg", "f_avg")),
                ]
                print(f"| {row['method']} | " + " | ".join(cells) + " |")
    report["machine"]["load_after"] = os.getloadavg()
    print("\n" + json.dumps(report, indent=1, default=str))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
