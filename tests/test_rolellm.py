"""The `rolellm` protocol: equal to pip `rouge` 1.0.1 per item on each released split; the paper's figures."""

from __future__ import annotations

import json
import random
import sys
import threading
from pathlib import Path

import pytest

from rolebench import rouge_l
from rolebench.evaluation.options import EvalOptions
from rolebench.evaluation.pipeline import evaluate
from rolebench.scoring.protocols import get_protocol
from rolebench.scoring.rolellm import rolellm_recall, rolellm_text

SPLITS = {  # released files: (folder, language, kind)
    "zh_general": ("rolebench-zh/general", "zh"),
    "zh_specific": ("rolebench-zh/role_specific", "zh"),
    "eng_instruct_specific": ("rolebench-eng/instruction-generalization/role_specific", "en"),
    "eng_role_specific": ("rolebench-eng/role-generalization/role_specific", "en"),
    "eng_role_general": ("rolebench-eng/role-generalization/general", "en"),
}
PER_SPLIT = 120  # items compared per split (pip rouge scores about 400 pairs/s)


@pytest.fixture(scope="module")
def pip_rouge():
    rouge = pytest.importorskip("rouge", reason="pip rouge 1.0.1 is the reference: pip install rouge==1.0.1")
    return rouge.Rouge(metrics=["rouge-l"])


def pip_recall(scorer, hypothesis: str, references: list[str], language: str) -> float:
    """What the paper's scorer gives (pip rouge raises on an empty text: 0.0), with no recursion limit."""
    best = 0.0
    for reference in references:
        try:
            score = scorer.get_scores(rolellm_text(hypothesis, language), rolellm_text(reference, language))
            best = max(best, score[0]["rouge-l"]["r"])
        except ValueError:
            continue
    return best


def unlimited(function, *args):
    """Run `function` where Python's recursion limit is no obstacle (pip rouge recurses once per LCS step)."""
    result: list = []
    old = sys.getrecursionlimit()
    threading.stack_size(512 * 2**20)
    sys.setrecursionlimit(200_000)
    try:
        thread = threading.Thread(target=lambda: result.append(function(*args)))
        thread.start()
        thread.join()
    finally:
        sys.setrecursionlimit(old)
        threading.stack_size(0)
    return result[0]


def items(data: Path, folder: str, n: int) -> list[tuple[str, list[str]]]:
    """(prediction, references): RoleGPT's answer where it joins, else a row's last candidate vs the rest."""
    rows = [json.loads(line) for line in (data / folder / "test.jsonl").open(encoding="utf-8")]
    baseline_path = data / folder / "rolegpt_baseline.jsonl"
    found: list[tuple[str, list[str]]] = []
    if baseline_path.is_file():
        answers = {}
        for line in baseline_path.open(encoding="utf-8"):
            record = json.loads(line)
            answers.setdefault((record["role"], record["question"]), record["generated"][0])
        found = [
            (answers[(r["role"], r["question"])], r["generated"])
            for r in rows
            if (r["role"], r["question"]) in answers
        ]
    if not found:
        found = [(r["generated"][-1], r["generated"][:-1]) for r in rows if len(r["generated"]) > 1]
    return random.Random(0).sample(found, min(n, len(found)))


@pytest.mark.parametrize("split", list(SPLITS))
def test_rolellm_equals_pip_rouge_per_item(split, rolebench_data, pip_rouge):
    folder, language = SPLITS[split]
    chosen = items(rolebench_data, folder, PER_SPLIT)
    ours = get_protocol("rolellm").score_batch([p for p, _ in chosen], [r for _, r in chosen], language)
    theirs = unlimited(lambda: [pip_recall(pip_rouge, p, r, language) for p, r in chosen])
    assert ours == theirs  # bit for bit, not approximately


def test_rolellm_edge_cases_match_pip_rouge(pip_rouge):
    cases = [
        ("", ["a b"]),
        ("...", ["a"]),
        ("a . . b", ["b . a"]),
        ("  .  ", ["a"]),
        ("a b", ["..."]),
        ("the cat the dog", ["the dog the cat"]),
        ("A b. a B", ["a b"]),
        ("x y z", ["z y x", "x z"]),
    ]
    rng = random.Random(7)
    for _ in range(400):  # tiny vocabularies: many LCS of equal length, so the tie rule is exercised
        cases.append(
            (
                " ".join(rng.choice("ab.c") for _ in range(rng.randint(0, 12))),
                [" ".join(rng.choice("abc.d") for _ in range(rng.randint(0, 12)))],
            )
        )
    for hypothesis, references in cases:
        assert rolellm_recall(hypothesis, references[0]) == pip_recall(
            pip_rouge, hypothesis, references[:1], "en"
        )
        assert rouge_l([hypothesis], [references])[0] == pip_recall(pip_rouge, hypothesis, references, "en")


def test_long_chinese_pairs_past_pips_recursion_limit(pip_rouge):
    rng = random.Random(3)
    hypothesis = "".join(rng.choice("孙悟空齐天大圣俺老") for _ in range(900))
    reference = "".join(rng.choice("孙悟空齐天大圣花果山") for _ in range(700))
    with pytest.raises(RecursionError):  # what pip rouge does at Python's default limit
        pip_rouge.get_scores(rolellm_text(hypothesis, "zh"), rolellm_text(reference, "zh"))
    expected = unlimited(pip_recall, pip_rouge, hypothesis, [reference], "zh")
    assert rouge_l([hypothesis], [[reference]], "zh") == [expected]


def test_empty_texts_score_zero_where_pip_rouge_raises():
    assert rouge_l(["", "..."], [["reference"], ["reference"]]) == [0.0, 0.0]
    assert rouge_l(["an answer"], [["..."]]) == [0.0]


def test_public_scorer_takes_every_protocol():
    prediction, references = ["I am the Monkey King."], [["I am Sun Wukong, the Monkey King.", "Hello."]]
    assert rouge_l(prediction, references) == [5 / 7]
    assert rouge_l(prediction, references, protocol="rolebench") == get_protocol("rolebench").score_batch(
        prediction, references, "en"
    )
    assert rouge_l(prediction, references, protocol="opencompass")[0] < 1.0
    assert rouge_l(["俺老孙来也"], [["俺老孙是齐天大圣"]], language="zh") == [3 / 8]


def test_baseline_reproduces_the_papers_rolegpt_spe(rolebench_data, tmp_path):
    """`evaluate --model baseline:rolegpt` with no protocol flag: the paper's RoleGPT SPE figures."""
    tasks = ("rolebench_zh_specific", "rolebench_eng_instruct_specific", "rolebench_eng_role_specific")
    results = evaluate(
        EvalOptions(
            model="baseline:rolegpt",
            tasks=tasks,
            output=tmp_path,
            data_dir=str(rolebench_data),
            progress=False,
        )
    )
    spe = {task: results.results[task].value("spe") for task in tasks}
    assert round(spe["rolebench_zh_specific"] * 100, 4) == 24.7786  # paper 24.78
    assert round(spe["rolebench_eng_instruct_specific"] * 100, 4) == 32.2899  # paper 32.29
    assert round(spe["rolebench_eng_role_specific"] * 100, 4) == 29.8204  # paper 29.85
    role = results.results["rolebench_eng_role_specific"]
    assert (role.n_baseline, role.n) == (696, 2534)
    assert results.config.scoring["protocol"] == "rolellm" and results.config.scoring["measure"] == "recall"
    f_measure = role.value("rolebench")["spe"]
    assert 0 < f_measure < spe["rolebench_eng_role_specific"]  # the F-measure beside it
