"""The `rolellm` protocol: equal to pip `rouge` 1.0.1 per item on each released split; the paper's figures."""

from __future__ import annotations

import json
import random
import sys
import threading
from pathlib import Path

import pytest

from rolebench import evaluate, rouge_l
from rolebench.errors import ConfigError, DataError
from rolebench.scoring import rolellm
from rolebench.scoring.protocols import get_protocol
from rolebench.scoring.rolellm import (
    default_workers,
    rolellm_recall,
    rolellm_recall_batch,
    rolellm_text,
    sentences,
    zh_sentences,
)
from rolebench.scoring.rolellm_lcs import recon_lcs_words
from tests.test_scoring import ADVERSARIAL_EN, ADVERSARIAL_ZH

SPLITS = {  # released files: (folder, language, kind)
    "zh_general": ("rolebench-zh/general", "zh"),
    "zh_specific": ("rolebench-zh/role_specific", "zh"),
    "eng_instruct_specific": ("rolebench-eng/instruction-generalization/role_specific", "en"),
    "eng_role_specific": ("rolebench-eng/role-generalization/role_specific", "en"),
    "eng_role_general": ("rolebench-eng/role-generalization/general", "en"),
}
PER_SPLIT = 120  # items compared per split (pip rouge scores about 400 pairs/s)


@pytest.fixture(params=["c", "python"])
def rolellm_path(request, monkeypatch):
    """The rolellm scorer's C accelerator (skipped where it is not built) or its Python path: both must
    equal pip rouge."""
    if request.param == "c" and not rolellm.accelerated():
        pytest.skip("the C accelerator rolebench.scoring._union_lcs is not built (no C compiler at install)")
    if request.param == "python":
        monkeypatch.setattr(rolellm, "_union_lcs", None)
    return request.param


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
def test_rolellm_equals_pip_rouge_per_item(split, rolebench_data, pip_rouge, rolellm_path):
    folder, language = SPLITS[split]
    chosen = items(rolebench_data, folder, PER_SPLIT)
    ours = get_protocol("rolellm").score_batch([p for p, _ in chosen], [r for _, r in chosen], language)
    theirs = unlimited(lambda: [pip_recall(pip_rouge, p, r, language) for p, r in chosen])
    assert ours == theirs  # bit for bit, not approximately


def test_rolellm_edge_cases_match_pip_rouge(pip_rouge, rolellm_path):
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


def test_long_chinese_pairs_past_pips_recursion_limit(pip_rouge, rolellm_path):
    rng = random.Random(3)
    hypothesis = "".join(rng.choice("孙悟空齐天大圣俺老") for _ in range(900))
    reference = "".join(rng.choice("孙悟空齐天大圣花果山") for _ in range(700))
    with pytest.raises(RecursionError):  # what pip rouge does at Python's default limit
        pip_rouge.get_scores(rolellm_text(hypothesis, "zh"), rolellm_text(reference, "zh"))
    expected = unlimited(pip_recall, pip_rouge, hypothesis, [reference], "zh")
    assert rouge_l([hypothesis], [[reference]], "zh") == [expected]


