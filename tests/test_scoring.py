"""ROUGE-L protocols: bit-for-bit equality with rouge_score / rouge_chinese on real RoleBench pairs,
Chinese tokenization, best-of-references, OpenCompass reproduction, errors."""

from __future__ import annotations

import json
import random
import re
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pytest

from rolebench.errors import ConfigError, DataError
from rolebench.scoring import f_measure
from rolebench.scoring import lcs as scoring_lcs
from rolebench.scoring.f_measure import rolebench_f_batch
from rolebench.scoring.lcs import lcs_length, rouge_l_f
from rolebench.scoring.opencompass import general_postprocess, opencompass_order
from rolebench.scoring.protocols import PROTOCOLS, get_protocol
from rolebench.scoring.tokenize import CJK_RANGES, cjk_char_keys, tokenize_cjk_char, tokenize_rouge_score

EN_CUS = "rolebench-eng/role-generalization/general/test.jsonl"
ZH_CUS = "rolebench-zh/general/test.jsonl"
CJK = re.compile(r"[\u3400-\u9fff]")


def _rows(data: Path, relpath: str) -> list[list[str]]:
    with open(data / relpath, encoding="utf-8") as handle:
        return [json.loads(line)["generated"] for line in handle]


def _multi(data: Path, relpath: str, n: int) -> list[tuple[str, list[str]]]:
    """(last candidate, other candidates) of the first n rows with at least two candidates."""
    return [(g[-1], g[:-1]) for g in _rows(data, relpath) if len(g) > 1][:n]


@pytest.fixture(scope="module")
def rouge_l():
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)


class _Tokenizer:
    def __init__(self, fn):
        self.tokenize = fn


@pytest.fixture(params=["c", "numpy"])
def token_path(request, monkeypatch):
    """The `rolebench` scorer's tokenizing step: the C accelerator (skipped where it is not built) or
    the numpy path it falls back to; both must give the same scores."""
    if request.param == "c" and not f_measure.accelerated():
        pytest.skip(
            "the C accelerator rolebench.scoring._token_codes is not built (no C compiler at install)"
        )
    if request.param == "numpy":
        monkeypatch.setattr(f_measure, "_token_codes", None)
    return request.param


def _assert_same_tokens(strings: list[str], texts: list[str]) -> None:
    """strings[i] has one character per token of tokenize_cjk_char(texts[i]), equal characters exactly
    for equal tokens (a bijection between the batch's tokens and characters)."""
    token_of: dict[str, str] = {}
    char_of: dict[str, str] = {}
    for coded, text in zip(strings, texts, strict=True):
        tokens = tokenize_cjk_char(text)
        assert len(coded) == len(tokens), text[:80]
        for char, token in zip(coded, tokens, strict=True):
            assert token_of.setdefault(char, token) == token
            assert char_of.setdefault(token, char) == char
    assert not any("\ud800" <= char <= "\udfff" for char in token_of)  # no surrogates


# ---- tokenizers -------------------------------------------------------------------------------


def test_en_tokenizer_is_rouge_scores_plus_cjk_characters(rolebench_data):
    rs_tokenize = pytest.importorskip("rouge_score.tokenize").tokenize
    texts = [t for g in _rows(rolebench_data, EN_CUS) for t in g]
    texts = texts[:5000] + [t for t in texts[5000:] if CJK.search(t)]
    with_cjk = 0
    for text in texts:
        theirs = rs_tokenize(text, None)
        assert tokenize_rouge_score(text) == theirs
        ours = tokenize_cjk_char(text)
        if CJK.search(text):
            with_cjk += 1
            assert [t for t in ours if not CJK.match(t)] == theirs and len(ours) > len(theirs)
        else:
            assert ours == theirs
    assert with_cjk >= 1  # the English file has answers with Chinese characters in them


def test_cjk_char_tokenizer_keeps_every_cjk_character_and_drops_punctuation():
    expected = ["俺", "老", "孙", "2022", "年", "5", "月", "1", "日", "ok"]
    assert tokenize_cjk_char("俺老孙，2022年5月1日！OK?") == expected
    assert tokenize_cjk_char("I am 孙悟空 (Sun Wukong).") == ["i", "am", "孙", "悟", "空", "sun", "wukong"]
    assert tokenize_cjk_char("ひらがな カタカナ 한국어 𠀀") == list("ひらがなカタカナ한국어𠀀")
    assert tokenize_cjk_char("，。！？「」…—") == []


