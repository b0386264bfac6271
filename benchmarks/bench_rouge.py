"""ROUGE-L throughput: rolebench.scoring against the reference implementations, on real RoleBench pairs.

    python -m benchmarks.bench_rouge [--rows N] [--repeat R]

Reads the RoleBench files from $ROLEBENCH_DATA (default ../shared/rolebench next to the repository).
Each case scores the same (prediction, references) samples both ways in the same process, checks
that every value is identical (float equality) and reports pairs/s (one pair = one prediction
against one reference) and the speed-up. The machine may be shared, so each timing is the least
disturbed of several runs, measured in CPU time of this process (the wall-clock ratio is shown too).

Cases. CUS: a general test row's last candidate answer as the prediction, its other candidates as the
references. SPE: RoleGPT's answer (rolegpt_baseline.jsonl) to a role-specific question against the
reference answer (what the harness computes for the RoleGPT row).
- rolebench (en): our default protocol (best over the references) vs rouge_score `score_multi`,
  rougeL, no stemmer.
- opencompass (en): the first reference only vs rouge_score `score`.
- rolebench (zh): tokenizer cjk-char-v1 vs rouge_score given the same tokenizer (its default deletes
  Chinese, so there is nothing else to compare with).
- opencompass (zh): general_postprocess + jieba + rapidfuzz vs general_postprocess + jieba + rouge_chinese
  (jieba's segmentation, shared by both, dominates, so the gain is small).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from rolebench.scoring.opencompass import OC_PRED_PLACEHOLDER, OC_REF_PLACEHOLDER, general_postprocess
from rolebench.scoring.protocols import get_protocol
from rolebench.scoring.tokenize import tokenize_cjk_char

REPO_ROOT = Path(__file__).resolve().parent.parent
EN_CUS = "rolebench-eng/role-generalization/general/test.jsonl"
EN_SPE = "rolebench-eng/instruction-generalization/role_specific/"
ZH_CUS = "rolebench-zh/general/test.jsonl"
ZH_SPE = "rolebench-zh/role_specific/"

Samples = list[tuple[str, list[str]]]


def _records(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def candidate_samples(data: Path, relpath: str, rows: int) -> Samples:
    """(last candidate, the other candidates) of the first `rows` records with two candidates or more."""
    generated = [r["generated"] for r in _records(data / relpath)]
    return [(g[-1], g[:-1]) for g in generated if len(g) > 1][:rows]


def baseline_samples(data: Path, folder: str, rows: int) -> Samples:
    """(RoleGPT's answer, references): test rows joined with rolegpt_baseline.jsonl on (role, question)."""
    baseline = _records(data / folder / "rolegpt_baseline.jsonl")
    answers = {(r["role"], r["question"]): r["generated"][0] for r in baseline}
    tests = _records(data / folder / "test.jsonl")
    return [
        (answers[(r["role"], r["question"])], r["generated"])
        for r in tests
        if (r["role"], r["question"]) in answers
    ][:rows]


def timed(fn: Callable[[], list[float]]) -> tuple[float, float, list[float]]:
    """(CPU seconds of this process, wall seconds, values) of one call."""
    cpu, wall = time.process_time(), time.perf_counter()
    values = fn()
    return time.process_time() - cpu, time.perf_counter() - wall, values


def best_times(fn: Callable[[], list[float]], repeat: int) -> tuple[float, float, list[float]]:
    """The smallest CPU and wall times over `repeat` calls (the machine is shared: the minimum is the
    least disturbed run), and the values of the last call."""
    runs = [timed(fn) for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[1] for r in runs), runs[-1][2]


class _Tokenizer:
    """Adapter giving rouge_score our tokenizer (it calls `.tokenize(text)`)."""

    def __init__(self, fn: Callable[[str], list[str]]) -> None:
        self.tokenize = fn


def reference_rouge_score(
    samples: Samples, multi: bool, tokenizer: object | None = None
) -> Callable[[], list[float]]:
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False, tokenizer=tokenizer)
    if multi:
        return lambda: [scorer.score_multi(refs, pred)["rougeL"].fmeasure for pred, refs in samples]
    return lambda: [scorer.score(refs[0], pred)["rougeL"].fmeasure for pred, refs in samples]


