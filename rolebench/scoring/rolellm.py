"""The RoleLLM paper's ROUGE-L: pip `rouge` 1.0.1's summary-level ROUGE-L recall, reproduced exactly.

`Rouge(metrics=["rouge-l"]).get_scores(hyp, ref)[0]["rouge-l"]["r"]`, the max over an item's
references. What pip `rouge` does, quirks included, and so what this module does:
- sentences are the parts of `text.split(".")` that are not empty, each with its whitespace runs
  squeezed to single spaces; words are `sentence.split(" ")`. Only the ASCII "." splits (never
  "。"); the emptiness test is on the raw part, so a whitespace-only part (" " in "a. .b") is the
  sentence "" whose one word is the empty string: an ordinary word that counts in m and matches
  another "". Case-sensitive, no stemming, punctuation other than "." stays in the words.
- Chinese (`language="zh"`): both texts first become their non-space characters joined by single
  spaces, so every character is a word, and ".." in Chinese is ". ." = one "" sentence.
- m = the number of DISTINCT reference words (pip's n-gram collections are sets).
- for every (reference sentence x, hypothesis sentence y) pair, pip fills the LCS table and
  reconstructs ONE LCS by recursing back from (len(x), len(y)): equal words -> take the word, go
  diagonally; elif T[i-1][j] > T[i][j-1] -> up; else left. It keeps the SET of that LCS's words;
  llcs = the size of the union of those sets over all pairs (across reference sentences too);
  recall = llcs / m. Two LCSs can hold different words, so this tie rule is followed exactly.
- a hypothesis or reference without any sentence ("", ".", "...") makes pip raise ValueError: that
  pair scores 0.0 here. pip also overflows Python's recursion limit on long sentence pairs (about
  len(x) + len(y) > 990 words, easy with Chinese characters): the value here is what it computes
  with no limit (nothing here recurses).

The algorithm (same sets, no table):
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

Where the C accelerator `_union_lcs` is built (at install, with a C compiler), it runs the same
algorithm on the sentences this module splits, with word ids and 64-bit bit rows instead of Python
ints and sets (pruning by bound, not by the rapidfuzz LCS bound): the same floats, about 3x faster
(tests compare both paths with pip `rouge` item by item).

`workers` > 1 scores chunks of the batch in a process pool (fork); it did not pay where measured,
so the default is one process (`default_workers`).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from itertools import chain, compress

from rapidfuzz.distance import LCSseq

from rolebench.scoring.inputs import check_batch, check_language

try:  # the optional C accelerator, built at install where a C compiler is found
    from rolebench.scoring import _union_lcs
except ImportError:  # pragma: no cover - depends on the install
    _union_lcs = None  # type: ignore[assignment]

Sentence = list[str]
_POW: list[int] = [1]  # _POW[k] = 1 << k, grown on demand
# fork: a child starts in milliseconds; forkserver and spawn re-import numpy, rapidfuzz and the
# caller's main module in each child (1-2 s measured, and a script without a __main__ guard fails).
_START_METHOD = "fork" if "fork" in multiprocessing.get_all_start_methods() else None


def rolellm_text(text: str, language: str) -> str:
    """The text pip `rouge` was given: Chinese as its non-space characters joined by spaces."""
    if language == "zh":  # str.split() splits on exactly the characters for which isspace() is true
        return " ".join("".join(text.split()))
    return text


def sentences(text: str) -> list[Sentence]:
    """pip `rouge`'s sentences of a text, each a list of words: `" ".join(part.split()).split(" ")` for
    each non-empty part of `text.split(".")`, which is `part.split()`, or `[""]` for a blank part."""
    return [part.split() or [""] for part in text.split(".") if part]


def zh_sentences(text: str) -> list[Sentence]:
    """`sentences(rolellm_text(text, "zh"))` without building the spaced text.

    With c = the non-space characters and c.split(".") = [w_0, ..., w_K], the spaced text's parts
    are w_k's characters with a space on each side touching a ".": a non-empty w_k is the sentence
    of its characters, an empty w_k with 0 < k < K (". .") the sentence "", an empty w_0 or w_K none.
    """
    chars = "".join(text.split())
    if "." not in chars:
        return [list(chars)] if chars else []
    parts = chars.split(".")
    return [list(w) if w else [""] for k, w in enumerate(parts) if w or 0 < k < len(parts) - 1]


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


def _recall_item(hypothesis: str, references: Sequence[str], zh: bool) -> float:
    """The max over `references` of pip's recall of `hypothesis` (0.0 where pip raises ValueError)."""
    split = zh_sentences if zh else sentences
    hyp_sents = split(hypothesis)
    refs = [(sents, set(chain.from_iterable(sents))) for sents in map(split, references) if sents]
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


def rolellm_recall(hypothesis: str, reference: str, language: str = "en") -> float:
    """pip `rouge`'s summary-level ROUGE-L recall of a hypothesis against one reference (0.0 if it raises)."""
    return rolellm_recall_batch([hypothesis], [[reference]], language, workers=1)[0]


def accelerated() -> bool:
    """Whether the C accelerator `_union_lcs` is built (the Python path gives the same floats)."""
    return _union_lcs is not None


def _recall_chunk(args: tuple[Sequence[str], Sequence[Sequence[str]], bool]) -> list[float]:
    predictions, references, zh = args
    if _union_lcs is not None:
        split = zh_sentences if zh else sentences
        return _union_lcs.recalls(
            [split(p) for p in predictions], [[split(r) for r in refs] for refs in references]
        )
    return [_recall_item(p, refs, zh) for p, refs in zip(predictions, references, strict=True)]


def default_workers(n_items: int) -> int:
    """Processes `rolellm_recall_batch` uses when not told: always 1, whatever `n_items` and cores.

    Measured (benchmarks/bench_rouge.py --pool; 2 cores shared with other jobs, load average 3.5-5.9;
    wall time, one process and the pool alternated, 3-5 rounds): a pool of 2 forked processes ran at
    0.51-1.18x the speed of one process (medians 0.57-1.04x) on batches of 1,000 to 12,284 items,
    forkserver and spawn at 0.11-0.50x (each child re-imports numpy and rapidfuzz). A pool can pay
    only where a second core is idle and the batch takes seconds; callers who know that pass
    `workers` (from a single-threaded process: the pool forks).
    """
    del n_items  # the rule does not depend on it (yet): see the measurements above
    return 1


def rolellm_recall_batch(
    predictions: Sequence[str],
    references: Sequence[Sequence[str]],
    language: str,
    workers: int | None = None,
) -> list[float]:
    """The best recall over each prediction's references (predictions[i] against references[i]).

    `workers`: processes (None: `default_workers`); chunks of the batch go to a pool when > 1.
    Raises ConfigError for an unknown language, DataError for an item without references and
    TypeError for a string given as a reference list.
    """
    check_language(language, "ROUGE-L (rolellm protocol)")
    check_batch(predictions, references, "ROUGE-L (rolellm protocol)")
    zh = language == "zh"
    workers = default_workers(len(predictions)) if workers is None else workers
    if workers <= 1 or len(predictions) < 2 * workers:
        return _recall_chunk((predictions, references, zh))
    step = -(-len(predictions) // (4 * workers))
    chunks = [
        (predictions[i : i + step], references[i : i + step], zh) for i in range(0, len(predictions), step)
    ]
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(_START_METHOD)) as pool:
        return list(chain.from_iterable(pool.map(_recall_chunk, chunks)))