# ---- rolebench protocol: equal to rouge_score --------------------------------------------------


def test_rouge_l_equals_rouge_score_bit_for_bit_on_500_english_pairs(rolebench_data, rouge_l):
    rows = _rows(rolebench_data, EN_CUS)
    pairs = [(g[0], g[1]) for g in rows if len(g) > 1 and not CJK.search(g[0] + g[1])]
    protocol = get_protocol("rolebench")
    for prediction, reference in pairs[:500]:
        expected = rouge_l.score(reference, prediction)["rougeL"].fmeasure
        assert rouge_l_f(tokenize_cjk_char(prediction), tokenize_cjk_char(reference)) == expected
        assert protocol.score(prediction, [reference], "en") == expected


def test_rolebench_protocol_is_the_best_reference_like_score_multi(rolebench_data, rouge_l):
    samples = _multi(rolebench_data, EN_CUS, 200)
    predictions, references = [p for p, _ in samples], [r for _, r in samples]
    got = get_protocol("rolebench").score_batch(predictions, references, "en")
    expected = [rouge_l.score_multi(refs, pred)["rougeL"].fmeasure for pred, refs in samples]
    assert got == expected
    assert sum(len(refs) > 1 for refs in references) > 150  # really multi-reference


def test_chinese_char_scores_equal_rouge_score_given_the_same_tokens(rolebench_data):
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
    scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=_Tokenizer(tokenize_cjk_char))
    samples = _multi(rolebench_data, ZH_CUS, 300)
    got = get_protocol("rolebench").score_batch([p for p, _ in samples], [r for _, r in samples], "zh")
    assert got == [scorer.score_multi(refs, pred)["rougeL"].fmeasure for pred, refs in samples]


def test_chinese_is_not_scored_zero_the_rouge_score_default_tokenizer_bug(rolebench_data, rouge_l):
    text = "俺老孙乃齐天大圣，一个筋斗十万八千里。"
    assert rouge_l.score(text, text)["rougeL"].fmeasure == 0.0  # rouge_score deletes every CJK character
    assert get_protocol("rolebench").score(text, [text], "zh") == 1.0
    assert get_protocol("rolebench").score(text, [text], "en") == 1.0  # a Chinese answer on an English split
    pairs = [(g[0], g[1]) for g in _rows(rolebench_data, ZH_CUS) if len(g) > 1][:300]
    overlapping = [(a, b) for a, b in pairs if set(CJK.findall(a)) & set(CJK.findall(b))]
    no_latin = [(a, b) for a, b in overlapping if not re.search(r"[A-Za-z0-9]", a + b)]
    assert len(overlapping) == len(pairs) and len(no_latin) > 100
    assert all(rouge_l.score(b, a)["rougeL"].fmeasure == 0.0 for a, b in no_latin)
    assert all(get_protocol("rolebench").score(a, [b], "zh") > 0.0 for a, b in overlapping)


def test_best_of_references_and_first_only():
    prediction = "the quick brown fox jumps over the lazy dog"
    poor, good = "a slow red fox", "the quick brown fox jumped over a dog"
    rolebench, opencompass = get_protocol("rolebench"), get_protocol("opencompass")
    best = rolebench.score(prediction, [good], "en")
    assert 0.0 < rolebench.score(prediction, [poor], "en") < best < 1.0
    assert rolebench.score(prediction, [poor, good], "en") == best
    assert rolebench.score(prediction, [good, poor], "en") == best
    first_only = opencompass.score(prediction, [poor, good], "en")
    assert first_only == opencompass.score(prediction, [poor], "en") < best


