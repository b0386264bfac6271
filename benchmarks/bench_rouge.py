"""ROUGE-L speed: rolebench.scoring against the reference implementations, on real RoleBench items.

    python -m benchmarks.bench_rouge [--rows N] [--repeat R] [--pool] [--only TEXT]

Reads the RoleBench files from $ROLEBENCH_DATA (default ../shared/rolebench next to the repository).
Each case scores the same (prediction, references) items both ways in the same process, alternately
(the machine may be shared: each round times the reference once, then ours once; 3 rounds at least,
up to 30 while the reference's runs add up to under a second), keeps the least disturbed CPU time
of this process for each (all its threads; the wall-clock ratio is shown too), checks that every
value is identical (float equality) and exits 1 if any case differs.

Items. CUS: a general test row's last candidate answer as the prediction, its other candidates as
the references. SPE: RoleGPT's answer (rolegpt_baseline.jsonl) to a role-specific question against
the row's references (what the harness computes for the RoleGPT row; the paper's SPE figures).
- rolellm: the paper's scorer vs pip `rouge` 1.0.1 (`Rouge(metrics=["rouge-l"])` recall, max over
  the references, Chinese as its characters joined by spaces; run in a deep-stack thread, as pip
  recurses once per LCS step).
- rolebench (en): the F protocol vs rouge_score 0.1.2 `score_multi` (rougeL, no stemmer) and vs
  rouge-score-rs 0.2.1 (Rust; the faster of `score_multi` per item and `score_batch` over all pairs,
  one thread: RAYON_NUM_THREADS=1), on items without CJK characters, where their default tokenizer
  equals cjk-char-v1; and vs the per-item loop it replaced (`_TokenPlan._batch`).
- "(no C accelerator)": the same case with the C accelerators `_token_codes` / `_union_lcs` switched
  off, as on an install without a C compiler (numpy / Python paths, the same values).
- rolebench (zh): vs rouge_score given tokenizer cjk-char-v1 (its default deletes Chinese).
- opencompass (en): the first reference only vs rouge_score `score`; (zh): general_postprocess + jieba
  + rapidfuzz vs general_postprocess + jieba + rouge_chinese (jieba dominates, so the gain is small).
--pool: wall time of `rolellm` with one process vs a pool of 2, alternately, on the largest batches.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import re
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")  # rouge-score-rs: one thread, read at its first use

from rolebench.scoring import f_measure, rolellm  # noqa: E402
from rolebench.scoring.opencompass import OC_PRED_PLACEHOLDER, OC_REF_PLACEHOLDER, general_postprocess  # noqa: E402
from rolebench.scoring.protocols import _TokenPlan, get_protocol  # noqa: E402
from rolebench.scoring.rolellm import rolellm_recall_batch, rolellm_text  # noqa: E402
from rolebench.scoring.tokenize import CJK_RANGES, tokenize_cjk_char  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
EN_CUS = "rolebench-eng/role-generalization/general/test.jsonl"
EN_SPE = "rolebench-eng/instruction-generalization/role_specific/"
ZH_CUS = "rolebench-zh/general/test.jsonl"
ZH_SPE = "rolebench-zh/role_specific/"
CJK = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in CJK_RANGES) + "]")

Samples = list[tuple[str, list[str]]]
Scorer = Callable[[], list[float]]


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


def without_cjk(samples: Samples) -> Samples:
    return [(p, r) for p, r in samples if not CJK.search(p + "".join(r))]


def find_data() -> Path | None:
    """The RoleBench folder the ROUGE-L benchmarks read ($ROLEBENCH_DATA, else ../shared/rolebench); None,
    after one line on stderr, when the files they need are not there."""
    data = Path(os.environ.get("ROLEBENCH_DATA", REPO_ROOT.parent / "shared" / "rolebench"))
    needed = [EN_CUS, ZH_CUS, EN_SPE + "rolegpt_baseline.jsonl", ZH_SPE + "rolegpt_baseline.jsonl"]
    if all((data / path).is_file() for path in needed):
        return data
    print(
        f"RoleBench files not found under {data}: set ROLEBENCH_DATA to a copy in the Hub layout",
        file=sys.stderr,
    )
    return None


def alternate(theirs: Scorer, mine: Scorer, repeat: int) -> tuple[float, float, float, float, bool]:
    """The reference and ours timed one for one (at least `repeat` rounds, more up to 30 while the
    reference's rounds add up to under a second): best (CPU, wall) of each, and whether every round of
    both gave the same values."""
    ref_runs, our_runs = [], []
    while len(ref_runs) < repeat or (len(ref_runs) < 30 and sum(r[1] for r in ref_runs) < 1.0):
        ref_runs.append(timed(theirs))
        our_runs.append(timed(mine))
    identical = all(r[2] == our_runs[0][2] for r in ref_runs + our_runs)
    return (
        min(r[0] for r in ref_runs),
        min(r[1] for r in ref_runs),
        min(r[0] for r in our_runs),
        min(r[1] for r in our_runs),
        identical,
    )


def timed(fn: Scorer) -> tuple[float, float, list[float]]:
    """(CPU seconds of this process, wall seconds, values) of one call."""
    cpu, wall = time.process_time(), time.perf_counter()
    values = fn()
    return time.process_time() - cpu, time.perf_counter() - wall, values


def deep(fn: Scorer) -> Scorer:
    """`fn` run in a thread with a large stack and recursion limit (pip rouge recurses per LCS step)."""

    def run() -> list[float]:
        result: list[list[float]] = []
        old_limit, old_stack = sys.getrecursionlimit(), threading.stack_size(512 * 2**20)
        sys.setrecursionlimit(200_000)
        try:
            thread = threading.Thread(target=lambda: result.append(fn()))
            thread.start()
            thread.join()
        finally:
            sys.setrecursionlimit(old_limit)
            threading.stack_size(old_stack)
        return result[0]

    return run


class _Tokenizer:
    """Adapter giving rouge_score our tokenizer (it calls `.tokenize(text)`)."""

    def __init__(self, fn: Callable[[str], list[str]]) -> None:
        self.tokenize = fn


def reference_rouge_score(samples: Samples, multi: bool, tokenizer: object | None = None) -> Scorer:
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False, tokenizer=tokenizer)
    if multi:
        return lambda: [scorer.score_multi(refs, pred)["rougeL"].fmeasure for pred, refs in samples]
    return lambda: [scorer.score(refs[0], pred)["rougeL"].fmeasure for pred, refs in samples]


def reference_rouge_score_rs(samples: Samples, batch: bool) -> Scorer:
    from rouge_score_rs import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    if not batch:
        return lambda: [scorer.score_multi(refs, pred)["rougeL"].fmeasure for pred, refs in samples]
    targets = [r for _, refs in samples for r in refs]
    predictions = [p for p, refs in samples for _ in refs]

    def run() -> list[float]:
        scores, out, k = scorer.score_batch(targets, predictions), [], 0
        for _, refs in samples:
            out.append(max(s["rougeL"].fmeasure for s in scores[k : k + len(refs)]))
            k += len(refs)
        return out

    return run


def reference_pip_rouge(samples: Samples, language: str) -> Scorer:
    from rouge import Rouge

    rouge = Rouge(metrics=["rouge-l"])

    def recall(hypothesis: str, reference: str) -> float:
        try:
            return float(rouge.get_scores(hypothesis, reference)[0]["rouge-l"]["r"])
        except ValueError:  # a text without sentences
            return 0.0

    texts = [(rolellm_text(p, language), [rolellm_text(r, language) for r in refs]) for p, refs in samples]
    return deep(lambda: [max(recall(p, r) for r in refs) for p, refs in texts])


def reference_rouge_chinese(samples: Samples) -> Scorer:
    import jieba
    from rouge_chinese import Rouge

    def run() -> list[float]:
        preds = [" ".join(jieba.cut(general_postprocess(p))) or OC_PRED_PLACEHOLDER for p, _ in samples]
        refs = [" ".join(jieba.cut(general_postprocess(r[0]))) or OC_REF_PLACEHOLDER for _, r in samples]
        return [s["rouge-l"]["f"] for s in Rouge().get_scores(preds, refs)]

    return run


def ours(protocol: str, samples: Samples, language: str) -> Scorer:
    scorer = get_protocol(protocol)
    preds, refs = [p for p, _ in samples], [r for _, r in samples]
    return lambda: scorer.score_batch(preds, refs, language)


def per_item_loop(samples: Samples, language: str) -> Scorer:
    """The `rolebench` scorer before f_measure: tokenize_cjk_char and rapidfuzz, item by item."""
    preds, refs = [p for p, _ in samples], [r for _, r in samples]
    protocol = get_protocol("rolebench")
    return lambda: _TokenPlan._batch(protocol, preds, refs, language)


NO_C = " (no C accelerator)"


def without_accelerators(scorer: Scorer) -> Scorer:
    """`scorer` with the C accelerators switched off, as on an install without a C compiler: the
    `rolebench` protocol's numpy path, the `rolellm` protocol's Python path."""

    def run() -> list[float]:
        saved = f_measure._token_codes, rolellm._union_lcs
        f_measure._token_codes, rolellm._union_lcs = None, None
        try:
            return scorer()
        finally:
            f_measure._token_codes, rolellm._union_lcs = saved

    return run


def run_case(name: str, samples: Samples, language: str, theirs: Scorer, repeat: int) -> bool:
    """Time the reference and ours alternately, print one row, and compare every value.

    `name` is "<language> <CUS|SPE> <protocol>[ (no C accelerator)] vs <reference>"; a pair is one
    prediction against one reference (only the first counts under opencompass). Each round times
    the reference once, then ours once; `repeat` rounds at least, more (up to 30) while the
    reference takes under a second in all.
    """
    protocol = name.split()[2]
    pairs = len(samples) if protocol == "opencompass" else sum(len(r) for _, r in samples)
    mine = ours(protocol, samples, language)
    if NO_C in name:
        mine = without_accelerators(mine)
    load = os.getloadavg()[0]
    cpu_ref, wall_ref, cpu_ours, wall_ours, identical = alternate(theirs, mine, repeat)
    print(
        f"{name:54} {len(samples):5d} {pairs:6d} | {cpu_ours:8.4f} | {cpu_ref:8.4f} "
        f"| x{cpu_ref / cpu_ours:7.2f} | x{wall_ref / wall_ours:7.2f} "
        f"| {load:4.1f}-{os.getloadavg()[0]:4.1f} | {identical}",
        flush=True,
    )
    return identical


def run_pool(cases: Sequence[tuple[str, Samples, str]], repeat: int) -> bool:
    """Wall time of `rolellm` in one process vs a pool of 2 (fork), alternately, best and median."""
    print("\nrolellm process pool (wall seconds; the pool's children are not in this process's CPU time)")
    print(
        "batch                 items | 1 process best/median | 2 processes best/median | x best/median | load"
    )
    same = True
    for name, samples, language in cases:
        preds, refs = [p for p, _ in samples], [r for _, r in samples]
        times: dict[int, list[float]] = {1: [], 2: []}
        load = os.getloadavg()[0]
        for _ in range(repeat):
            for workers in (1, 2):
                start = time.perf_counter()
                values = rolellm_recall_batch(preds, refs, language, workers=workers)
                times[workers].append(time.perf_counter() - start)
                same = same and values == rolellm_recall_batch(preds, refs, language, workers=1)
        best = {w: min(t) for w, t in times.items()}
        med = {w: sorted(t)[len(t) // 2] for w, t in times.items()}
        print(
            f"{name:20} {len(preds):6d} | {best[1]:8.3f} / {med[1]:8.3f}   | {best[2]:8.3f} / {med[2]:8.3f}"
            f"     | x{best[1] / best[2]:4.2f} / x{med[1] / med[2]:4.2f} "
            f"| {load:4.1f}-{os.getloadavg()[0]:4.1f}",
            flush=True,
        )
    return same


Case = tuple[str, Samples, str, Scorer]


def build_cases(data: Path, rows: int, with_rs: bool) -> list[Case]:
    """(name, items, language, reference scorer) of every case, in the order they run."""
    en, zh = candidate_samples(data, EN_CUS, rows), candidate_samples(data, ZH_CUS, rows)
    en_spe, zh_spe = baseline_samples(data, EN_SPE, rows), baseline_samples(data, ZH_SPE, rows)
    chars = _Tokenizer(tokenize_cjk_char)
    cases: list[Case] = []
    for path in ("", NO_C) if rolellm.accelerated() else ("",):
        cases += [
            (f"en CUS rolellm{path} vs pip rouge", en, "en", reference_pip_rouge(en, "en")),
            (f"en SPE rolellm{path} vs pip rouge", en_spe, "en", reference_pip_rouge(en_spe, "en")),
            (f"zh CUS rolellm{path} vs pip rouge", zh, "zh", reference_pip_rouge(zh, "zh")),
            (f"zh SPE rolellm{path} vs pip rouge", zh_spe, "zh", reference_pip_rouge(zh_spe, "zh")),
        ]
    for label, samples in (("en CUS", without_cjk(en)), ("en SPE", without_cjk(en_spe))):
        cases.append(
            (f"{label} rolebench vs rouge_score", samples, "en", reference_rouge_score(samples, True))
        )
        for path in ("", NO_C) if f_measure.accelerated() else ("",):
            for how, batch in (("score_multi", False), ("score_batch", True)) if with_rs else ():
                rs = reference_rouge_score_rs(samples, batch)
                cases.append((f"{label} rolebench{path} vs rs {how}", samples, "en", rs))
    return cases + [
        ("en CUS rolebench vs per-item loop", en, "en", per_item_loop(en, "en")),
        ("en SPE rolebench vs per-item loop", en_spe, "en", per_item_loop(en_spe, "en")),
        ("zh CUS rolebench vs rouge_score+cjk", zh, "zh", reference_rouge_score(zh, True, chars)),
        ("zh SPE rolebench vs rouge_score+cjk", zh_spe, "zh", reference_rouge_score(zh_spe, True, chars)),
        ("zh CUS rolebench vs per-item loop", zh, "zh", per_item_loop(zh, "zh")),
        ("en CUS opencompass vs rouge_score", en, "en", reference_rouge_score(en, False)),
        ("zh CUS opencompass vs rouge_chinese", zh, "zh", reference_rouge_chinese(zh)),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000, help="items per case at most (default 1000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds; the best counts (default 3)")
    parser.add_argument("--pool", action="store_true", help="also time rolellm's process pool")
    parser.add_argument("--only", default="", help="run only the cases whose name contains this text")
    args = parser.parse_args(argv)
    data = find_data()
    if data is None:
        return 2
    with_rs = importlib.util.find_spec("rouge_score_rs") is not None
    cases = [case for case in build_cases(data, args.rows, with_rs) if args.only in case[0]]
    get_protocol("opencompass").score("预热", ["预热"], "zh")  # load jieba's dictionary outside the timings
    built = "built" if f_measure.accelerated() and rolellm.accelerated() else "NOT built"
    print(
        f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs, load average "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}; {args.repeat} to 30 rounds (reference once, "
        f"ours once); C accelerators {built}"
    )
    print(f"{'case':54} items  pairs |   ours s |    ref s |    CPU x |   wall x | load      | identical")
    results = [run_case(*case, args.repeat) for case in cases]
    if not with_rs:
        print("rouge-score-rs is not installed (pip install rouge-score-rs==0.2.1): its cases were skipped")
    if args.pool:  # whole files: the largest batches a run scores
        every = 10**9
        en_all = candidate_samples(data, EN_CUS, every) + baseline_samples(data, EN_SPE, every)
        zh_all = candidate_samples(data, ZH_CUS, every) + baseline_samples(data, ZH_SPE, every)
        results.append(
            run_pool([("en CUS + SPE", en_all, "en"), ("zh CUS + SPE", zh_all, "zh")], args.repeat)
        )
    return 0 if all(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
