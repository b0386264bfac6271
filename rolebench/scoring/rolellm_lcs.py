"""The union LCS of the `rolellm` protocol: the word sets pip `rouge` 1.0.1 reconstructs (what pip does is
told in `rolebench.scoring.rolellm`), without pip's table; the same sets, the same floats.

The algorithm:
- LCS rows bit-parallel in Python ints (Allison-Dix / Hyyrö): B[w] = the columns of word w in y,
  V_0 = all ones, U = V & B[x_i], V_i = (V + U) | (V - U); a 0 bit j-1 of V_i marks an
  "increment", T[i][j] = T[i][j-1] + 1.
- pip's walk is one step per ROW: without a match T[i][j] = max(T[i-1][j], T[i][j-1]), so "up" is
  taken exactly at an increment and "left" elsewhere. From column j, row i's stop is the highest
  set bit at or below j of B[x_i] | ~V_i: a match bit (tested first, as in pip) records x_i and goes
  diagonally, an increment bit goes up, no bit ends the walk at column 0.
- A run of rows without a match has the V of the row above it: the walk crosses it in one "snap"
  to the highest increment at or below j, and the row above the run then stops exactly there, so
  that row's stop mask is ~V alone. Only rows with a match are stored and walked.
- All hypothesis sentences share one integer, each followed by a guard bit kept at 0 (`& keep`), so
  one pass over a reference sentence gives its rows against every hypothesis sentence.
- Pruning that cannot change a float: skip reference sentences whose shared words are all in the
  union; walk only hypothesis sentences holding a "fresh" word (shared, not in the union yet) and
  stop a walk when no fresh column is left at or below it; stop a reference once the union holds
  every shared word; score references in decreasing order of the bound shared / m (the same float
  division as the recall, so recall <= bound as floats) and skip those not above the best so far;
  for one sentence each, the tighter bound LCS / m (rapidfuzz's LCS) skips too.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain, compress

from rapidfuzz.distance import LCSseq

Sentence = list[str]
_POW: list[int] = [1]  # _POW[k] = 1 << k, grown on demand


def _bit_masks(words: Sequence[str | None], relevant: set[str] | frozenset[str]) -> dict[str, int]:
    """For each word of `words` in `relevant`, the int with bit k set where words[k] is that word."""
    while len(_POW) < len(words):
        _POW.extend([p << len(_POW) for p in _POW])
    masks: dict[str, int] = {}
    get = masks.get
    keep = list(map(relevant.__contains__, words))
    for word, bit in zip(compress(words, keep), compress(_POW, keep), strict=False):  # _POW is longer
        masks[word] = get(word, 0) | bit  # type: ignore[index, arg-type]  # None is never relevant
    return masks


class _Hypothesis:
    """A hypothesis's sentences packed in one bit row: sentence k is bits [lo_k, hi_k), then a guard
    bit (word None, equal to no word: "" is a word) that `keep` clears after every row, so a carry
    never runs into the next sentence (V - U never borrows: U is a subset of V)."""

    __slots__ = ("words", "masks", "keep", "segments", "vocab")

    def __init__(self, sents: list[Sentence], relevant: set[str] | frozenset[str]) -> None:
        words: list[str | None] = []
        self.segments: list[tuple[int, int]] = []  # (1 << lo, the sentence's bits)
        for sentence in sents:
            lo = len(words)
            words += sentence
            self.segments.append((1 << lo, (1 << len(words)) - (1 << lo)))
            words.append(None)
        self.words = words
        self.masks = _bit_masks(words, relevant)  # only words some reference has can match
        self.keep = sum(bits for _, bits in self.segments)
        self.vocab = frozenset(self.masks)


def _stop_rows(x: Sentence, hyp: _Hypothesis) -> tuple[list[str], list[int]]:
    """The rows of x with a match, bottom-up: their words and stop masks (B | ~V, or ~V above a run
    of rows without a match, see the module docstring); one bit-parallel step per row."""
    get = hyp.masks.get
    keep = v = hyp.keep
    words: list[str] = []
    stops: list[int] = []
    snap = False
    for word in x:
        mask = get(word)
        if mask:
            u = v & mask
            v = ((v + u) | (v - u)) & keep
            not_v = ~v
            stops.append(mask | not_v)
            words.append(word)
            snap = True
        elif snap:  # the first row of a run without a match: the row above stops on ~V alone
            stops[-1] = not_v
            snap = False
    words.reverse()
    stops.reverse()
    return words, stops


def _reference_union(ref_sents: list[Sentence], hyp: _Hypothesis, target: int) -> int:
    """pip's llcs for one reference: the size of the union of the reconstructed LCS word sets (stops
    at `target`, every shared word). `fresh`: the columns of shared words not in the union yet."""
    union: set[str] = set()
    ys, masks, vocab = hyp.words, hyp.masks, hyp.vocab
    for x in ref_sents:
        new = set(x)
        new &= vocab
        new -= union
        if not new:
            continue
        fresh = sum(map(masks.__getitem__, new))  # the masks of distinct words are disjoint
        words, stops = _stop_rows(x, hyp)
        for lo, bits in hyp.segments:
            if not fresh & bits:
                continue
            below = bits  # the columns at or below the walk's column j, as bits
            for word, stop in zip(words, stops, strict=False):  # equal lengths; strict costs ~5%
                cand = stop & below
                if not cand:
                    break  # left to column 0
                b = cand.bit_length() - 1
                if ys[b] == word:  # a match: take it, go diagonally
                    if word in new:
                        union.add(word)
                        new.discard(word)
                        fresh ^= masks[word]
                    below = (1 << b) - lo
                    if not fresh & below:
                        break  # nothing new can be matched any more
                else:  # an increment: up, same column
                    below = (2 << b) - lo
            if len(union) == target:
                return target
    return len(union)


def recon_lcs_words(reference: Sentence, hypothesis: Sentence) -> set[str]:
    """The words of the LCS that pip `rouge`'s `_recon_lcs(reference, hypothesis)` reconstructs: the
    whole walk of one sentence pair, without pruning."""
    if not reference or not hypothesis:
        return set()
    hyp = _Hypothesis([hypothesis], set(reference))
    words, stops = _stop_rows(reference, hyp)
    below = hyp.keep
    found: set[str] = set()
    for word, stop in zip(words, stops, strict=True):
        cand = stop & below
        if not cand:
            break
        b = cand.bit_length() - 1
        if hyp.words[b] == word:
            found.add(word)
            below = (1 << b) - 1
        else:
            below = (2 << b) - 1
    return found


def recall_item(hyp_sents: list[Sentence], references: Sequence[list[Sentence]]) -> float:
    """The max over the references' sentences of pip's recall of the hypothesis's sentences (0.0 where
    pip raises ValueError: a text without any sentence)."""
    refs = [(sents, set(chain.from_iterable(sents))) for sents in references if sents]
    if not hyp_sents or not refs:
        return 0.0
    hyp = _Hypothesis(hyp_sents, set().union(*(vocab for _, vocab in refs)))
    plans = []
    for ref_sents, vocab in refs:
        shared = len(hyp.vocab & vocab)
        if shared:
            plans.append((shared / len(vocab), shared, len(vocab), ref_sents))
    plans.sort(key=lambda plan: plan[0], reverse=True)
    best = 0.0
    for bound, shared, m, ref_sents in plans:
        if bound <= best:
            break  # recall <= bound <= best here and for every later reference
        if best and len(hyp_sents) == 1 and len(ref_sents) == 1:
            lcs = LCSseq.similarity(ref_sents[0], hyp_sents[0])  # the union has at most lcs words
            if lcs < shared and lcs / m <= best:
                continue
        best = max(best, _reference_union(ref_sents, hyp, shared) / m)
    return best