def test_rouge_l_f_values_and_edge_cases(monkeypatch):
    assert rouge_l_f("a b c d".split(), "a c d e".split()) == 0.75  # LCS 3 of 4 and 4
    assert rouge_l_f(["x"], ["y"]) == 0.0
    assert rouge_l_f([], ["y"]) == rouge_l_f(["y"], []) == 0.0
    assert get_protocol("rolebench").score("", ["reference"], "en") == 0.0
    assert get_protocol("rolebench").score("!!!", ["!!!"], "en") == 0.0  # no tokens at all
    long_pred = [f"t{i}" for i in range(70_000)]  # more tokens than the precomputed code points
    long_ref = long_pred[60_000:61_000] + ["zz"] + long_pred[10:20]
    assert lcs_length(long_pred, long_ref) == 1000
    monkeypatch.setattr(scoring_lcs, "_MAX_CODE_POINT", 100)  # take the integer-sequence path
    assert lcs_length(long_pred, long_ref) == 1000
    assert lcs_length("a b c d".split(), "a c d e".split()) == 3


# ---- opencompass protocol ---------------------------------------------------------------------


def test_opencompass_english_equals_rouge_score_on_the_first_reference(rolebench_data, rouge_l):
    samples = _multi(rolebench_data, EN_CUS, 300)
    got = get_protocol("opencompass").score_batch([p for p, _ in samples], [r for _, r in samples], "en")
    assert got == [rouge_l.score(refs[0], pred)["rougeL"].fmeasure for pred, refs in samples]
    assert get_protocol("opencompass").score("孙悟空", ["孙悟空"], "en") == 0.0  # what OpenCompass does


def _oc_general_postprocess(text: str) -> str:
    """OpenCompass's general_postprocess as published (opencompass/utils/text_postprocessors.py)."""
    truncated = re.split(r"[\n.,]", text, maxsplit=1)[0]
    no_punctuation = re.sub(r"[^\w\s]", "", truncated)
    no_articles = re.sub(r"\b(a|an|the)\b", "", no_punctuation, flags=re.IGNORECASE)
    return re.sub(r"\s+", " ", no_articles).strip()


def test_general_postprocess():
    assert general_postprocess("The cat sat, then left.") == "cat sat"
    assert general_postprocess("俺老孙！乃齐天大圣。\n第二行") == "俺老孙乃齐天大圣"
    assert general_postprocess("  An apple   a day  ") == "apple day"
    assert general_postprocess("...") == general_postprocess("") == ""


def test_opencompass_chinese_equals_jieba_and_rouge_chinese(rolebench_data):
    jieba = pytest.importorskip("jieba")
    rouge = pytest.importorskip("rouge_chinese").Rouge()
    samples = _multi(rolebench_data, ZH_CUS, 100)
    samples += [
        ("", ["你好"]),
        ("！！！", ["。"]),
        ("The cat, a dog", ["the cat"]),
        ("第一行\n第二行", ["第一行"]),
        ("3.14是圆周率", ["3"]),
        ("孙悟空 齐天大圣", ["齐天大圣 孙悟空"]),
    ]
    preds = [" ".join(jieba.cut(_oc_general_postprocess(p))) or "__PREDPLACEHOLDER__" for p, _ in samples]
    refs = [" ".join(jieba.cut(_oc_general_postprocess(r[0]))) or "__REFRPLACEHOLDER__" for _, r in samples]
    expected = [s["rouge-l"]["f"] for s in rouge.get_scores(preds, refs)]
    protocol = get_protocol("opencompass")
    got = protocol.score_batch([p for p, _ in samples], [r for _, r in samples], "zh")
    assert got == expected
    assert protocol.aggregate(got, "zh") == rouge.get_scores(preds, refs, avg=True)["rouge-l"]["f"]
    assert 0.99 < protocol.score("齐天大圣孙悟空", ["齐天大圣孙悟空"], "zh") < 1.0  # rouge_chinese's 1e-8


