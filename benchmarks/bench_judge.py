"""Judge throughput: 1,000 pairs (2,000 requests, both orders) against the local fake
OpenAI-compatible server answering after 100 ms, at concurrency 32, then the fully cached re-run.

The concurrency-bound ideal is requests x latency / concurrency = 2000 x 0.1 s / 32 = 6.25 s;
efficiency = ideal / achieved. Reported: `judge_s`, the whole `rolebench.judge` in a fresh process
(the adapter's imports, prompts, cache look-ups, requests, results); `request_phase_s`, first request
to last completion; `adapter_floor_s`, the bare `openai:` adapter sending as many judge prompts
(the floor under the judge on this machine); `cached_rerun_s`, the same `rolebench.judge` again (no
request). The server runs in its own process, as a real one would, so its threads do not compete
with the judge's for this process's GIL.

    python -m benchmarks.bench_judge [--pairs 1000] [--concurrency 32] [--latency 0.1] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.fake_server import served

ROOT = Path(__file__).resolve().parent.parent


def verdict(body: dict[str, Any]) -> str:
    """The judge: prefers the answer marked GOOD (read back from the prompt)."""
    user = body["messages"][-1]["content"]
    start = user.index('[\n  {\n    "model": "model_a"')
    shown, _ = json.JSONDecoder().raw_decode(user, start)
    best = "model_a" if shown[0]["answer"].startswith("GOOD") else "model_b"
    other = "model_b" if best == "model_a" else "model_a"
    return repr(
        [
            {"model": best, "reason": "more in character", "rank": 1},
            {"model": other, "reason": "flatter", "rank": 2},
        ]
    )


def make_run(folder: Path, pairs: int) -> Path:
    """A finished run of `pairs` answers (a run folder as `rolebench evaluate` writes it)."""
    from rolebench.evaluation.derive import write_derived
    from rolebench.results.provenance import now_iso
    from rolebench.results.schema import RunConfig, SampleRecord
    from rolebench.run.definition import RunDefinition
    from rolebench.run.folder import RunFolder
    from rolebench.run.record import RunRecord

    records = [
        SampleRecord(
            **{
                "id": f"bench/{i}",
                "index": i,
                "role": "Captain Mira Vance",
                "question": f"Question {i}?",
                "description": "A starship captain who speaks in short bursts.",
                "language": "en",
                "output": (f"GOOD answer {i}" if i % 4 else f"weak answer {i}"),
                "baseline": f"baseline {i}",
                "messages": [],
                "references": [f"reference {i}"],
                "scores": {},
            }
        )
        for i in range(pairs)
    ]
    definition = RunDefinition(model="baseline:rolegpt", tasks=("bench",))
    config = RunConfig(
        run=definition.record(), model={"spec": definition.model}, tasks={"bench": {"split": "demo_general"}}
    )
    run = RunFolder(folder)
    folder.mkdir(parents=True, exist_ok=True)
    record = RunRecord(definition, config, {"all": ["bench"]}, now_iso())
    record.wrote("bench", run.write_samples("bench", records))
    record.write(run)
    write_derived(run, record)
    return folder


def timed_judge(run: Path, base_url: str, concurrency: int) -> tuple[float, float, dict[str, Any]]:
    """(wall seconds, CPU seconds of this process, all threads) of one `rolebench.judge`, and how it went
    (results.json's config.judge)."""
    import rolebench

    started, cpu = time.perf_counter(), time.process_time()
    results = rolebench.judge(
        run, "openai:fake-model", concurrency=concurrency, base_url=base_url, progress=False
    )
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    return (
        elapsed,
        cpu,
        {"judge": results.config.judge, "results": {t: r.model_dump() for t, r in results.results.items()}},
    )


def adapter_floor(base_url: str, pairs: int, concurrency: int) -> tuple[float, float]:
    """The bare `openai:` adapter on the same number of judge prompts: the floor under the judge."""
    from model_adapters import GenerationConfig, Request, load_model
    from rolebench.judging.config import load_judge_config

    judge = load_judge_config()
    requests = [
        Request(
            id=str(i),
            messages=judge.messages(
                role="Captain Mira Vance",
                description="A starship captain.",
                question=f"Floor {i}?",
                language="en",
                answers=(f"GOOD answer {i}", f"baseline {i}"),
            ),
        )
        for i in range(2 * pairs)
    ]
    adapter = load_model("openai:fake-model", base_url=base_url)
    started, cpu = time.perf_counter(), time.process_time()
    received = sum(1 for _ in adapter.generate(requests, GenerationConfig(concurrency=concurrency)))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    adapter.close()
    if received != len(requests):
        raise RuntimeError(f"the adapter answered {received} of {len(requests)} requests")
    return elapsed, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    with served(verdict, args.latency) as server, tempfile.TemporaryDirectory() as tmp:
        base_url = server.base_url
        os.environ["ROLEBENCH_CACHE"] = str(Path(tmp) / "cache")
        run = make_run(Path(tmp) / "run", args.pairs)
        cold, cold_cpu, report = timed_judge(run, base_url, args.concurrency)
        warm, _, again = timed_judge(run, base_url, args.concurrency)
        floor, floor_cpu = adapter_floor(base_url, args.pairs, args.concurrency)
    requests = report["judge"]["this_run"]["requests"]
    ideal = requests * args.latency / args.concurrency
    numbers = {
        "pairs": args.pairs,
        "requests": requests,
        "concurrency": args.concurrency,
        "latency_s": args.latency,
        "ideal_s": round(ideal, 3),
        "judge_s": round(cold, 3),
        "efficiency": round(ideal / cold, 3),
        "judge_cpu_s": round(cold_cpu, 3),
        "adapter_floor_cpu_s": round(floor_cpu, 3),
        "request_phase_s": report["judge"]["this_run"]["calling_s"],
        "request_phase_efficiency": round(ideal / report["judge"]["this_run"]["calling_s"], 3),
        "adapter_floor_s": round(floor, 3),
        "adapter_floor_efficiency": round(ideal / floor, 3),
        "cached_rerun_s": round(warm, 3),
        "cached_rerun_requests": again["judge"]["this_run"]["requests"],
        "server_requests": server.requests,
        "server_max_in_flight": server.max_in_flight,
        "win_rate": report["results"]["bench"]["win_rate"],
        "win_rate_lc": report["results"]["bench"]["win_rate_lc"],
        "cpus": os.cpu_count(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(numbers, indent=2))
    if args.json:
        args.json.write_text(json.dumps(numbers, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
