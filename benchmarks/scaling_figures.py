"""The measured inputs of docs/SCALING.md: tokens per prompt and per answer by split, and data parallelism.

`tokens`: every test sample of each RoleBench split in the local copy, its prompt as SmolLM2-135M-
Instruct sees it (the RoleGPT system prompt + question through the GGUF's chat template, the
generation prompt included), its reference answers, its RoleGPT baseline answer and the judge's
ranking prompt (rolellm_rank, one order, the reference standing in for the model's answer), tokenized
with SmolLM2's tokenizer (llama.cpp, vocab only); words for English, characters for Chinese beside.

`parallel`: generated tokens per second of `llamacpp:smollm2` (1 thread per process) on RoleBench
prompts, in one process and with `data_parallel=2` (two Ray actors on a local Ray, 1 CPU each);
the answers must be identical (greedy), the script exits 1 if not.

    python -m benchmarks.scaling_figures tokens              # about 1 minute
    python -m benchmarks.scaling_figures parallel --n 16 --max-new-tokens 32
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

from benchmarks.bench_evaluate_vs_lmeval import rolebench_requests, smollm2_gguf
from rolebench.data.resolve import resolve_source
from rolebench.data.samples import load_samples
from rolebench.prompts.roleplay import role_messages

SPLITS = ("eng_instruct_specific", "eng_role_general", "eng_role_specific", "zh_general", "zh_specific")


def tokenizer() -> tuple[Any, Any]:
    """(tokenize(text) -> ids, render(messages) -> prompt text) of SmolLM2-135M-Instruct's GGUF."""
    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    llm = Llama(model_path=str(smollm2_gguf()), vocab_only=True, verbose=False)
    special = {t: llm.detokenize([t], special=True).decode() for t in (llm.token_bos(), llm.token_eos())}
    formatter = Jinja2ChatFormatter(
        template=llm.metadata["tokenizer.chat_template"],
        eos_token=special[llm.token_eos()],
        bos_token=special[llm.token_bos()],
    )

    def tokenize(text: str) -> list[int]:
        return list(llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def render(messages: list[dict[str, str]]) -> str:
        return str(formatter(messages=messages).prompt)  # type: ignore[arg-type]

    return tokenize, render


def length(text: str, language: str) -> int:
    return len(text.split()) if language == "en" else len("".join(text.split()))


def split_figures(split: str, source: Any, tokenize: Any, render: Any) -> dict[str, Any]:
    from rolebench.judging.config import load_judge_config

    judge = load_judge_config("rolellm_rank")
    samples = load_samples(split, source)
    prompt, first_ref, refs, baseline, words, judged = [], [], [], [], [], []
    for s in samples:
        prompt.append(len(tokenize(render(role_messages(s.role, s.description, s.question, s.language)))))
        counts = [len(tokenize(r)) for r in s.references]
        first_ref.append(counts[0])
        refs.append(statistics.mean(counts))
        words.append(length(s.references[0], s.language))
        if s.baseline:
            baseline.append(len(tokenize(s.baseline)))
            shown = (s.references[0], s.baseline)  # a model answering like the reference, one order
            messages = judge.messages(
                role=s.role,
                description=s.description,
                question=s.question,
                language=s.language,
                answers=shown,
            )
            judged.append(sum(len(tokenize(m["content"])) for m in messages))
    return {
        "split": split,
        "samples": len(samples),
        "prompt_tokens_mean": round(statistics.mean(prompt), 1),
        "prompt_tokens_total": sum(prompt),
        "reference_tokens_mean": round(statistics.mean(first_ref), 1),
        "reference_tokens_p90": sorted(first_ref)[int(0.9 * len(first_ref))],
        "references_per_sample": round(statistics.mean(len(s.references) for s in samples), 2),
        "reference_words_mean": round(statistics.mean(words), 1),
        "baseline_answers": len(baseline),
        "baseline_tokens_mean": round(statistics.mean(baseline), 1) if baseline else None,
        "judge_prompt_tokens_mean": round(statistics.mean(judged), 1) if judged else None,
    }


def tokens(args: argparse.Namespace) -> list[dict[str, Any]]:
    tokenize, render = tokenizer()
    source = resolve_source(args.data_dir)
    rows = []
    for split in SPLITS:
        started = time.perf_counter()
        row = split_figures(split, source, tokenize, render)
        row["seconds"] = round(time.perf_counter() - started, 1)
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def parallel(args: argparse.Namespace) -> dict[str, Any]:
    from model_adapters import GenerationConfig, load_model
    from model_adapters.ray_runtime import connect, disconnect

    requests = rolebench_requests(args.data_dir, args.n, args.split)
    config = GenerationConfig(max_new_tokens=args.max_new_tokens, batch_size=args.chunk)
    figures: dict[str, Any] = {"n": len(requests), "max_new_tokens": args.max_new_tokens}
    outputs: dict[str, dict[str, str | None]] = {}
    started = time.perf_counter()
    connect(num_cpus=args.replicas)
    figures["ray_start_s"] = round(time.perf_counter() - started, 2)
    try:
        for name, options in (
            ("one process", {}),
            (f"data_parallel={args.replicas}", {"data_parallel": args.replicas}),
        ):
            started = time.perf_counter()
            model = load_model("smollm2:135m", n_threads=1, **options)
            loaded = time.perf_counter()
            got = {r.id: g for r, g in model.generate(requests, config)}
            done = time.perf_counter()
            model.close()
            generated = sum(g.usage.completion_tokens for g in got.values())
            outputs[name] = {k: g.text for k, g in got.items()}
            figures[name] = {
                "load_s": round(loaded - started, 2),
                "generate_s": round(done - loaded, 2),
                "tokens": generated,
                "tokens_per_s": round(generated / (done - loaded), 2),
            }
            print(json.dumps({name: figures[name]}), flush=True)
    finally:
        disconnect()
    first, second = outputs.values()
    figures["identical"] = f"{sum(first[k] == second.get(k) for k in first)}/{len(first)}"
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("tokens", "parallel"))
    parser.add_argument("--data-dir", default=None, help="RoleBench folder (default $ROLEBENCH_DATA)")
    parser.add_argument("--split", default="eng_role_general", help="parallel: the split of the prompts")
    parser.add_argument("--n", type=int, default=16, help="parallel: prompts")
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--chunk", type=int, default=2, help="parallel: requests per chunk (batch_size)")
    parser.add_argument("--json", help="write the figures here too")
    args = parser.parse_args()
    figures: Any = tokens(args) if args.what == "tokens" else parallel(args)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(figures, handle, indent=1, ensure_ascii=False)
    if args.what == "parallel":
        print(json.dumps(figures))
        first, total = map(int, figures["identical"].split("/"))
        return 0 if first == total else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