def test_opencompass_english_aggregate_is_rouge_scores_bootstrap_mid(rolebench_data):
    np = pytest.importorskip("numpy")
    rouge_score = pytest.importorskip("rouge_score")
    from rouge_score import rouge_scorer
    from rouge_score import scoring as rs_scoring

    samples = _multi(rolebench_data, EN_CUS, 120)
    # What HF evaluate's "rouge" does inside OpenCompass's RougeEvaluator after np.random.seed(0).
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"], use_stemmer=False)
    aggregator = rs_scoring.BootstrapAggregator()
    for pred, refs in samples:
        aggregator.add_scores(scorer.score(refs[0], pred))
    state = np.random.get_state()
    try:
        np.random.seed(0)
        expected = aggregator.aggregate()["rougeL"].mid.fmeasure
    finally:
        np.random.set_state(state)
    protocol = get_protocol("opencompass")
    values = protocol.score_batch([p for p, _ in samples], [r for _, r in samples], "en")
    assert protocol.aggregate(values, "en") == expected != sum(values) / len(values)
    assert rouge_score is not None and protocol.aggregate([], "en") is None


def test_opencompass_order_is_datasets_shuffle_seed_42():
    datasets = pytest.importorskip("datasets")
    shuffled = datasets.Dataset.from_list([{"i": i} for i in range(1690)]).shuffle(seed=42)
    assert opencompass_order(1690) == shuffled["i"]


# ---- registry, description, errors ------------------------------------------------------------


def test_every_protocol_resolves_and_describes_itself():
    for name in PROTOCOLS:
        described = get_protocol(name).describe()
        assert described["protocol"] == name and get_protocol(name).name == name
        assert set(described["tokenizers"]) == {"en", "zh"}
        assert described["libraries"]["rapidfuzz"] == version("rapidfuzz")
    rolebench, opencompass = get_protocol("rolebench").describe(), get_protocol("opencompass").describe()
    assert rolebench["references"] == "best" and rolebench["tokenizers"]["zh"] == "cjk-char-v1"
    assert opencompass["references"] == "first" and opencompass["libraries"]["jieba"] == version("jieba")
    assert opencompass["reproduces"] == {"rouge_score": "0.1.2", "rouge_chinese": "1.0.3"}
    json.dumps([rolebench, opencompass])


def test_unknown_protocol_suggests_the_closest_name():
    with pytest.raises(ConfigError, match="did you mean 'opencompass'.*rolebench, opencompass"):
        get_protocol("opencompas")
    with pytest.raises(ConfigError, match="unknown scoring protocol 'bleu'"):
        get_protocol("bleu")


def test_bad_language_empty_references_and_mismatched_batch_are_errors():
    protocol = get_protocol("rolebench")
    with pytest.raises(ConfigError, match="unknown scoring language 'fr'"):
        protocol.score("bonjour", ["bonjour"], "fr")
    with pytest.raises(DataError, match="no reference answer"):
        protocol.score("hello", [], "en")
    with pytest.raises(TypeError, match="not one string"):
        protocol.score("hello", "hello", "en")
    with pytest.raises(ValueError, match="2 predictions but 1 reference lists"):
        protocol.score_batch(["a", "b"], [["a"]], "en")
    assert protocol.score_batch(["a b", "c"], [["a"], ["c", "d"]], "en") == [
        protocol.score("a b", ["a"], "en"),
        protocol.score("c", ["c", "d"], "en"),
    ]


# ---- the fast rolebench scorer (rolebench.scoring.f_measure) ----------------------------------

EN_SPE = "rolebench-eng/instruction-generalization/role_specific"
CJK_ANY = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in CJK_RANGES) + "]")
ADVERSARIAL_EN = [
    *["", ".", "...", " ", "\n", "  .  ", ". .", ". . .", "a. .b", "a..b", "a . . b", ".a", "a.", "a ."],
    *["a\tb", "a  b", "a\u3000b", "a. b. c.", "the the the", "the the the . the", "a a a . a a", "a b c d"],
    *["d c b a", "a b a b a b", "b a b a", "A a", "Hello, world. Hello world", "x y z. z y x. x"],
    *["I am. I am not. I am", "mr. smith went to washington.", "e.g. this, i.e. that", "3.14 is pi"],
    *[
        "Hello 世界. 世界 hello",
        "abc中文def",
        "中文",
        "İstanbul K",
        "İi",
        "😀 😀. 😀",
        "\ud800 lone surrogate",
    ],
    "supercalifragilisticexpialidocious supercalifragilisticexpialidociouz",
    "abcdefgh abcdefghi abcdefghij abcdefghijklmnop abcdefghijklmnopq abcdefghijklmnopr",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 abcdefghijklmnopqrstuvwxyz0123456789",
    *["ＡＢＣ ａｂｃ abc", "Σίσυφος ΣΊΣΥΦΟΣ", "don't won't can't", "a-b a_b a/b", "1 2 3 4 5 . 5 4 3 2 1"],
]
ADVERSARIAL_ZH = [
    *["", ".", "..", "...", "。", "。。", " ", "\n", "你好。世界", "你好.世界", "你好..世界", "你好. .世界"],
    *[".你好", "你好.", "中 文", "中\n文", "中\u3000文", "好好好", "好好好.好", "你好你好你好", "好你"],
    *[
        "Hello 世界",
        "abc中文def",
        "ABC中文",
        "中文abc中文",
        "ＡＢＣ中文",
        "𠀀𠀁 中",
        "한국어 문장",
        "ひらがな カタカナ",
    ],
    *["第1章. 第2章", "3.14", '他说:"你好."', "İ K 中", "😀中😀", "中\ud800文", "中" * 40, "文中" * 30],
]


