"""What every scorer accepts: a known language, and one non-empty list of references per prediction.

Checked once here, by the protocols and by the batch scorers that can be called on their own.
"""

from __future__ import annotations

from collections.abc import Sequence

from rolebench.errors import ConfigError, DataError

LANGUAGES: tuple[str, ...] = ("en", "zh")


def check_language(language: str, where: str = "ROUGE-L scoring") -> None:
    """ConfigError unless `language` is "en" or "zh"."""
    if language not in LANGUAGES:
        raise ConfigError(
            f"unknown scoring language {language!r}",
            where=where,
            fix="use 'en' or 'zh' (the split's language)",
        )


def check_batch(predictions: Sequence[str], references: Sequence[Sequence[str]], where: str) -> None:
    """ValueError for lists of different lengths, TypeError for a string given as a reference list,
    DataError for an item without references (nothing to score against is a data error, never a 0)."""
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} reference lists")
    if any(isinstance(refs, str) for refs in references):
        raise TypeError("references must be a sequence of strings, not one string")
    if not all(references):
        raise DataError(
            "a sample has no reference answer to score against",
            where=where,
            fix="check the split's `generated` lists; samples need at least one reference",
        )
