"""The `rolebench` protocol's scorer: the best `rouge_score` ROUGE-L F over an item's references,
tokenizer `cjk-char-v1`, for a whole batch at once.

What it computes (the definition, also `rouge_score` 0.1.2's `score_multi` fmeasure without
stemmer on text without CJK characters): for each reference, LCS = the longest common subsequence
of the prediction's and the reference's tokens, P = LCS / len(prediction tokens), R = LCS /
len(reference tokens), F = 2 * P * R / (P + R), and F = 0 when LCS = 0 (so an empty or token-less
text scores 0, never NaN); the item's score is the max over its references.

How (the time of a per-item scorer goes into making one Python string per token, so here tokens
never become Python objects):

1. Each distinct text of the batch becomes a string with one character per token, equal characters
   exactly for equal tokens (`token_strings`). Where the C accelerator `_token_codes` is built (at
   install, with a C compiler), one C pass over each text tokenizes it and numbers its tokens in a
   hash table of their exact keys, in order of first appearance (so frequent tokens get small code
   points, which rapidfuzz's LCS looks up fastest). Otherwise numpy does it, steps a to c:
   a. all texts are tokenized in a few numpy passes (`cjk_char_keys`): every token becomes an exact
      128-bit key (its bytes, or its code point for a CJK character);
   b. keys become code points by hashing into tables, exactly: in each round every unplaced token
      writes its index into its slot of a fresh table; a token whose key equals the key of the token
      left in its slot takes that slot, the others go on to the next round. A slot thus ends up with
      one key, so equal tokens get equal code points and distinct tokens distinct ones (a hash
      collision can delay a key, never merge two); the few keys left after the rounds are numbered
      by sorting; the surrogate range is skipped;
   c. one UTF-32 decode turns each text into its string.
2. rapidfuzz's `process.cpdist` computes every (prediction, reference) LCS natively in one call.
3. numpy computes F with the same float operations in the same order as `lcs.f_rouge_score`, so
   the values are the same floats, and the max per item with `np.maximum.reduceat`.

Items are scored in blocks of about `_BLOCK_CHARS` characters (codes need only agree within a
(prediction, reference) pair), so memory stays bounded whatever the batch size.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from rapidfuzz import process
from rapidfuzz.distance import LCSseq

from rolebench.scoring.inputs import check_batch
from rolebench.scoring.tokenize import CJK_RANGES, KeyArray, cjk_char_keys

try:  # the optional C accelerator, built at install where a C compiler is found
    from rolebench.scoring import _token_codes
except ImportError:  # pragma: no cover - depends on the install
    _token_codes = None  # type: ignore[assignment]

IntArray = npt.NDArray[np.intp]
FloatArray = npt.NDArray[np.float64]

_HASH1 = np.uint64(0x9E37_79B9_7F4A_7C15)
_HASH2 = np.uint64(0xC2B2_AE3D_27D4_EB4F)
_TABLE_BITS = (19, 18, 17, 16, 15, 14, 13, 12)  # one hash round per table size, at most
_TABLE_SHIFT = 2  # the first table has about n_tokens / 4 slots (most tokens repeat)
_BLOCK_CHARS = 200_000  # characters of text per block of items (see `_blocks`)
_N_CODES = 0x110000 - 0x800  # code points outside the surrogate range


class _TooManyTokens(Exception):
    """More distinct tokens than code points: the caller splits the batch."""


def code_point_ids(k1: KeyArray, k2: KeyArray) -> npt.NDArray[np.uint32]:
    """One code point per token, equal exactly for equal keys (k1, k2) and only for them (step 2 above)."""
    ids = np.empty(len(k1), dtype=np.uint32)
    todo: IntArray | None = None  # None: every token (round 1 needs no gathers)
    base = 0
    start = len(k1).bit_length() - _TABLE_SHIFT  # tables sized to the tokens, not the largest batch
    for bits in [b for b in _TABLE_BITS if b <= start] or _TABLE_BITS[-1:]:
        a1, a2 = (k1, k2) if todo is None else (k1[todo], k2[todo])
        if not len(a1):
            break
        slots = (((a1 * _HASH1) ^ (a2 * _HASH2)) >> np.uint64(64 - bits)).astype(np.intp)
        owner = np.empty(1 << bits, dtype=np.int32)
        owner[slots] = np.arange(len(a1), dtype=np.int32)  # the last writer of each slot keeps it
        held = owner[slots]
        placed = (a1[held] == a1) & (a2[held] == a2)
        if todo is None:
            ids[placed] = slots[placed]
            todo = np.flatnonzero(~placed)
        else:
            ids[todo[placed]] = slots[placed] + base
            todo = todo[~placed]
        base += 1 << bits
    if todo is not None and len(todo):
        _, inverse = np.unique(np.stack((k1[todo], k2[todo]), axis=1), axis=0, return_inverse=True)
        if base + int(inverse.max()) >= _N_CODES:
            raise _TooManyTokens
        ids[todo] = inverse.reshape(-1) + base
    ids += (ids >= 0xD800) * np.uint32(0x800)  # skip the surrogates
    return ids


def accelerated() -> bool:
    """Whether the C accelerator of step 1 is built (the numpy path gives the same scores)."""
    return _token_codes is not None


def token_strings(texts: list[str]) -> list[str]:
    """One string per text, one character per cjk-char-v1 token, equal characters exactly for equal
    tokens across `texts` (step 1 above). Raises _TooManyTokens past the code points."""
    if _token_codes is not None:
        try:
            return _token_codes.token_strings(texts, CJK_RANGES)
        except OverflowError:
            raise _TooManyTokens from None
    keys = cjk_char_keys(texts)
    coded = code_point_ids(keys.k1, keys.k2).astype("<u4").tobytes().decode("utf-32-le")
    return [coded[a:b] for a, b in zip(keys.first.tolist(), keys.last.tolist(), strict=True)]


def f_rouge_score_array(lcs: FloatArray, n_pred: FloatArray, n_ref: FloatArray) -> FloatArray:
    """`lcs.f_rouge_score` element-wise, the same operations in the same order: 2PR/(P+R), 0 at lcs 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = lcs / n_pred
        recall = lcs / n_ref
        f = 2 * precision * recall / (precision + recall)
    f[lcs == 0] = 0.0
    return f