def reference_f(prediction: str, references: list[str]) -> float:
    """The oracle: the `rolebench` protocol written out plainly, one item at a time."""
    pred = tokenize_cjk_char(prediction)
    return max(rouge_l_f(pred, tokenize_cjk_char(reference)) for reference in references)


def _each_against_each(texts: list[str]) -> tuple[list[str], list[list[str]]]:
    """Every text against every text (one reference), then each against the next four at once."""
    preds = [p for p in texts for _ in texts]
    refs = [[r] for _ in texts for r in texts]
    for k in range(len(texts)):
        preds.append(texts[k])
        refs.append([texts[(k + j) % len(texts)] for j in range(1, 5)])
    return preds, refs


def _baseline_items(data: Path, folder: str) -> list[tuple[str, list[str]]]:
    """(RoleGPT's answer, references) of the test rows that join rolegpt_baseline.jsonl."""
    with open(data / folder / "rolegpt_baseline.jsonl", encoding="utf-8") as handle:
        answers = {(r["role"], r["question"]): r["generated"][0] for r in map(json.loads, handle)}
    with open(data / folder / "test.jsonl", encoding="utf-8") as handle:
        rows = list(map(json.loads, handle))
    return [
        (answers[r["role"], r["question"]], r["generated"])
        for r in rows
        if (r["role"], r["question"]) in answers
    ]


def _every_code_point_next_to_letters() -> list[str]:
    """Every code point next to letters, in texts without and with CJK ("中" in front): the byte paths
    hold exactly because no character but U+0130 and U+212A lowercases to a token character."""
    chars = re.sub(f"{CJK_ANY.pattern}|[\u0130\u212a]", "", "".join(map(chr, range(1, 0x110000))))
    texts = ["X" + "x".join(chars[i : i + 4096]) + "9" for i in range(0, len(chars), 4096)]
    return (
        texts
        + ["中" + text for text in texts[::5]]
        + ["İ" + "x".join(r) for r in ("\u0130\u212a", "\u4e00\u3007")]
    )


def test_vectorised_tokenizer_equals_tokenize_cjk_char(rolebench_data):
    texts = [t for relpath in (EN_CUS, ZH_CUS) for g in _rows(rolebench_data, relpath) for t in g][::7]
    texts += ADVERSARIAL_EN + ADVERSARIAL_ZH + ["K", "İ", "k" * 8, "k" * 9, "k" * 16, "k" * 17, "Ab" * 40]
    for batch in (texts, ADVERSARIAL_EN, ADVERSARIAL_ZH, ["", ""], []):
        keys = cjk_char_keys(batch)
        assert [keys.tokens(i) for i in range(len(batch))] == list(map(tokenize_cjk_char, batch))
    texts = _every_code_point_next_to_letters()
    keys = cjk_char_keys(texts)
    assert [keys.tokens(i) for i in range(len(texts))] == list(map(tokenize_cjk_char, texts))


