"""Answers that copy a test reference: the measure behind the `verbatim-references` flag.

An answer copies a reference when the two share a run of `SPAN` (13) tokens in a row (lm-eval's
decontamination n), or when the answer holds the whole of a reference of `MIN_TOKENS` (4) to 12
tokens; a run the question itself holds does not count (an answer may restate the question, and
references quote it). Tokens are `cjk-char-v1`'s (`rolebench.scoring.tokenize`): words, and each
Chinese character one token, as the F-measure protocol counts them.

Every answer of a task is measured at once: the texts are tokenized as the F-measure protocol does it
(`rolebench.scoring.f_measure.token_strings`: one code per token, equal exactly for equal tokens, by
its C accelerator where built), and each run of n tokens gets a polynomial hash modulo 2^64,
h = sum id[t] * B^(end - t), from prefix sums of id[t] * B^-t (B odd, so invertible modulo 2^64):
a handful of numpy operations per run length, whatever the length. Runs are then compared as
(item, hash) keys by sorted membership. Two different runs share a hash with a probability of
about 2^-64 per pair compared: a copy is never missed, and a false one is negligible.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from rolebench.scoring.f_measure import _TooManyTokens, token_strings
from rolebench.scoring.tokenize import cjk_char_keys

SPAN = 13  # a run of 13 tokens shared with a reference
MIN_TOKENS = 4  # or a whole reference of 4-12 tokens (a shorter one is never counted)

U64 = npt.NDArray[np.uint64]
Ints = npt.NDArray[np.intp]
_BASE = 0x9E3779B97F4A7C15  # odd
_BASE_INVERSE = pow(_BASE, -1, 2**64)
_ITEM = np.uint64(0xD6E8FEB86659FD93)  # odd: item tags are distinct


def _token_ids(texts: list[str]) -> tuple[U64, Ints, Ints]:
    """One id per cjk-char-v1 token of every text (equal exactly for equal tokens) and each text's
    first and last token: the F-measure's token strings (`token_strings`, its C accelerator where
    built), or, past their code points, 64-bit mixes of the tokens' exact keys."""
    try:
        strings = token_strings(texts)
    except _TooManyTokens:
        keys = cjk_char_keys(texts)
        with np.errstate(over="ignore"):
            ids = keys.k1 * np.uint64(0xFF51AFD7ED558CCD) ^ keys.k2 * np.uint64(0xC4CEB9FE1A85EC53)
        return ids, np.asarray(keys.first, dtype=np.intp), np.asarray(keys.last, dtype=np.intp)
    codes = np.frombuffer("".join(strings).encode("utf-32-le", "surrogatepass"), dtype="<u4")
    last = np.cumsum(np.fromiter(map(len, strings), dtype=np.intp, count=len(strings)))
    first = last - np.fromiter(map(len, strings), dtype=np.intp, count=len(strings))
    return codes.astype(np.uint64), first, last


class _Runs:
    """Hashes of the runs of n tokens of many texts, for any n, from one prefix-sum pass."""

    def __init__(self, texts: list[str]) -> None:
        ids, self.first, self.last = _token_ids(texts)
        count = len(ids)
        powers = np.full(count + 1, _BASE, dtype=np.uint64)
        powers[0] = 1
        inverse = np.full(count + 1, _BASE_INVERSE, dtype=np.uint64)
        inverse[0] = 1
        with np.errstate(over="ignore"):
            self.powers = np.cumprod(powers, dtype=np.uint64)  # B^t
            weighted = (ids + np.uint64(1)) * np.cumprod(inverse, dtype=np.uint64)[:count]  # id B^-t
            self.prefix = np.concatenate(([np.uint64(0)], np.cumsum(weighted, dtype=np.uint64)))

    def lengths(self) -> Ints:
        return np.asarray(self.last - self.first, dtype=np.intp)

    def hashes(self, texts: Ints, n: int) -> tuple[U64, Ints]:
        """(hash, text) of every run of `n` tokens of `texts`."""
        first, last = self.first[texts], self.last[texts]
        counts = np.clip(last - first - n + 1, 0, None)
        total = int(counts.sum())
        offsets = np.repeat(np.cumsum(counts) - counts, counts)
        starts = np.arange(total, dtype=np.intp) - offsets + np.repeat(first, counts)
        ends = starts + n
        with np.errstate(over="ignore"):
            values = (self.prefix[ends] - self.prefix[starts]) * self.powers[ends - 1]
        return values, np.repeat(texts, counts)


def _tagged(values: U64, items: Ints) -> U64:
    with np.errstate(over="ignore"):
        return values ^ (items.astype(np.uint64) + np.uint64(1)) * _ITEM


def _member(values: U64, pool: U64) -> npt.NDArray[np.bool_]:
    """`np.isin(values, pool)`, several times faster here: a bitmap of the pool's low bits (8 bits or
    more per pool value) lets through the few values that may be in it, and only those are looked up
    in the sorted pool."""
    found = np.zeros(len(values), dtype=bool)
    if not len(pool) or not len(values):
        return found
    mask = np.uint64((1 << (8 * len(pool)).bit_length()) - 1)
    bitmap = np.zeros(int(mask) + 1, dtype=bool)
    bitmap[pool & mask] = True
    maybe = np.flatnonzero(bitmap[values & mask])
    if len(maybe):
        pool = np.sort(pool)
        at = np.minimum(np.searchsorted(pool, values[maybe]), len(pool) - 1)
        found[maybe] = pool[at] == values[maybe]
    return found


def copies_references(
    answers: Sequence[str | None], references: Sequence[Sequence[str]], questions: Sequence[str]
) -> list[bool]:
    """Whether each answer copies one of its references (see the module docstring); None: no answer."""
    return copying([answers], references, questions)[0]


def copying(
    answer_sets: Sequence[Sequence[str | None]], references: Sequence[Sequence[str]], questions: Sequence[str]
) -> list[list[bool]]:
    """`copies_references` for several sets of answers to the same items (a run's and RoleGPT's): the
    references and questions are tokenized once."""
    n, sets = len(questions), len(answer_sets)
    if not n or not sets:
        return [[] for _ in answer_sets]
    texts = [a or "" for answers in answer_sets for a in answers] + list(questions)
    texts += [r for refs in references for r in refs]
    runs = _Runs(texts)
    items = np.arange(n, dtype=np.intp)
    ref_owner = np.repeat(items, [len(refs) for refs in references])
    refs = np.arange(len(texts) - len(ref_owner), len(texts), dtype=np.intp)
    sizes = runs.lengths()
    copied = np.zeros((sets, n), dtype=bool)
    for k in (SPAN, *range(MIN_TOKENS, SPAN)):
        chosen = sizes[refs] >= SPAN if k == SPAN else sizes[refs] == k
        if not chosen.any():
            continue
        ref_values, ref_of = runs.hashes(refs[chosen], k)
        pool = _tagged(ref_values, ref_owner[ref_of - refs[0]])
        with_ref = np.flatnonzero(np.bincount(ref_owner[chosen], minlength=n))
        question_values, question_of = runs.hashes(with_ref + sets * n, k)
        said = _tagged(question_values, question_of - sets * n)
        for j in range(sets):
            answer_values, answer_of = runs.hashes(with_ref + j * n, k)
            found = _tagged(answer_values, answer_of - j * n)
            hit = np.flatnonzero(_member(found, pool))
            hit = hit[~_member(found[hit], said)]  # runs the question holds do not count
            copied[j, answer_of[hit] - j * n] = True
    return [[bool(c) for c in row] for row in copied]