def reference_rouge_chinese(samples: Samples) -> Callable[[], list[float]]:
    import jieba
    from rouge_chinese import Rouge

    def run() -> list[float]:
        preds = [" ".join(jieba.cut(general_postprocess(p))) or OC_PRED_PLACEHOLDER for p, _ in samples]
        refs = [" ".join(jieba.cut(general_postprocess(r[0]))) or OC_REF_PLACEHOLDER for _, r in samples]
        return [s["rouge-l"]["f"] for s in Rouge().get_scores(preds, refs)]

    return run


def ours(protocol: str, samples: Samples, language: str) -> Callable[[], list[float]]:
    scorer = get_protocol(protocol)
    preds = [p for p, _ in samples]
    refs = [r for _, r in samples]
    return lambda: scorer.score_batch(preds, refs, language)


def run_case(
    name: str, samples: Samples, language: str, theirs: Callable[[], list[float]], repeat: int
) -> bool:
    """Time both scorers (ours gets 5x the repeats: its runs are short) and compare every value.

    `name` is "<language> <CUS|SPE> <protocol>"; a pair is one prediction against one reference.
    """
    protocol = name.split()[-1]
    pairs = len(samples) if protocol == "opencompass" else sum(len(r) for _, r in samples)
    cpu_ref, wall_ref, v_ref = best_times(theirs, repeat)
    cpu_ours, wall_ours, v_ours = best_times(ours(protocol, samples, language), 5 * repeat)
    identical = v_ours == v_ref
    print(
        f"{name:19} {len(samples):7d} {pairs:6d} | {pairs / cpu_ours:9.0f} | {pairs / cpu_ref:9.0f} "
        f"| x{cpu_ref / cpu_ours:6.1f} | x{wall_ref / wall_ours:6.1f} | {identical}"
    )
    return identical


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000, help="samples per case at most (default 1000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed repeats; the best counts (default 3)")
    args = parser.parse_args(argv)
    data = Path(os.environ.get("ROLEBENCH_DATA", REPO_ROOT.parent / "shared" / "rolebench"))
    needed = [EN_CUS, ZH_CUS, EN_SPE + "rolegpt_baseline.jsonl", ZH_SPE + "rolegpt_baseline.jsonl"]
    if not all((data / path).is_file() for path in needed):
        print(
            f"RoleBench files not found under {data}: set ROLEBENCH_DATA to a copy in the Hub layout",
            file=sys.stderr,
        )
        return 2
    en, zh = candidate_samples(data, EN_CUS, args.rows), candidate_samples(data, ZH_CUS, args.rows)
    en_spe, zh_spe = baseline_samples(data, EN_SPE, args.rows), baseline_samples(data, ZH_SPE, args.rows)
    get_protocol("opencompass").score("预热", ["预热"], "zh")  # load jieba's dictionary outside the timings
    print(
        f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs; "
        f"best of {args.repeat} (reference) / {5 * args.repeat} (ours); pairs/s by CPU time"
    )
    print("case                samples  pairs |  ours p/s |   ref p/s | speedup | wall x  | identical")
    chars = _Tokenizer(tokenize_cjk_char)
    results = [
        run_case("en CUS rolebench", en, "en", reference_rouge_score(en, True), args.repeat),
        run_case("en CUS opencompass", en, "en", reference_rouge_score(en, False), args.repeat),
        run_case("en SPE rolebench", en_spe, "en", reference_rouge_score(en_spe, True), args.repeat),
        run_case("zh CUS rolebench", zh, "zh", reference_rouge_score(zh, True, chars), args.repeat),
        run_case("zh CUS opencompass", zh, "zh", reference_rouge_chinese(zh), args.repeat),
        run_case("zh SPE rolebench", zh_spe, "zh", reference_rouge_score(zh_spe, True, chars), args.repeat),
    ]
    return 0 if all(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
