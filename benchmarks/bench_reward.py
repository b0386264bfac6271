"""Reward speed: `rolebench.rewards.rouge_l_reward` against the same reward written with rouge_score.

    python -m benchmarks.bench_reward [--batch B] [--group G] [--rows N] [--repeat R] [--smoke]

What a GRPO step asks of a reward function: a batch of B chat completions (default 64), each scored
against its item's references. Items are real RoleBench rows, as in `bench_rouge`: CUS, a general
test row's last candidate answer against its other candidates; SPE, RoleGPT's answer
(rolegpt_baseline.jsonl) against the row's references. Each answer becomes a chat completion
`[{"role": "assistant", "content": answer}]`. Two layouts of the same answers:
- "items": every completion has its own item's references (no two share any: the hardest case);
- "groups": GRPO's own shape, B/G prompts x G generations (default 8 x 8): the G completions of a
  prompt are G consecutive items' answers, all scored against the first item's references (TRL
  repeats a prompt's columns for each of its generations).

The alternative is the reward one writes with rouge_score 0.1.2 (`RougeScorer(["rougeL"])` without
stemmer, `score_multi(references, answer)["rougeL"].fmeasure` per completion, the same text taken
from the same messages): for English on items without CJK characters, where rouge_score's default
tokenizer equals cjk-char-v1; for Chinese with cjk-char-v1 given to rouge_score (its default deletes
Chinese). Both run over every batch in the same process, alternately (each round times rouge_score
once, then ours once; `--repeat` rounds at least, more up to 30 while rouge_score's runs add up to
under a second), the least disturbed CPU time of each counts, every value must be identical (float
equality; the script exits 1 otherwise). `--smoke`: 2 batches of 8 per case, one round.
"""

from __future__ import annotations

import argparse
import os
import platform
from collections.abc import Callable, Sequence
from pathlib import Path

from benchmarks.bench_rouge import (
    EN_CUS,
    EN_SPE,
    ZH_CUS,
    ZH_SPE,
    Samples,
    _Tokenizer,
    alternate,
    baseline_samples,
    candidate_samples,
    find_data,
    without_cjk,
)
from rolebench.rewards import rouge_l_reward
from rolebench.scoring import f_measure
from rolebench.scoring.tokenize import tokenize_cjk_char

Batch = tuple[list[list[dict[str, str]]], list[list[str]], list[str]]  # completions, references, language
Scorer = Callable[[], list[float | None]]


def batches(samples: Samples, language: str, size: int, group: int = 1) -> list[Batch]:
    """The items as batches of chat completions with their references, as TRL passes them; with
    `group` > 1, each run of `group` completions is scored against its first item's references."""
    out: list[Batch] = []
    for start in range(0, len(samples), size):
        chunk = samples[start : start + size]
        completions = [[{"role": "assistant", "content": answer}] for answer, _ in chunk]
        references = [list(chunk[i - i % group][1]) for i in range(len(chunk))]
        out.append((completions, references, [language] * len(chunk)))
    return out


def ours(work: list[Batch]) -> Scorer:
    def run() -> list[float | None]:
        values: list[float | None] = []
        for completions, references, language in work:
            values += rouge_l_reward(
                prompts=None, completions=completions, references=references, language=language
            )
        return values

    return run


def with_rouge_score(work: list[Batch], tokenizer: object | None) -> Scorer:
    """The same reward written with rouge_score: one `score_multi` per completion."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False, tokenizer=tokenizer)

    def run() -> list[float | None]:
        values: list[float | None] = []
        for completions, references, _ in work:
            for messages, refs in zip(completions, references, strict=True):
                values.append(scorer.score_multi(refs, messages[-1]["content"])["rougeL"].fmeasure)
        return values

    return run


def run_case(name: str, work: list[Batch], theirs: Scorer, repeat: int) -> bool:
    """Time rouge_score and ours alternately, print one row, compare every value."""
    mine = ours(work)
    items = sum(len(b[0]) for b in work)
    pairs = sum(len(refs) for b in work for refs in b[1])
    load = os.getloadavg()[0]
    cpu_ref, wall_ref, cpu_ours, wall_ours, identical = alternate(theirs, mine, repeat)
    per_batch = cpu_ours / len(work) * 1000
    print(
        f"{name:34} {len(work):4d} {items:5d} {pairs:6d} | {per_batch:8.3f} | {cpu_ours:8.4f} "
        f"| {cpu_ref:8.4f} | x{cpu_ref / cpu_ours:7.1f} | x{wall_ref / wall_ours:7.1f} "
        f"| {load:4.1f}-{os.getloadavg()[0]:4.1f} | {'identical' if identical else 'DIFFERENT'}",
        flush=True,
    )
    return identical


def build_cases(data: Path, rows: int, size: int, group: int) -> list[tuple[str, list[Batch], Scorer]]:
    chars = _Tokenizer(tokenize_cjk_char)
    cases = []
    for name, samples, language, tokenizer in (
        ("en CUS", without_cjk(candidate_samples(data, EN_CUS, rows)), "en", None),
        ("en SPE", without_cjk(baseline_samples(data, EN_SPE, rows)), "en", None),
        ("zh CUS", candidate_samples(data, ZH_CUS, rows), "zh", chars),
        ("zh SPE", baseline_samples(data, ZH_SPE, rows), "zh", chars),
    ):
        for layout, g in (("items", 1), ("groups", group)):
            work = batches(samples, language, size, g)
            cases.append((f"{name} {layout} vs rouge_score", work, with_rouge_score(work, tokenizer)))
    return cases


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64, help="completions per reward call (default 64)")
    parser.add_argument("--group", type=int, default=8, help="generations per prompt (default 8)")
    parser.add_argument("--rows", type=int, default=1024, help="items per case at most (default 1024)")
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds; the best counts (default 3)")
    parser.add_argument("--smoke", action="store_true", help="2 batches of 8 per case, one round")
    args = parser.parse_args(argv)
    if args.smoke:
        args.batch, args.group, args.rows, args.repeat = 8, 4, 16, 1
    data = find_data()
    if data is None:
        return 2
    built = "built" if f_measure.accelerated() else "NOT built"
    print(
        f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs, load average "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}; batches of {args.batch}, groups of {args.group}; "
        f"C accelerator {built}"
    )
    print(
        f"{'case':34} calls items  pairs | ms/call  |   ours s |    ref s |    CPU x |   wall x | load      "
        "| values"
    )
    results = [
        run_case(name, work, theirs, args.repeat)
        for name, work, theirs in build_cases(data, args.rows, args.batch, args.group)
    ]
    return 0 if all(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
