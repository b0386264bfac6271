"""Our llama.cpp path against llama.cpp's own throughput, one-at-a-time llama-cpp-python, and hf: batched.

One workload: `--n` RoleBench requests (RoleGPT system prompt + question, evenly spaced over
`--splits`), greedy, `--repetition-penalty`, `--max-new-tokens`, `--threads` CPU threads for every
backend. Cases, each run in turn for `--repeats` rounds (best kept), models loaded beforehand:

- `smollm2:135m` batch B: our adapter, B sequences decoded together (continuous batching, prefix reuse);
- `smollm2:135m` batch 1: the same adapter, one sequence at a time;
- `create_chat_completion`: llama-cpp-python's high-level call, one request at a time (what the adapter
  did before batching, and what most harnesses do);
- `hf:` batch B: transformers on the same GGUF dequantized to float32 (`gguf_file=`);
- `llama-batched-bench`: llama.cpp's own C++ tool (`--llama-cpp-bin`, built from the sources llama-cpp-
  python vendors by `benchmarks/build_llama_cpp.sh`), B sequences of the workload's mean decoded
  prompt and mean answer length, the same threads.

Rates: generated tokens per wall second (the answers), and processed tokens per wall second (prompt
tokens decoded + generated: the unit llama-batched-bench reports as S t/s). Our batched adapter is held
against llama.cpp's own S t/s for the same shape; the goal is at least 0.9.

    bash benchmarks/build_llama_cpp.sh   # once: build/llama.cpp/bin
    python -m benchmarks.bench_llamacpp_vs_hf --data-dir ../shared/rolebench \
        --llama-cpp-bin build/llama.cpp/bin
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import socket
import subprocess
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.bench_evaluate_vs_lmeval import rolebench_requests, smollm2_gguf
from model_adapters import GenerationConfig, Request, load_model
from model_adapters.llamacpp_slots import common_prefix


@dataclass
class Run:
    name: str
    batch: int
    prompt_decoded: int  # prompt tokens actually decoded (the rest came from a cache)
    generated: int
    wall: float
    texts: dict[str, str]

    @property
    def gen_rate(self) -> float:
        return self.generated / self.wall

    @property
    def processed_rate(self) -> float:
        return (self.prompt_decoded + self.generated) / self.wall


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None, help="RoleBench folder (default $ROLEBENCH_DATA)")
    parser.add_argument("--splits", default="eng_role_general,eng_role_specific")
    parser.add_argument("--n", type=int, default=32, help="requests in all")
    parser.add_argument("--max-new-tokens", type=int, default=160)
    parser.add_argument("--repetition-penalty", type=float, default=1.15)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument(
        "--llama-cpp-bin",
        default=os.environ.get("LLAMA_CPP_BIN"),
        help="folder with llama.cpp's llama-batched-bench (benchmarks/build_llama_cpp.sh)",
    )
    parser.add_argument("--skip-hf", action="store_true", help="leave out transformers (slow to load)")
    return parser.parse_args()


def ours(adapter: Any, name: str, requests: list[Request], config: GenerationConfig) -> Run:
    adapter._close_workers()  # a cold cache each round: no prefix carried over from the last run
    started = time.perf_counter()
    got = {r.id: g for r, g in adapter.generate(requests, config)}
    wall = time.perf_counter() - started
    decoded = sum(w.prompt_tokens_decoded for w in adapter.workers)
    generated = sum(g.usage.completion_tokens for g in got.values())
    return Run(name, config.batch_size, decoded, generated, wall, {k: g.text or "" for k, g in got.items()})


def high_level(
    llm: Any, tokens: dict[str, list[int]], requests: list[Request], config: GenerationConfig
) -> Run:
    """One request at a time; llama-cpp-python decodes only what differs from the previous prompt."""
    started, prompt, generated, texts, previous = time.perf_counter(), 0, 0, {}, []
    llm.reset()
    for request in requests:
        prompt += len(tokens[request.id]) - min(
            common_prefix(previous, tokens[request.id]), len(previous) - 1
        )
        previous = tokens[request.id]
        out = llm.create_chat_completion(
            messages=request.messages,
            temperature=0.0,
            top_p=1.0,
            top_k=0,
            min_p=0.0,
            seed=0,
            repeat_penalty=config.repetition_penalty,
            max_tokens=config.max_new_tokens,
        )
        texts[request.id] = out["choices"][0]["message"]["content"]
        generated += min(out["usage"]["completion_tokens"], config.max_new_tokens)
    return Run("create_chat_completion", 1, prompt, generated, time.perf_counter() - started, texts)


def hf_run(adapter: Any, requests: list[Request], config: GenerationConfig) -> Run:
    started = time.perf_counter()
    got = {r.id: g for r, g in adapter.generate(requests, config)}
    wall = time.perf_counter() - started
    prompt = sum(g.usage.prompt_tokens for g in got.values())
    generated = sum(g.usage.completion_tokens for g in got.values())
    return Run(
        "hf: gguf_file= (float32)",
        config.batch_size,
        prompt,
        generated,
        wall,
        {k: g.text or "" for k, g in got.items()},
    )


def native(bin_dir: Path, threads: int, batch: int, npp: int, ntg: int) -> tuple[float, float, str]:
    """llama-batched-bench's (S_TG t/s, S t/s) for `batch` sequences of npp prompt + ntg generated tokens."""
    command = [
        str(bin_dir / "llama-batched-bench"),
        "-m",
        str(smollm2_gguf()),
        "-c",
        str(batch * (npp + ntg + 256)),
        "-b",
        "512",
        "-ub",
        "512",
        "-npp",
        str(npp),
        "-ntg",
        str(ntg),
        "-npl",
        str(batch),
        "-t",
        str(threads),
        "-tb",
        str(threads),
        "-fa",
        "off",
    ]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    row = [line for line in out.splitlines() if re.match(r"^\|\s+\d", line)][-1]
    cells = [c.strip() for c in row.strip("|").split("|")]
    return float(cells[7]), float(cells[9]), " ".join(command[1:]).replace(str(smollm2_gguf()), "SMOLLM2")


