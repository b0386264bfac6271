"""The ROUGE-L scoring protocols, one registry, and the public scorer `rouge_l`.

- `rolellm` (the default): the RoleLLM paper's own numbers, pip `rouge` 1.0.1's summary-level
  ROUGE-L RECALL, best over the references (`rolebench.scoring.rolellm`).
- `rolebench`: the F-measure, best over all references (what `rouge_score`'s `score_multi` returns),
  tokenizer `cjk-char-v1` for both languages, so an answer is never scored 0 for being Chinese.
- `opencompass`: OpenCompass's RoleBench numbers exactly (`rolebench.scoring.opencompass`): the
  first reference only; its pooled split number is `split_total`.

Every protocol's values equal its reference implementation bit for bit (`tests/test_scoring.py`).
A reference list must not be empty: there is nothing to score against, which is a data error
(`DataError`), never a silent 0. An empty or token-less prediction scores 0.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from itertools import repeat
from typing import Any, ClassVar

from rolebench.errors import ConfigError, ConfigTypeError, kind_of
from rolebench.results.scoring_settings import DEFAULT_PROTOCOL as DEFAULT_PROTOCOL
from rolebench.results.scoring_settings import F_MEASURE_PROTOCOL as F_MEASURE_PROTOCOL
from rolebench.results.scoring_settings import OPENCOMPASS_PROTOCOL, check_protocol_name
from rolebench.results.scoring_settings import PAPER_PROTOCOL as PAPER_PROTOCOL
from rolebench.results.scoring_settings import PROTOCOLS as PROTOCOLS
from rolebench.scoring.f_measure import rolebench_f_batch
from rolebench.scoring.inputs import LANGUAGES, check_batch, check_language, reference_lists, text_list
from rolebench.scoring.lcs import f_rouge_chinese, f_rouge_score, lcs_lengths
from rolebench.scoring.opencompass import (
    OPENCOMPASS_ZH_TOKENIZER,
    bootstrap_mid_opencompass,
    mean_in_order,
    opencompass_order,
    tokenize_opencompass_zh,
    tokenize_opencompass_zh_reference,
)
from rolebench.scoring.rolellm import rolellm_recall_batch
from rolebench.scoring.stats import mean
from rolebench.scoring.tokenize import (
    CJK_CHAR_TOKENIZER,
    ROLELLM_TOKENIZERS,
    ROUGE_SCORE_TOKENIZER,
    Tokenizer,
    tokenize_cjk_char,
    tokenize_rouge_score,
)

# Every run carries the paper's metric and the F-measure side by side, whatever its headline protocol.
COMPANIONS: tuple[str, ...] = (PAPER_PROTOCOL, F_MEASURE_PROTOCOL)
# The versions of the reference implementations that `tests/test_scoring.py` matches bit for bit.
REPRODUCES = {"rouge": "1.0.1", "rouge_score": "0.1.2", "rouge_chinese": "1.0.3"}


def library_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


class ScoringProtocol(ABC):
    """A ROUGE-L protocol: which references count, how texts are tokenized, recall or F-measure."""

    name: ClassVar[str] = ""
    measure: ClassVar[str] = "f"  # "recall" or "f"
    references: ClassVar[str] = "best"  # "best": max over all references; "first": the first reference only

    @abstractmethod
    def _batch(
        self, predictions: Sequence[str], references: Sequence[Sequence[str]], language: str
    ) -> list[float]:
        """Scores of checked inputs (references already cut to what counts)."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """What `results.json` records about the protocol."""

    @property
    def measure_name(self) -> str:
        """How tables name its numbers: "recall" or "F"."""
        return "F" if self.measure == "f" else self.measure

    def _counted(self, references: Sequence[str]) -> Sequence[str]:
        return references[:1] if self.references == "first" else references

    def score_batch(
        self, predictions: Sequence[str], references: Sequence[Sequence[str]], language: str
    ) -> list[float]:
        """One score per prediction (predictions[i] against references[i]), in [0, 1]."""
        check_batch(predictions, references, f"ROUGE-L ({self.name} protocol)")
        check_language(language)
        return self._batch(predictions, [self._counted(refs) for refs in references], language)

    def score(self, prediction: str, references: Sequence[str], language: str) -> float:
        """The score of one prediction against its references; `language` is "en" or "zh"."""
        return self.score_batch([prediction], [references], language)[0]

    def aggregate(self, values: Sequence[float], language: str) -> float | None:
        """The task-level number from per-sample scores: their mean (None for no values)."""
        check_language(language)
        return mean(values)

    def split_total(
        self, general: Sequence[float | None], specific: Sequence[float | None], language: str
    ) -> float | None:
        """One number for a whole split (its general and role-specific samples), if the protocol has one."""
        return None


class RoleLLMProtocol(ScoringProtocol):
    """The paper's scorer: pip `rouge` 1.0.1's summary-level ROUGE-L recall, best over the references."""

    name = PAPER_PROTOCOL
    measure = "recall"
    references = "best"

    def _batch(
        self, predictions: Sequence[str], references: Sequence[Sequence[str]], language: str
    ) -> list[float]:
        return rolellm_recall_batch(predictions, references, language)

    def describe(self) -> dict[str, Any]:
        return {
            "protocol": self.name,
            "measure": self.measure,
            "references": self.references,
            "tokenizers": dict(ROLELLM_TOKENIZERS),
            "sentences": "split on '.'",
            "empty": 0.0,
            "reproduces": {"rouge": REPRODUCES["rouge"]},
            "libraries": {"rapidfuzz": library_version("rapidfuzz")},
        }


class _TokenPlan(ScoringProtocol):
    """Protocols that tokenize both texts and take an F-measure of their token LCS."""

    plans: ClassVar[dict[str, tuple[Tokenizer, Tokenizer, Any]]]  # language -> (pred, ref tokenizer, F)

    def _batch(
        self, predictions: Sequence[str], references: Sequence[Sequence[str]], language: str
    ) -> list[float]:
        pred_tokens, ref_tokens, f_measure = self.plans[language]
        scores = []
        for prediction, refs in zip(predictions, references, strict=True):
            pred = pred_tokens(prediction)
            tokenized = list(map(ref_tokens, refs))
            lcs = lcs_lengths(pred, tokenized)
            scores.append(max(map(f_measure, lcs, repeat(len(pred)), map(len, tokenized))))
        return scores


class RoleBenchProtocol(_TokenPlan):
    """The F-measure: best F over all references, tokenizer `cjk-char-v1` for both languages."""

    name = F_MEASURE_PROTOCOL
    measure = "f"
    references = "best"
    plans = {lang: (tokenize_cjk_char, tokenize_cjk_char, f_rouge_score) for lang in LANGUAGES}

    def _batch(
        self, predictions: Sequence[str], references: Sequence[Sequence[str]], language: str
    ) -> list[float]:
        """The same floats as the per-item `_TokenPlan` loop with `plans`, vectorised over the batch
        (`rolebench.scoring.f_measure`); cjk-char-v1 is the same for both languages."""
        return rolebench_f_batch(predictions, references)

    def describe(self) -> dict[str, Any]:
        return {
            "protocol": self.name,
            "measure": self.measure,
            "references": self.references,
            "tokenizers": {"en": CJK_CHAR_TOKENIZER, "zh": CJK_CHAR_TOKENIZER},
            "f_measure": {"en": "rouge_score", "zh": "rouge_score"},
            "libraries": {"rapidfuzz": library_version("rapidfuzz")},
            "reproduces": {"rouge_score": REPRODUCES["rouge_score"]},
        }


class OpenCompassProtocol(_TokenPlan):
    """OpenCompass's RoleBench scoring: the first reference, rouge_score (en), jieba + rouge_chinese (zh)."""

    name = OPENCOMPASS_PROTOCOL
    measure = "f"
    references = "first"
    plans = {
        "en": (tokenize_rouge_score, tokenize_rouge_score, f_rouge_score),
        "zh": (tokenize_opencompass_zh, tokenize_opencompass_zh_reference, f_rouge_chinese),
    }

    def aggregate(self, values: Sequence[float], language: str) -> float | None:
        """OpenCompass's number from per-sample scores in its order, bit for bit (x100 is what it prints):
        the in-order mean for Chinese, `rouge_score`'s BootstrapAggregator "mid" for English."""
        check_language(language)
        if not values:
            return None
        return bootstrap_mid_opencompass(values) if language == "en" else mean_in_order(values)

    def split_total(
        self, general: Sequence[float | None], specific: Sequence[float | None], language: str
    ) -> float | None:
        """The number OpenCompass prints for a split: both test sets pooled in its shuffled order;
        None when a sample has no score (OpenCompass would have scored every sample)."""
        pooled = [*general, *specific]
        if not pooled or any(v is None for v in pooled):
            return None
        values = [float(v) for v in pooled if v is not None]
        return self.aggregate([values[i] for i in opencompass_order(len(values))], language)

    def describe(self) -> dict[str, Any]:
        return {
            "protocol": self.name,
            "measure": self.measure,
            "references": self.references,
            "tokenizers": {"en": ROUGE_SCORE_TOKENIZER, "zh": OPENCOMPASS_ZH_TOKENIZER},
            "f_measure": {"en": "rouge_score", "zh": "rouge_chinese"},
            "libraries": {"rapidfuzz": library_version("rapidfuzz"), "jieba": library_version("jieba")},
            "reproduces": {
                "rouge_score": REPRODUCES["rouge_score"],
                "rouge_chinese": REPRODUCES["rouge_chinese"],
            },
            "scale": "fraction (OpenCompass prints x100)",
        }


