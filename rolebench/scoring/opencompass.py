"""What OpenCompass does with RoleBench, reproduced bit for bit: its text cleaning, its Chinese words,
its sample order and its pooled, bootstrapped split number.

- English (`RougeEvaluator`: HF `evaluate` "rouge", `use_stemmer=False`): `rouge_score`'s default
  tokenizer (CJK characters are deleted) and its F, on the first reference only.
- Chinese (`JiebaRougeEvaluator`): `general_postprocess` (keep the text before the first newline,
  "." or ","; drop punctuation and English articles; squeeze spaces), then `jieba.cut` joined by
  spaces (an empty result becomes a placeholder token), then `rouge_chinese` 1.0.3's ROUGE-L.
- The split number pools a split's general and role-specific test sets in one shuffled order
  (`opencompass_order`); for Chinese it is the mean, for English `rouge_score`'s
  BootstrapAggregator "mid" (the median of 1000 bootstrap means, numpy seed 0), which differs from
  the mean by resampling noise (1e-4 to 3e-4 on RoleBench). OpenCompass prints x100; we report
  fractions. jieba is used with its global default dictionary, as in OpenCompass.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Sequence
from typing import Any

from rolebench.errors import MissingDependency

OPENCOMPASS_ZH_TOKENIZER = "opencompass-general_postprocess+jieba"
# JiebaRougeEvaluator's stand-ins for an empty text (different ones, so they never match).
OC_PRED_PLACEHOLDER = "__PREDPLACEHOLDER__"
OC_REF_PLACEHOLDER = "__REFRPLACEHOLDER__"

_OC_CUT_RE = re.compile(r"[\n.,]")
_OC_PUNCT_RE = re.compile(r"[^\w\s]")
_OC_ARTICLE_RE = re.compile(r"\b(?:a|an|the)\b", re.IGNORECASE)
_OC_SPACES_RE = re.compile(r"\s+")


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


def tokenize_opencompass_zh_reference(text: str) -> list[str]:
    return tokenize_opencompass_zh(text, OC_REF_PLACEHOLDER)


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


def mean_in_order(values: Sequence[float]) -> float:
    """The mean summed in order, as `rouge_chinese` sums it."""
    total: float = 0
    for value in values:
        total += value
    return total / len(values)
