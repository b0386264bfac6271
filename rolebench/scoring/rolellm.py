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

The algorithm that reconstructs those sets without the table is `rolebench.scoring.rolellm_lcs`.

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
from itertools import chain

from rolebench.scoring.inputs import check_batch, check_language
from rolebench.scoring.rolellm_lcs import Sentence, recall_item

try:  # the optional C accelerator, built at install where a C compiler is found
    from rolebench.scoring import _union_lcs
except ImportError:  # pragma: no cover - depends on the install
    _union_lcs = None  # type: ignore[assignment]

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


def rolellm_recall(hypothesis: str, reference: str, language: str = "en") -> float:
    """pip `rouge`'s summary-level ROUGE-L recall of a hypothesis against one reference (0.0 if it raises)."""
    return rolellm_recall_batch([hypothesis], [[reference]], language, workers=1)[0]


def accelerated() -> bool:
    """Whether the C accelerator `_union_lcs` is built (the Python path gives the same floats)."""
    return _union_lcs is not None


def _recall_chunk(args: tuple[Sequence[str], Sequence[Sequence[str]], bool]) -> list[float]:
    predictions, references, zh = args
    split = zh_sentences if zh else sentences
    hypotheses = [split(p) for p in predictions]
    refs = [[split(r) for r in item] for item in references]
    if _union_lcs is not None:
        return _union_lcs.recalls(hypotheses, refs)
    return [recall_item(h, r) for h, r in zip(hypotheses, refs, strict=True)]


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
