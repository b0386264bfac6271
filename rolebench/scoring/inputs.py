"""What every scorer accepts: a known language, and one non-empty list of references per prediction.

Checked once here, by the protocols and by the batch scorers that can be called on their own; the
public `rouge_l` checks its arguments here too (`text_list`, `reference_lists`), so a caller's mistake
is one `ValueError` / `TypeError` naming the argument, never a crash deep in a tokenizer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set

from rolebench.errors import ConfigError, ConfigTypeError, DataError, kind_of

LANGUAGES: tuple[str, ...] = ("en", "zh")


def check_language(language: str, where: str = "ROUGE-L scoring") -> None:
    """ConfigError unless `language` is "en" or "zh" (ConfigTypeError when it is not a text at all)."""
    if not isinstance(language, str):
        raise ConfigTypeError(
            f"the scoring language is {kind_of(language)}, not a text",
            where=where,
            fix="use 'en' or 'zh' (the split's language)",
        )
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


def _items(value: object, name: str, where: str, what: str) -> list[object]:
    """`value` as a list, when it is an ordered collection (not a text, a mapping or a set)."""
    if isinstance(value, str | bytes | Mapping | Set) or not isinstance(value, Iterable):
        raise ConfigTypeError(f"{name} is {kind_of(value)}, not a list of {what}", where=where)
    return list(value)


def text_list(values: object, name: str, where: str) -> list[str]:
    """`values` checked to be a list of texts; ConfigTypeError naming the argument (or the item) otherwise."""
    items = _items(values, name, where, "texts")
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise ConfigTypeError(f"{name}[{index}] is {kind_of(item)}, not a text", where=where)
    return items  # type: ignore[return-value]  # every item checked above


def reference_lists(references: object, name: str, where: str) -> list[list[str]]:
    """One non-empty list of reference texts per item; ConfigTypeError / DataError naming the item."""
    lists = _items(references, name, where, "reference lists")
    checked = []
    for index, refs in enumerate(lists):
        item = f"{name}[{index}]"
        if isinstance(refs, str):
            raise ConfigTypeError(
                f"{item} is one text, not a list of reference texts",
                where=where,
                fix="give each prediction a list of its references, e.g. [['ref 1', 'ref 2'], ['ref']]",
            )
        texts = text_list(refs, item, where)
        if not texts:
            raise DataError(f"{item} is empty: no reference answer to score against", where=where)
        checked.append(texts)
    return checked