def test_empty_texts_score_zero_where_pip_rouge_raises(rolellm_path):
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
        **dict(
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


# ---- the fast scorer's corners, against pip rouge ---------------------------------------------


def pip_sentences(text: str) -> list[list[str]]:
    """pip rouge 1.0.1's own sentence and word split (rouge.py and rouge_score.py)."""
    return [s.split(" ") for s in (" ".join(p.split()) for p in text.split(".") if len(p) > 0)]


def test_sentence_splits_equal_pip_rouges_on_every_short_string():
    alphabet = ["", ".", " ", "a", "中", "\u3000"]
    texts = [""]
    for _ in range(5):
        texts = sorted({t + c for t in texts for c in alphabet})
    texts += ["a. .b", "中..文", "中. .文", ".中.", "好好好.好", " . . "]
    for text in texts:
        assert sentences(text) == pip_sentences(text)
        assert zh_sentences(text) == pip_sentences(rolellm_text(text, "zh"))
        assert rolellm_text(text, "zh") == " ".join(ch for ch in text if not ch.isspace())
    every = "".join(map(chr, range(0x110000)))  # str.split() splits on exactly the isspace() characters
    assert rolellm_text(every, "zh") == " ".join(ch for ch in every if not ch.isspace())


def test_one_lcs_walk_equals_pips_reconstruction():
    recon_lcs = pytest.importorskip("rouge.rouge_score")._recon_lcs
    rng = random.Random(11)
    for _ in range(3000):
        vocabulary = "abcdef"[: rng.randint(2, 6)]
        x = [rng.choice(vocabulary) for _ in range(rng.randint(1, 14))]
        y = [rng.choice(vocabulary) for _ in range(rng.randint(1, 14))]
        assert recon_lcs_words(x, y) == set(recon_lcs(x, y)._ngrams)
    assert recon_lcs_words([], ["a"]) == recon_lcs_words(["a"], []) == set()


def test_which_lcs_pip_reconstructs_decides_the_recall(pip_rouge, rolellm_path):
    # "a b" vs the sentence "b a": LCSs "a" and "b"; pip's walk keeps {"b"}, so the second sentence counts.
    assert rolellm_recall("b a. a", "a b") == pip_recall(pip_rouge, "b a. a", ["a b"], "en") == 1.0
    assert rolellm_recall("b a. b", "a b") == pip_recall(pip_rouge, "b a. b", ["a b"], "en") == 0.5


@pytest.mark.parametrize("language", ["en", "zh"])
def test_adversarial_texts_equal_pip_rouge(language, pip_rouge, rolellm_path):
    texts = ADVERSARIAL_EN + ADVERSARIAL_ZH
    predictions = [p for p in texts for _ in texts]
    references = [[r] for _ in texts for r in texts]
    predictions += texts
    references += [[texts[(k + j) % len(texts)] for j in range(1, 5)] for k in range(len(texts))]
    predictions += ["", "中文 abc", "abc", "", "K", "İi"]  # empty texts next to others, in one batch
    references += [["abc", ""], ["", "中"], ["中文abc", ""], ["中"], ["k", "K"], ["i i", "İ"]]
    expected = unlimited(
        lambda: [pip_recall(pip_rouge, p, r, language) for p, r in zip(predictions, references, strict=True)]
    )
    assert rolellm_recall_batch(predictions, references, language) == expected


def test_long_english_pair_past_pips_recursion_limit(pip_rouge, rolellm_path):
    rng = random.Random(3)
    hypothesis = " ".join(rng.choice("abcdefg") for _ in range(900))
    reference = " ".join(rng.choice("abcdxy") for _ in range(850))
    with pytest.raises(RecursionError):
        pip_rouge.get_scores(hypothesis, reference)
    assert rolellm_recall(hypothesis, reference) == unlimited(
        pip_recall, pip_rouge, hypothesis, [reference], "en"
    )


def test_process_pool_gives_the_same_values(rolebench_data, rolellm_path):
    chosen = items(rolebench_data, SPLITS["zh_general"][0], 60) + [("", ["a"]), ("a", ["a", "b"])]
    predictions, references = [p for p, _ in chosen], [r for _, r in chosen]
    one = rolellm_recall_batch(predictions, references, "zh", workers=1)
    assert rolellm_recall_batch(predictions, references, "zh", workers=2) == one
    assert rolellm_recall_batch(predictions, references, "zh") == one
    assert default_workers(10**6) == 1  # the pool did not pay where measured (benchmarks/bench_rouge.py)


def test_accelerator_refuses_what_is_not_sentences():
    if not rolellm.accelerated():
        pytest.skip("the C accelerator rolebench.scoring._union_lcs is not built (no C compiler at install)")
    with pytest.raises(TypeError, match="not str"):
        rolellm._union_lcs.recalls([[["a", 3]]], [[[["a"]]]])
    with pytest.raises(TypeError, match="lists of lists"):
        rolellm._union_lcs.recalls([["a"]], [[[["a"]]]])
    with pytest.raises(ValueError, match="differ in length"):
        rolellm._union_lcs.recalls([], [[]])


def test_rolellm_errors():
    with pytest.raises(ConfigError, match="unknown scoring language 'fr'"):
        rolellm_recall_batch(["a"], [["a"]], "fr")
    with pytest.raises(ConfigError, match="unknown scoring language 'fr'"):
        get_protocol("rolellm").score("a", ["a"], "fr")
    for scorer in (lambda: rolellm_recall_batch(["a"], [[]], "en"), lambda: rouge_l(["a"], [[]])):
        with pytest.raises(DataError, match="no reference answer"):
            scorer()
    with pytest.raises(ValueError, match="1 predictions but 2 reference lists"):
        rolellm_recall_batch(["a"], [["a"], ["b"]], "en")
    with pytest.raises(TypeError, match="not one string"):
        rolellm_recall_batch(["a"], ["a"], "en")
    assert rolellm_recall_batch([], [], "zh") == []
