"""Sessions throughput: what the harness costs around the calls of `rolebench.sessions.play`.

N sessions of T turns (RoleBench-style roles), every player (candidate, opponent, judge) an `openai:`
model of the local fake OpenAI-compatible server (`tests/fake_openai.py`, in its own process), which
answers each request after a fixed latency L; the judge's verdicts are scripted
(`tests/sessions_scripted.judge`). Three ways to play the same sessions, each into a fresh store:

- `together`: the harness as it is: in each round the candidate's and the opponent's batches go out at
  the same time, each model at most `concurrency` requests in flight;
- `one side after the other`: the same, with the two sides asked in turn (`play(..., overlap=False)`);
- `one call at a time`: concurrency 1, sides in turn (RPBench-Auto's own loop: one request after another).

The latency-bound ideal of a way is its rounds of calls times L: an opening (N judge calls), then per
turn the answers (ceil(N / C) batches of L, twice when the sides take turns) and the verdicts (ceil(N / C)
batches). efficiency = ideal / wall; overhead = wall - ideal (the harness: prompts, store, parsing, log).
The server counts requests and the peak in flight (against the bound: C per model, 2C for both sides).
`floor`: the bare `openai:` adapters sending as many requests in the same phases (the two sides' batches
at once for `together`), no harness around them: the calls' own wall time on this machine;
harness = wall - floor.

    python -m benchmarks.bench_sessions [--sessions 32] [--turns 3] [--concurrency 16] [--latency 0.1]
                                        [--skip-serial] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.fake_server import served

ROOT = Path(__file__).resolve().parent.parent


def reply(body: dict[str, Any]) -> str:
    """The judge (model `judge`): the scripted one, the candidate winning odd rounds; the candidates:
    `<model> k: <the user's last line>`."""
    from model_adapters import Request
    from tests.sessions_scripted import judge

    if body["model"] == "judge":
        scripted = judge(lambda name, number, attempt: "candidate" if number % 2 else "opponent")
        return scripted.reply(Request(id="x", messages=body["messages"]))
    users = [m["content"] for m in body["messages"] if m["role"] == "user"]
    return f"<{body['model']}> {len(users)}: {users[-1]}"


def play_once(folder: Path, base_url: str, args: argparse.Namespace, way: str) -> dict[str, Any]:
    """One way of playing the sessions (see the module docstring): wall and CPU seconds, turns kept."""
    from model_adapters import GenerationConfig
    from rolebench.cached_model import CachedModel
    from rolebench.run.session_log import SessionLog
    from rolebench.sessions.loop import play
    from rolebench.sessions.settings import Players, SessionSettings
    from rolebench.storage.records import RecordStore
    from tests.sessions_scripted import header, role_items

    concurrency = 1 if way == "one call at a time" else args.concurrency
    store = RecordStore(folder / f"{way}.sqlite")
    models = [CachedModel(f"openai:{m}@{base_url}", {}, store) for m in ("cand", "opp", "judge")]
    players = Players(*models)
    config = GenerationConfig(concurrency=concurrency)
    settings = SessionSettings(turns=args.turns, seed=0, answer_config=config, judge_config=config)
    items = role_items(folder / "data", [f"Role{i}" for i in range(args.sessions)])
    log = SessionLog(folder / f"{way}.jsonl", header(settings, players))
    for model in models:
        model.adapter()  # loaded before the clock starts (the SDK's import is no part of a round)
    started, cpu = time.perf_counter(), time.process_time()
    played = play(items, players, settings, log, overlap=way == "together")
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    for model in models:
        model.close()
    batches = math.ceil(args.sessions / concurrency)
    per_turn = (1 if way == "together" else 2) + 1  # answer rounds + the verdicts
    ideal = (1 + args.turns * per_turn) * batches * args.latency
    return {
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "ideal_s": round(ideal, 3),
        "efficiency": round(ideal / wall, 3),
        "overhead_s": round(wall - ideal, 3),
        "calls": args.sessions * (1 + 3 * args.turns),  # openings, then two answers and a verdict a turn
        "turns_kept": played.turns,
        "concurrency": concurrency,
        "winners": [r["winner"] for r in log.records if r["turn"] > 0],
    }


def floor_once(base_url: str, args: argparse.Namespace, way: str) -> float:
    """The bare adapters on the same phases of requests as `way` (see the module docstring): seconds."""
    from concurrent.futures import ThreadPoolExecutor

    from model_adapters import GenerationConfig, Request, load_model

    concurrency = 1 if way == "one call at a time" else args.concurrency
    config = GenerationConfig(concurrency=concurrency)
    adapters = [load_model(f"openai:floor-{side}", base_url=base_url) for side in ("a", "b", "c")]

    def batch(index: int, phase: int) -> int:
        requests = [
            Request(id=str(i), messages=[{"role": "user", "content": f"phase {phase} request {i}"}])
            for i in range(args.sessions)
        ]
        return sum(1 for _ in adapters[index].generate(requests, config))

    started = time.perf_counter()
    batch(2, 0)  # the judge's openings
    for turn in range(1, args.turns + 1):
        if way == "together":
            with ThreadPoolExecutor(max_workers=2) as pool:
                list(pool.map(lambda index, turn=turn: batch(index, turn), (0, 1)))
        else:
            batch(0, turn)
            batch(1, turn)
        batch(2, turn)  # the verdicts
    elapsed = time.perf_counter() - started
    for adapter in adapters:
        adapter.close()
    return elapsed


def run_way(args: argparse.Namespace, way: str) -> dict[str, Any]:
    """One way against a server of its own (its peak in flight is that way's)."""
    with served(reply, args.latency, models=None) as server, tempfile.TemporaryDirectory() as tmp:
        found = play_once(Path(tmp), server.base_url, args, way)
        floor = floor_once(server.base_url, args, way)
    return {
        **found,
        "floor_s": round(floor, 3),
        "harness_s": round(found["wall_s"] - floor, 3),
        "harness_ms_per_call": round(1000 * (found["wall_s"] - floor) / found["calls"], 3),
        "server_requests": server.requests,  # the harness's and then the floor's: 2 x calls
        "server_max_in_flight": server.max_in_flight,
    }


def main() -> int:
    sys.path.insert(0, str(ROOT))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=32)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--skip-serial", action="store_true", help="leave out `one call at a time`")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    ways = ["together", "one side after the other"] + ([] if args.skip_serial else ["one call at a time"])
    found = {way: run_way(args, way) for way in ways}
    winners = {json.dumps(f.pop("winners")) for f in found.values()}
    together = found["together"]["wall_s"]
    numbers = {
        "sessions": args.sessions,
        "turns": args.turns,
        "concurrency": args.concurrency,
        "latency_s": args.latency,
        "ways": found,
        "same_sessions": len(winners) == 1,
        "speedup_vs": {
            way: round(f["wall_s"] / together, 2) for way, f in found.items() if way != "together"
        },
        "cpus": os.cpu_count(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(numbers, indent=2))
    if args.json:
        args.json.write_text(json.dumps(numbers, indent=2) + "\n")
    return 0 if numbers["same_sessions"] else 1


if __name__ == "__main__":
    sys.exit(main())