def server(
    bin_dir: Path, threads: int, batch: int, n_cells: int, requests: list[Request], config: GenerationConfig
) -> Run:
    """llama.cpp's own server (`batch` parallel slots, continuous batching, prompt cache) answering the
    same requests `batch` at a time over HTTP on 127.0.0.1; processed = decoded prompt + predicted tokens."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [
        str(bin_dir / "llama-server"),
        "-m",
        str(smollm2_gguf()),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "-np",
        str(batch),
        "-c",
        str(batch * n_cells),
        "-t",
        str(threads),
        "-tb",
        str(threads),
        "-fa",
        "off",
        "-b",
        "512",
        "-ub",
        "512",
        "--jinja",
        "--no-warmup",
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=1) as response:
                    if response.status == 200:
                        break
            except OSError:
                time.sleep(0.1)

        def ask(request: Request) -> tuple[str, str, int, int]:
            body = {
                "messages": request.messages,
                "temperature": 0.0,
                "top_k": 0,
                "top_p": 1.0,
                "min_p": 0.0,
                "repeat_penalty": config.repetition_penalty,
                "repeat_last_n": 64,
                "max_tokens": config.max_new_tokens,
                "cache_prompt": True,
            }
            call = urllib.request.Request(
                f"{url}/v1/chat/completions",
                data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(call, timeout=600) as response:
                out = json.load(response)
            timings = out.get("timings", {})
            return (
                request.id,
                out["choices"][0]["message"]["content"],
                int(timings.get("prompt_n", 0)),
                int(out["usage"]["completion_tokens"]),
            )

        started = time.perf_counter()
        with ThreadPoolExecutor(batch) as pool:
            answers = list(pool.map(ask, requests))
        wall = time.perf_counter() - started
    finally:
        process.terminate()
        process.wait()
    return Run(
        "llama-server (llama.cpp's own)",
        batch,
        sum(a[2] for a in answers),
        sum(a[3] for a in answers),
        wall,
        {a[0]: a[1] for a in answers},
    )


def main() -> None:
    args = parse_args()
    logging.disable(logging.WARNING)
    splits = args.splits.split(",")
    requests = [r for s in splits for r in rolebench_requests(args.data_dir, args.n // len(splits), s)]
    config = GenerationConfig(
        max_new_tokens=args.max_new_tokens,
        repetition_penalty=args.repetition_penalty,
        batch_size=args.batch_size,
    )
    single = GenerationConfig(**{**config.as_dict(), "batch_size": 1})
    adapter = load_model("smollm2:135m", n_threads=str(args.threads))
    tokens = {r.id: adapter.model.chat(r.messages)[0] for r in requests}
    from llama_cpp import Llama

    llm = Llama(
        model_path=str(smollm2_gguf()),
        n_ctx=4096,
        n_threads=args.threads,
        n_threads_batch=args.threads,
        verbose=False,
    )
    hf = None
    if not args.skip_hf:
        import torch

        torch.set_num_threads(args.threads)
        gguf = smollm2_gguf()
        hf = load_model(f"hf:{gguf.parent}", gguf_file=gguf.name, dtype="float32", device="cpu")
    best: dict[str, Run] = {}
    for _ in range(args.repeats):
        runs = [
            ours(adapter, f"smollm2:135m batch {args.batch_size}", requests, config),
            ours(adapter, "smollm2:135m batch 1", requests, single),
            high_level(llm, tokens, requests, config),
        ]
        if hf is not None:
            runs.append(hf_run(hf, requests, config))
        for run in runs:
            if run.name not in best or run.wall < best[run.name].wall:
                best[run.name] = run
    batched = best[f"smollm2:135m batch {args.batch_size}"]
    print(
        f"SmolLM2-135M-Instruct Q4_1, {len(requests)} requests of {', '.join(splits)}, greedy, "
        f"repetition penalty {args.repetition_penalty}, max {args.max_new_tokens} new tokens, "
        f"{args.threads} threads, best of {args.repeats}; load {os.getloadavg()[0]:.2f}"
    )
    print("| case | batch | prompt tokens decoded | generated | wall s | generated tok/s | processed tok/s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for run in best.values():
        print(
            f"| {run.name} | {run.batch} | {run.prompt_decoded} | {run.generated} | {run.wall:.1f} | "
            f"{run.gen_rate:.1f} | {run.processed_rate:.1f} |"
        )
    same = sum(batched.texts[k] == best["create_chat_completion"].texts[k] for k in batched.texts)
    print(
        f"answers of batch {args.batch_size} identical to create_chat_completion's: {same} of {len(requests)}"
    )
    print(
        f"batch {args.batch_size} vs create_chat_completion, wall time: "
        f"{best['create_chat_completion'].wall / batched.wall:.2f}x faster"
    )
    if hf is not None:
        print(
            f"batch {args.batch_size} vs hf batch {args.batch_size}, generated tok/s: "
            f"{batched.gen_rate / best['hf: gguf_file= (float32)'].gen_rate:.2f}x"
        )
    if args.llama_cpp_bin:
        n_cells = max(len(t) for t in tokens.values()) + args.max_new_tokens + 64
        own = server(Path(args.llama_cpp_bin), args.threads, args.batch_size, n_cells, requests, config)
        print(
            f"| {own.name} | {own.batch} | {own.prompt_decoded} | {own.generated} | {own.wall:.1f} | "
            f"{own.gen_rate:.1f} | {own.processed_rate:.1f} |"
        )
        same = sum(batched.texts[k] == own.texts[k] for k in batched.texts)
        print(
            "ours / llama-server, processed tokens per second: "
            f"{batched.processed_rate / own.processed_rate:.2f}; "
            f"generated: {batched.gen_rate / own.gen_rate:.2f}; wall time for the same answers "
            f"{own.wall / batched.wall:.2f}x; identical answers {same} of {len(requests)}"
        )
        npp = round(batched.prompt_decoded / len(requests))
        ntg = round(batched.generated / len(requests))
        s_tg, s_all, command = native(Path(args.llama_cpp_bin), args.threads, args.batch_size, npp, ntg)
        print(f"llama-batched-bench {command}: S_TG {s_tg:.1f} t/s, S {s_all:.1f} t/s")
        print(f"ours / llama.cpp's own, processed tokens per second: {batched.processed_rate / s_all:.2f}")
    else:
        print(
            "llama.cpp's own figure skipped: build it (benchmarks/build_llama_cpp.sh), pass --llama-cpp-bin"
        )
    adapter.close()


if __name__ == "__main__":
    main()
