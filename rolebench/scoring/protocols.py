"""ROUGE-L and the scoring protocols `rolebench` (default) and `opencompass`.

Every protocol computes the F-measure of ROUGE-L from the length of the longest common subsequence
(LCS) of two token sequences. The LCS runs in compiled code (`rapidfuzz.distance.LCSseq`): the
tokens of one (prediction, reference) pair are mapped to code points, one per distinct token, so
the LCS of the two strings is the LCS of the token sequences. The F values equal the reference
implementations bit for bit (`tests/test_scoring.py` checks it on real RoleBench pairs).

`rolebench` (the default)
    Multi-reference: the best F over all candidate references (what `rouge_score`'s `score_multi`
    returns). Tokenizer `cjk-char-v1` for both languages: the text is lowercased, every run of
    `[a-z0-9]` is a token (exactly `rouge_score`'s default tokenizer, no stemming) and every CJK
    character (Han ideographs with their extensions and compatibility forms, kana, Hangul
    syllables) is a token of its own; everything else (punctuation, spaces, other scripts) is
    dropped. On text without CJK characters its tokens are `rouge_score`'s, token for token.
    English uses it too, so an answer is never scored 0 just because it is written in Chinese, and
    a score never depends on the language label. Character tokens need no segmentation
    dictionary, so the numbers do not move with a jieba version or user dictionary.
    F = 2PR/(P+R), P = lcs/len(prediction), R = lcs/len(reference), 0 when lcs = 0.

`opencompass`
    Reproduces OpenCompass's RoleBench evaluators per sample (its `RoleBench*Dataset` keeps
    only `generated[0]`, so only the first reference counts):
    - English (`RougeEvaluator`: HF `evaluate` "rouge", `use_stemmer=False`): `rouge_score`'s
      default tokenizer (CJK characters are deleted) and its F.
    - Chinese (`JiebaRougeEvaluator`): OpenCompass's `general_postprocess` (keep the text before
      the first newline, "." or ","; drop punctuation and English articles; squeeze spaces), then
      `jieba.cut` joined by spaces (an empty result becomes a placeholder token), then
      `rouge_chinese` 1.0.3's ROUGE-L: F = 2 * (P*R / (P + R + 1e-8)) over the words.
    OpenCompass prints x100; we report fractions. Its task number pools a split's general and
    role-specific test sets in one shuffled order (`opencompass_order`); for Chinese it is the mean
    of the values above, for English `rouge_score`'s BootstrapAggregator "mid" (the median of 1000
    bootstrap means, numpy seed 0), which differs from the mean by resampling noise (1e-4 to 3e-4
    on RoleBench: visible in the two decimals OpenCompass prints). `OpenCompassProtocol.aggregate`
    reproduces both bit for bit from values in that order. jieba is used with its global default
    dictionary, as in OpenCompass: a user dictionary loaded into it in this process changes results.

A reference list must not be empty: there is nothing to score against, which is a data error
(`DataError`), never a silent 0. An empty or token-less prediction scores 0.
"""

from __future__ import annotations

import difflib
import functools
import logging
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from itertools import count, repeat
from typing import Any

from rapidfuzz.distance import LCSseq

from rolebench.errors import ConfigError, DataError, MissingDependency
from rolebench.scoring.stats import mean

PROTOCOLS: tuple[str, ...] = ("rolebench", "opencompass")
LANGUAGES: tuple[str, ...] = ("en", "zh")

CJK_CHAR_TOKENIZER = "cjk-char-v1"
ROUGE_SCORE_TOKENIZER = "rouge_score-default-nostem"
OPENCOMPASS_ZH_TOKENIZER = "opencompass-general_postprocess+jieba"
# The versions of the reference implementations that `tests/test_scoring.py` matches bit for bit.
REPRODUCES = {"rouge_score": "0.1.2", "rouge_chinese": "1.0.3"}

Tokens = Sequence[str]
Tokenizer = Callable[[str], list[str]]
FMeasure = Callable[[int, int, int], float]

_ALNUM_RE = re.compile(r"[a-z0-9]+")
_CJK_CHARS = (
    "\u3007"  # 〇 ideographic number zero
    "\u3041-\u3096\u309d-\u309f"  # hiragana
    "\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff"  # katakana (with the prolonged sound mark)
    "\u3400-\u4dbf\u4e00-\u9fff"  # CJK unified ideographs and extension A
    "\uac00-\ud7a3"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\U00020000-\U000323af"  # extensions B-H and the compatibility supplement
)
_CJK_CHAR_RE = re.compile(f"[a-z0-9]+|[{_CJK_CHARS}]")
_ASCII_NON_ALNUM_TO_SPACE = {i: " " for i in range(128) if not chr(i).isalnum()}