_CLASSES: dict[str, type[ScoringProtocol]] = {
    cls.name: cls for cls in (RoleLLMProtocol, RoleBenchProtocol, OpenCompassProtocol)
}


def get_protocol(name: str, where: str = "--protocol") -> ScoringProtocol:
    """The scoring protocol called `name` (one of PROTOCOLS); ConfigError with a suggestion otherwise
    (ConfigTypeError for a name that is not a text); `where` names the option or argument."""
    if not isinstance(name, str):
        raise ConfigTypeError(
            f"the scoring protocol is {kind_of(name)}, not a name",
            where=where,
            fix="choose one of: " + ", ".join(PROTOCOLS),
        )
    return _CLASSES[check_protocol_name(name, where)]()


def protocols_for(headline: str, held: Sequence[str] = ()) -> list[ScoringProtocol]:
    """The protocols a run computes: its headline protocol first, then the companions, then any other
    protocol the run already holds (added by `rolebench score`)."""
    names = dict.fromkeys([headline, *COMPANIONS, *held])
    return [get_protocol(name) for name in names]


def held_protocols(headline: str, scoring: Mapping[str, Any] | None = None) -> list[ScoringProtocol]:
    """The protocols a run computes (`protocols_for`), with those its config's `scoring` block holds."""
    return protocols_for(headline, list((scoring or {}).get("protocols") or {}))