def test_token_strings_are_the_tokens_of_cjk_char_v1(rolebench_data, token_path):
    texts = [t for relpath in (EN_CUS, ZH_CUS) for g in _rows(rolebench_data, relpath) for t in g][::7]
    texts += ADVERSARIAL_EN + ADVERSARIAL_ZH + ["K", "İ", "xİy", "\u212a", "k" * 16, "k" * 17, "Ab" * 40]
    texts += ["K" * 17 + " " + "k" * 17, "İ" * 3, "\ud800 lone surrogate", "\x00a\x00b", "ÀB cd"]
    texts += [
        "\u212aK" * 10 + " 中",
        "a" * 20 + "İ" + "b" * 20 + "\u212a",
        "中" + "Ab9" * 7 + "文" + "\U0001f600x" * 3,
    ]
    for batch in (texts, ["", " ", "..."], [], _every_code_point_next_to_letters()):
        _assert_same_tokens(f_measure.token_strings(batch), batch)


def test_accelerator_refuses_what_is_not_a_list_of_strings():
    if not f_measure.accelerated():
        pytest.skip(
            "the C accelerator rolebench.scoring._token_codes is not built (no C compiler at install)"
        )
    with pytest.raises(TypeError, match=r"texts\[1\] is int"):
        f_measure.token_strings(["a", 3])  # type: ignore[list-item]


def test_fast_rolebench_equals_rouge_score_on_cjk_free_real_items(rolebench_data, rouge_l, token_path):
    items = [(p, r) for p, r in _baseline_items(rolebench_data, EN_SPE) if not CJK_ANY.search(p + "".join(r))]
    items = random.Random(0).sample(items, 400)
    items += [
        (p, r)
        for p, r in zip(*_each_against_each(ADVERSARIAL_EN), strict=True)
        if not CJK_ANY.search(p + r[0])
    ]
    got = rolebench_f_batch([p for p, _ in items], [r for _, r in items])
    assert got == [rouge_l.score_multi(refs, pred)["rougeL"].fmeasure for pred, refs in items]
    assert got == get_protocol("rolebench").score_batch([p for p, _ in items], [r for _, r in items], "en")


def test_fast_rolebench_equals_the_reference_on_chinese_and_mixed_items(rolebench_data, token_path):
    samples = _multi(rolebench_data, ZH_CUS, 10_000) + _baseline_items(
        rolebench_data, "rolebench-zh/role_specific"
    )
    assert sum(bool(re.search("[A-Za-z0-9]", p + "".join(r))) for p, r in samples) > 200  # mixed scripts
    en_rows = [g for g in _rows(rolebench_data, EN_CUS) if any(map(CJK.search, g))]  # Chinese in English
    samples += [(t, g[:3] + ["Hello"]) for g in en_rows for t in g] + [
        (g[0], [t]) for g in en_rows for t in g
    ]
    for texts in (ADVERSARIAL_ZH, ADVERSARIAL_EN + ADVERSARIAL_ZH):
        samples += list(zip(*_each_against_each(texts), strict=True))
    # Empty texts next to texts of the other tokenizer path, in one batch: token ranges must not mix.
    samples += [("", ["abc", ""]), ("中文 abc", ["", "中"]), ("abc", ["中文abc", ""]), ("", ["中"])]
    samples += [
        ("K", ["k", "K"]),
        ("İi", ["i i", "İ"]),
        ("中.文", ["中文", "中. 文"]),
        ("x" * 5000, ["x" * 4999]),
    ]
    predictions, references = [p for p, _ in samples], [r for _, r in samples]
    expected = [reference_f(p, r) for p, r in samples]
    assert rolebench_f_batch(predictions, references) == expected
    assert get_protocol("rolebench").score_batch(predictions, references, "zh") == expected