# OpenCompass `general_postprocess` (opencompass/utils/text_postprocessors.py), re-implemented.
_OC_CUT_RE = re.compile(r"[\n.,]")
_OC_PUNCT_RE = re.compile(r"[^\w\s]")
_OC_ARTICLE_RE = re.compile(r"\b(?:a|an|the)\b", re.IGNORECASE)
_OC_SPACES_RE = re.compile(r"\s+")
# JiebaRougeEvaluator's stand-ins for an empty text (different ones, so they never match).
OC_PRED_PLACEHOLDER = "__PREDPLACEHOLDER__"
OC_REF_PLACEHOLDER = "__REFRPLACEHOLDER__"

_MAX_CODE_POINT = 0x10FFFF
_CODE_CHARS = tuple(map(chr, range(4096)))  # code points for the tokens of predictions up to 4096 tokens


def tokenize_rouge_score(text: str) -> list[str]:
    """`rouge_score`'s default tokenizer without stemming: lowercase, `[a-z0-9]+` runs (CJK is deleted)."""
    lowered = text.lower()
    if lowered.isascii():  # the same tokens, twice as fast
        return lowered.translate(_ASCII_NON_ALNUM_TO_SPACE).split()
    return _ALNUM_RE.findall(lowered)


def tokenize_cjk_char(text: str) -> list[str]:
    """Tokenizer `cjk-char-v1`: lowercased `[a-z0-9]+` runs plus one token per CJK character."""
    lowered = text.lower()
    if lowered.isascii():  # no CJK: the same tokens, twice as fast
        return lowered.translate(_ASCII_NON_ALNUM_TO_SPACE).split()
    return _CJK_CHAR_RE.findall(lowered)


# One tokenizer for both languages (see the module docstring): the names say where each is used.
tokenize_en: Tokenizer = tokenize_cjk_char
tokenize_zh: Tokenizer = tokenize_cjk_char


def general_postprocess(text: str) -> str:
    """OpenCompass's `general_postprocess`: first newline/period/comma cut, no punctuation or articles."""
    head = _OC_CUT_RE.split(text, maxsplit=1)[0]
    head = _OC_PUNCT_RE.sub("", head)
    head = _OC_ARTICLE_RE.sub("", head)
    return _OC_SPACES_RE.sub(" ", head).strip()


@functools.cache
def _jieba() -> Any:
    """The jieba module, imported on first use with its start-up chatter silenced."""
    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


def tokenize_opencompass_zh(text: str, placeholder: str = OC_PRED_PLACEHOLDER) -> list[str]:
    """OpenCompass's Chinese words: `general_postprocess`, jieba (default dictionary), space split."""
    words = " ".join(_jieba().cut(general_postprocess(text))).split()
    return words or [placeholder]


def lcs_lengths(prediction: Tokens, references: Sequence[Tokens]) -> list[int]:
    """Length of the longest common subsequence of `prediction` with each reference (compiled LCS).

    Tokens become code points, a distinct one per distinct prediction token (`dict(zip(...))` keeps
    one position per token, so the map is one-to-one); reference tokens absent from the prediction
    are dropped, since they cannot be part of a common subsequence.
    """
    if not prediction:
        return [0] * len(references)
    if len(prediction) <= len(_CODE_CHARS):
        chars = dict(zip(prediction, _CODE_CHARS, strict=False))
    else:
        distinct = dict.fromkeys(prediction)
        if len(distinct) > _MAX_CODE_POINT:  # more distinct tokens than code points: integer sequences
            ids = dict(zip(distinct, count(), strict=False))
            pred_ids = [ids[t] for t in prediction]
            return [LCSseq.similarity(pred_ids, [ids[t] for t in ref if t in ids]) for ref in references]
        chars = dict(zip(distinct, map(chr, count()), strict=False))
    get = chars.get
    pred = "".join(map(chars.__getitem__, prediction))
    return [LCSseq.similarity(pred, "".join(map(get, ref, repeat("")))) for ref in references]


def lcs_length(prediction: Tokens, reference: Tokens) -> int:
    """Length of the longest common subsequence of two token sequences."""
    return lcs_lengths(prediction, [reference])[0]


def f_rouge_score(lcs: int, n_pred: int, n_ref: int) -> float:
    """`rouge_score`'s ROUGE-L F: 2PR/(P+R) with P = lcs/n_pred, R = lcs/n_ref; 0 when lcs = 0."""
    if lcs == 0:
        return 0.0
    precision = lcs / n_pred
    recall = lcs / n_ref
    return 2 * precision * recall / (precision + recall)


