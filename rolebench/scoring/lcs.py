"""The longest common subsequence of token sequences, in compiled code, and the F-measures built on it.

The LCS runs in `rapidfuzz.distance.LCSseq` (bit-parallel, C++): the tokens of one prediction are
mapped to code points, one per distinct token, so the LCS of the two strings is the LCS of the
token sequences. Reference tokens absent from the prediction are dropped: they cannot be part of a
common subsequence.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import count, repeat

from rapidfuzz.distance import LCSseq

Tokens = Sequence[str]

_MAX_CODE_POINT = 0x10FFFF
_CODE_CHARS = tuple(map(chr, range(4096)))  # code points for the tokens of predictions up to 4096 tokens


def lcs_lengths(prediction: Tokens, references: Sequence[Tokens]) -> list[int]:
    """Length of the longest common subsequence of `prediction` with each reference."""
    if not prediction:
        return [0] * len(references)
    if len(prediction) <= len(_CODE_CHARS):
        chars = dict(zip(prediction, _CODE_CHARS, strict=False))
    else:
        distinct = dict.fromkeys(prediction)
        if len(distinct) > _MAX_CODE_POINT:  # more distinct tokens than code points: integer sequences
            ids = dict(zip(distinct, count(), strict=False))
            pred_ids = [ids[t] for t in prediction]
            return [int(LCSseq.similarity(pred_ids, [ids[t] for t in ref if t in ids])) for ref in references]
        chars = dict(zip(distinct, map(chr, count()), strict=False))
    get = chars.get
    pred = "".join(map(chars.__getitem__, prediction))
    return [int(LCSseq.similarity(pred, "".join(map(get, ref, repeat(""))))) for ref in references]


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