def test_code_point_ids_are_exact_through_every_round_and_split(monkeypatch):
    rng = np.random.default_rng(0)
    k1 = rng.integers(0, 2**63, 200_000, dtype=np.uint64) % np.uint64(100_000)  # many repeats
    k2 = k1 % np.uint64(3)
    for bits in ((19, 18, 17, 16, 15, 14, 13, 12), (4,)):  # (4,): nearly every key left for the sort
        monkeypatch.setattr(f_measure, "_TABLE_BITS", bits)
        ids = f_measure.code_point_ids(k1, k2)
        pairs = np.unique(np.stack((k1, k2, ids.astype(np.uint64)), axis=1), axis=0)
        assert len(pairs) == len(np.unique(pairs[:, :2], axis=0)) == len(np.unique(ids))  # a bijection
        assert not ((ids >= 0xD800) & (ids < 0xE000)).any() and ids.max() < 0x110000
    predictions, references = ["a b c", "d e", "a"], [["a c"], ["e", "d"], ["b"]]
    expected = [reference_f(p, r) for p, r in zip(predictions, references, strict=True)]
    monkeypatch.setattr(f_measure, "_token_codes", None)  # the numpy path
    monkeypatch.setattr(f_measure, "_TABLE_BITS", (1,))  # 2 codes from the hash round, then the sort
    monkeypatch.setattr(f_measure, "_N_CODES", 4)  # 5 tokens do not fit: the batch is split in halves
    assert rolebench_f_batch(predictions, references) == expected
    with pytest.raises(ValueError, match="more distinct tokens"):
        rolebench_f_batch(["a b c"], [["d e f"]])


def test_more_distinct_tokens_than_code_points_split_the_batch(token_path):
    """Over 1,112,064 distinct tokens in one block: scored in halves; in one item, a clear error."""
    many = " ".join(f"w{i:x}" for i in range(600_000))
    others = " ".join(f"v{i:x}" for i in range(600_000))
    predictions, references = [many, others], [["w0 w1 x"], ["v2 y"]]
    assert rolebench_f_batch(predictions, references) == [
        reference_f(p, r) for p, r in zip(predictions, references, strict=True)
    ]
    with pytest.raises(ValueError, match="more distinct tokens"):
        rolebench_f_batch([many + " " + others], [["w0"]])


def test_blocks_cover_the_batch_in_order(monkeypatch):
    monkeypatch.setattr(f_measure, "_BLOCK_CHARS", 10)
    predictions = ["a b", "c" * 30, "d", "e", "f g h i j k"]
    references = [["a"], ["c" * 30], ["x"], ["e e"], ["k"]]
    assert f_measure._blocks(predictions, references) == [(0, 2), (2, 5)]
    expected = [reference_f(p, r) for p, r in zip(predictions, references, strict=True)]
    assert rolebench_f_batch(predictions, references) == expected


def test_fast_rolebench_errors():
    with pytest.raises(DataError, match="no reference answer"):
        rolebench_f_batch(["a"], [[]])
    with pytest.raises(ValueError, match="1 predictions but 2 reference lists"):
        rolebench_f_batch(["a"], [["a"], ["b"]])
    with pytest.raises(TypeError, match="not one string"):
        rolebench_f_batch(["a"], ["a"])
    assert rolebench_f_batch([], []) == []


def _interval_one_resample_at_a_time(values, resamples, seed):
    """The loop every earlier version ran (one seeded `choices` draw and one `sum` per resample)."""
    from rolebench.scoring.stats import percentile_interval

    rng = random.Random(seed)
    return percentile_interval(
        [sum(rng.choices(values, k=len(values))) / len(values) for _ in range(resamples)]
    )


@pytest.mark.parametrize("n", [2, 3, 27, 239, 1451])
@pytest.mark.parametrize("seed", [0, 1, -7, 2**40 + 3])
def test_bootstrap_intervals_are_those_every_earlier_version_published(n, seed):
    """results.json's `_ci` (and a judge's win-rate interval) are found by numpy now: the very same floats
    as the one-at-a-time loop, for any seed and size, so no published interval moves."""
    from rolebench.scoring.stats import bootstrap_ci

    rng = random.Random(n * 31 + seed)
    for values in (
        [rng.random() for _ in range(n)],
        [float(rng.random() < 0.3) for _ in range(n)],
        [rng.choice((0.0, 0.5, 1.0)) for _ in range(n)],
    ):
        for resamples in (1, 9, 1000):
            assert bootstrap_ci(values, resamples=resamples, seed=seed) == _interval_one_resample_at_a_time(
                values, resamples, seed
            )
    assert bootstrap_ci([0.5], seed=seed) is None and bootstrap_ci([0.1, 0.2], resamples=0) is None