def rouge_l(
    predictions: Sequence[str],
    references: Sequence[Sequence[str]],
    language: str = "en",
    protocol: str = DEFAULT_PROTOCOL,
) -> list[float]:
    """ROUGE-L of each prediction against its list of references, one score per item, in [0, 1].

    Args:
        predictions: the texts to score.
        references: one list of reference texts per prediction (at least one each).
        language: "en" or "zh" (Chinese is scored per character under `rolellm` and `rolebench`).
        protocol: "rolellm" (the RoleLLM paper's recall, default), "rolebench" (best F-measure) or
            "opencompass" (OpenCompass's numbers: first reference, jieba words for Chinese).

    Returns:
        One score per prediction.

    Raises:
        ValueError: a bad value (lists of different lengths, an empty reference list, an unknown
            language or protocol), as `rolebench.ConfigError` / `DataError`.
        TypeError: an argument of the wrong type (a text where a list belongs, a list where a text
            does), as `rolebench.errors.ConfigTypeError`. Every message names the argument.

    Example:
        >>> from rolebench import rouge_l
        >>> rouge_l(["I am the Monkey King."], [["I am Sun Wukong, the Monkey King."]])
        [0.7142857142857143]
    """
    texts = text_list(predictions, "predictions", "rouge_l(predictions=...)")
    refs = reference_lists(references, "references", "rouge_l(references=...)")
    if len(texts) != len(refs):
        raise ConfigError(
            f"{len(texts)} predictions but {len(refs)} reference lists",
            where="rouge_l(predictions=..., references=...)",
            fix="give one list of references per prediction",
        )
    check_language(language, where="rouge_l(language=...)")
    return get_protocol(protocol, where="rouge_l(protocol=...)").score_batch(texts, refs, language)