def _block(predictions: Sequence[str], references: Sequence[Sequence[str]]) -> list[float]:
    """`rolebench_f_batch` of one block of items (steps 1 to 3 above)."""
    index: dict[str, int] = {}  # each distinct text once
    setdefault = index.setdefault
    pred_ids = [setdefault(p, len(index)) for p in predictions]
    ref_ids = np.asarray([setdefault(r, len(index)) for refs in references for r in refs], dtype=np.intp)
    strings = token_strings(list(index))
    counts = np.fromiter(map(len, strings), dtype=np.float64, count=len(strings))
    n_refs = np.fromiter(map(len, references), dtype=np.intp, count=len(references))
    pair_pred = np.repeat(np.asarray(pred_ids, dtype=np.intp), n_refs)
    queries = [strings[i] for i in pair_pred.tolist()]
    choices = [strings[i] for i in ref_ids.tolist()]
    lcs = process.cpdist(queries, choices, scorer=LCSseq.similarity).astype(np.float64)
    f = f_rouge_score_array(lcs, counts[pair_pred], counts[ref_ids])
    best: list[float] = np.maximum.reduceat(f, np.cumsum(n_refs) - n_refs).tolist()
    return best


def rolebench_f_batch(predictions: Sequence[str], references: Sequence[Sequence[str]]) -> list[float]:
    """The best ROUGE-L F over each item's references (predictions[i] against references[i]), in [0, 1].

    Equal bit for bit to scoring each item with `tokenize_cjk_char` and `lcs.f_rouge_score` (see the
    module docstring). Raises DataError for an item without references, TypeError for a string given
    as a reference list.
    """
    check_batch(predictions, references, "ROUGE-L (rolebench protocol)")
    scores: list[float] = []
    for start, stop in _blocks(predictions, references):
        scores += _scored_block(predictions[start:stop], references[start:stop])
    return scores


def _blocks(predictions: Sequence[str], references: Sequence[Sequence[str]]) -> list[tuple[int, int]]:
    """(start, stop) of consecutive runs of items holding about `_BLOCK_CHARS` characters each (codes
    need only be equal within a (prediction, reference) pair, so blocks are scored apart)."""
    bounds, start, size = [], 0, 0
    for i, (prediction, refs) in enumerate(zip(predictions, references, strict=True)):
        size += len(prediction) + sum(map(len, refs))
        if size >= _BLOCK_CHARS:
            bounds.append((start, i + 1))
            start, size = i + 1, 0
    if start < len(predictions):
        bounds.append((start, len(predictions)))
    return bounds


def _scored_block(predictions: Sequence[str], references: Sequence[Sequence[str]]) -> list[float]:
    """`_block`, in halves while a block holds more distinct tokens than there are code points."""
    try:
        return _block(predictions, references)
    except _TooManyTokens:
        if len(predictions) == 1:
            raise ValueError("more distinct tokens than code points in one item") from None
        half = len(predictions) // 2
        return _scored_block(predictions[:half], references[:half]) + _scored_block(
            predictions[half:], references[half:]
        )