def f_rouge_chinese(lcs: int, n_pred: int, n_ref: int) -> float:
    """`rouge_chinese` 1.0.3's ROUGE-L F: 2 * (P*R / (P + R + 1e-8)); 0 when lcs = 0."""
    if lcs == 0:
        return 0.0
    p_lcs = lcs / n_pred
    r_lcs = lcs / n_ref
    return 2.0 * ((p_lcs * r_lcs) / (p_lcs + r_lcs + 1e-8))


def rouge_l_f(pred_tokens: Tokens, ref_tokens: Tokens) -> float:
    """ROUGE-L F-measure of two token sequences, equal to `rouge_score`'s `rougeL` fmeasure."""
    return f_rouge_score(lcs_length(pred_tokens, ref_tokens), len(pred_tokens), len(ref_tokens))


def _library_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def _check_language(language: str) -> None:
    if language not in LANGUAGES:
        raise ConfigError(f"unknown scoring language {language!r}", where="ROUGE-L scoring",
                          fix="use 'en' or 'zh' (the split's language)")


class _Plan:
    """How one protocol scores one language: its tokenizers and its F-measure."""

    __slots__ = ("pred_tokens", "ref_tokens", "f_measure")

    def __init__(self, pred_tokens: Tokenizer, ref_tokens: Tokenizer, f_measure: FMeasure) -> None:
        self.pred_tokens, self.ref_tokens, self.f_measure = pred_tokens, ref_tokens, f_measure


class ScoringProtocol(ABC):
    """A ROUGE-L protocol: which references count, how texts are tokenized, which F-measure."""

    name: str = ""
    references: str = "best"  # "best": max F over all references; "first": the first reference only

    @abstractmethod
    def _plan(self, language: str) -> _Plan:
        """The tokenizers and F-measure for `language` (already checked)."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """What `results.json` records under `config.scoring`."""

    def _references(self, references: Sequence[str]) -> Sequence[str]:
        if isinstance(references, str):
            raise TypeError("references must be a sequence of strings, not one string")
        if not references:
            raise DataError("a sample has no reference answer to score against",
                            where=f"ROUGE-L ({self.name} protocol)",
                            fix="check the split's `generated` lists; samples need at least one reference")
        return references[:1] if self.references == "first" else references

    def _score(self, plan: _Plan, prediction: str, references: Sequence[str]) -> float:
        refs = list(map(plan.ref_tokens, self._references(references)))
        pred = plan.pred_tokens(prediction)
        lcs = lcs_lengths(pred, refs)
        if len(refs) == 1:
            return plan.f_measure(lcs[0], len(pred), len(refs[0]))
        return max(map(plan.f_measure, lcs, repeat(len(pred)), map(len, refs)))

    def score(self, prediction: str, references: Sequence[str], language: str) -> float:
        """ROUGE-L F in [0, 1] of one prediction against its references; `language` is "en" or "zh"."""
        _check_language(language)
        return self._score(self._plan(language), prediction, references)

    def aggregate(self, values: Sequence[float], language: str) -> float | None:
        """The task-level number from per-sample scores: their mean (None for no values)."""
        _check_language(language)
        return mean(values)

    def score_batch(self, predictions: Sequence[str], references: Sequence[Sequence[str]],
                    language: str) -> list[float]:
        """`score` for many samples of one language (predictions[i] against references[i])."""
        if len(predictions) != len(references):
            raise ValueError(f"{len(predictions)} predictions but {len(references)} reference lists")
        _check_language(language)
        plan = self._plan(language)
        return [self._score(plan, p, refs) for p, refs in zip(predictions, references, strict=True)]


class RoleBenchProtocol(ScoringProtocol):
    """The default: best F over all references, tokenizer `cjk-char-v1` for both languages."""

    name = "rolebench"
    references = "best"
    _PLAN = _Plan(tokenize_cjk_char, tokenize_cjk_char, f_rouge_score)

    def _plan(self, language: str) -> _Plan:
        return self._PLAN

    def describe(self) -> dict[str, Any]:
        return {"protocol": self.name, "references": self.references,
                "tokenizers": {"en": CJK_CHAR_TOKENIZER, "zh": CJK_CHAR_TOKENIZER},
                "f_measure": {"en": "rouge_score", "zh": "rouge_score"},
                "libraries": {"rapidfuzz": _library_version("rapidfuzz")},
                "reproduces": {"rouge_score": REPRODUCES["rouge_score"]}}


def _oc_ref_tokens(text: str) -> list[str]:
    return tokenize_opencompass_zh(text, OC_REF_PLACEHOLDER)


class OpenCompassProtocol(ScoringProtocol):
    """OpenCompass's RoleBench scoring: the first reference, rouge_score (en), jieba + rouge_chinese (zh)."""

    name = "opencompass"
    references = "first"
    _PLANS = {
        "en": _Plan(tokenize_rouge_score, tokenize_rouge_score, f_rouge_score),
        "zh": _Plan(tokenize_opencompass_zh, _oc_ref_tokens, f_rouge_chinese),
    }

    def _plan(self, language: str) -> _Plan:
        return self._PLANS[language]

    def aggregate(self, values: Sequence[float], language: str) -> float | None:
        """OpenCompass's task number from per-sample scores, bit for bit (x100 gives what it prints).

        Chinese: the mean, summed in order (as `rouge_chinese` does). English: `rouge_score`'s
        BootstrapAggregator "mid" as OpenCompass obtains it (see `bootstrap_mid_opencompass`).
        Both depend on the order: pass the values in OpenCompass's order (`opencompass_order`).
        """
        _check_language(language)
        if not values:
            return None
        if language == "en":
            return bootstrap_mid_opencompass(values)
        total: float = 0
        for value in values:
            total += value
        return total / len(values)

    def describe(self) -> dict[str, Any]:
        return {"protocol": self.name, "references": self.references,
                "tokenizers": {"en": ROUGE_SCORE_TOKENIZER, "zh": OPENCOMPASS_ZH_TOKENIZER},
                "f_measure": {"en": "rouge_score", "zh": "rouge_chinese"},
                "libraries": {"rapidfuzz": _library_version("rapidfuzz"), "jieba": _library_version("jieba")},
                "reproduces": dict(REPRODUCES), "scale": "fraction (OpenCompass prints x100)"}


def _numpy(feature: str) -> Any:
    try:
        import numpy
    except ImportError:
        raise MissingDependency(feature, "numpy", "opencompass") from None
    return numpy


def bootstrap_mid_opencompass(values: Sequence[float], seed: int = 0, samples: int = 1000) -> float:
    """The ROUGE-L F that OpenCompass's RougeEvaluator reports (as a fraction), from per-sample F values.

    HF `evaluate`'s "rouge" feeds rouge1, rouge2, rougeL and rougeLsum scores to `rouge_score`'s
    BootstrapAggregator after OpenCompass seeds numpy's global generator with 0; the aggregator
    resamples each type in that order (`samples` draws of n indices each) and keeps the median of
    the resampled means. So rougeL's draws come after 2 * `samples` others, and the means are taken
    over a (precision, recall, fmeasure) matrix, whose column sums are replayed here exactly.
    """
    np = _numpy("the opencompass protocol's English aggregate")
    n = len(values)
    matrix = np.zeros((n, 3))
    matrix[:, 2] = values
    rng = np.random.RandomState(seed)  # the legacy generator behind np.random.seed / np.random.choice
    population = np.arange(n)
    for _ in range(2 * samples):  # rouge1 and rouge2 are resampled first
        rng.choice(population, size=n)
    means = np.zeros((samples, 3))
    for i in range(samples):
        means[i, :] = np.mean(matrix[rng.choice(population, size=n), :], axis=0)
    return float(np.percentile(means, 50.0, axis=0)[2])


def opencompass_order(n: int, seed: int = 42) -> list[int]:
    """OpenCompass's sample order: its RoleBench test set is the split's general/test.jsonl rows followed
    by role_specific/test.jsonl rows, shuffled by `datasets`' `shuffle(seed=42)` (this permutation).
    Element i is the index, in that concatenation, of OpenCompass's i-th sample.
    """
    np = _numpy("the opencompass protocol's sample order")
    return [int(i) for i in np.random.default_rng(seed).permutation(n)]


_CLASSES: dict[str, type[ScoringProtocol]] = {"rolebench": RoleBenchProtocol,
                                              "opencompass": OpenCompassProtocol}


def get_protocol(name: str) -> ScoringProtocol:
    """The scoring protocol called `name` (one of PROTOCOLS); ConfigError with a suggestion otherwise."""
    cls = _CLASSES.get(name)
    if cls is None:
        close = difflib.get_close_matches(str(name), PROTOCOLS, n=1)
        raise ConfigError(f"unknown scoring protocol {name!r}", where="--protocol",
                          fix=(f"did you mean {close[0]!r}? " if close else "")
                          + "choose one of: " + ", ".join(PROTOCOLS))
    return cls()
