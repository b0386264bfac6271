"""The RoleLLM paper's ROUGE-L: pip `rouge` 1.0.1's summary-level ROUGE-L recall, reproduced exactly.

`Rouge(metrics=["rouge-l"]).get_scores(hyp, ref)[0]["rouge-l"]["r"]`, the max over an item's
references. What pip `rouge` does, and so what this module does:
- sentences are the parts of `text.split(".")` that are not empty, each with its whitespace runs
  squeezed to single spaces; words are `sentence.split(" ")` (so a part made only of spaces is one
  empty word); case-sensitive, no stemming. Chinese (`language="zh"`) is first turned into its
  non-space characters joined by single spaces.
- m and n are the numbers of DISTINCT words of the reference and of the hypothesis.
- for every (reference sentence, hypothesis sentence) pair, one LCS is reconstructed by pip's
  backtracking rule (from the end: equal words -> take them; else go up only if that keeps a longer
  LCS, otherwise left) and the SET of its words is taken; llcs is the size of the union of all
  those sets. recall = llcs / m. Which LCS is reconstructed matters: two LCSs can hold different
  words, so the rule is followed exactly.
- pip `rouge` raises on a hypothesis or reference without any sentence (e.g. "" or "..."): that
  pair scores 0.0 here. It also exceeds Python's recursion limit on long sentence pairs (about 1,000
  words together, easy with Chinese characters): the value here is what it computes with no limit.

Speed: each LCS row is one bit-parallel step over Python integers (Hyyrö), and the backtracking
takes O(1) integer operations per reference word: in row i from column j, the next stop is the
highest set bit at or below j of (matches of the word | increments of the row); a match means
"take it, go diagonally", an increment without a match forces "up".
"""

from __future__ import annotations

from collections.abc import Sequence

Sentence = list[str]


def rolellm_text(text: str, language: str) -> str:
    """The text pip `rouge` was given: Chinese as its non-space characters joined by spaces."""
    if language == "zh":
        return " ".join(ch for ch in text if not ch.isspace())
    return text


def sentences(text: str) -> list[Sentence]:
    """pip `rouge`'s sentences of a text, each a list of words."""
    return [" ".join(part.split()).split(" ") for part in text.split(".") if len(part) > 0]


def _masks(words: Sentence) -> dict[str, int]:
    masks: dict[str, int] = {}
    for position, word in enumerate(words):
        masks[word] = masks.get(word, 0) | (1 << position)
    return masks


def recon_lcs_words(
    reference: Sentence, hypothesis: Sentence, masks: dict[str, int] | None = None
) -> set[str]:
    """The words of the LCS that pip `rouge`'s `_recon_lcs(reference, hypothesis)` reconstructs."""
    masks = _masks(hypothesis) if masks is None else masks
    width = len(hypothesis)
    full = (1 << width) - 1
    rows = [full]
    row = full
    for word in reference:
        match = masks.get(word, 0)
        low = row & match
        row = ((row + low) | (row - low)) & full
        rows.append(row)
    found: set[str] = set()
    i, j = len(reference), width
    while i > 0 and j > 0:
        word = reference[i - 1]
        match = masks.get(word, 0)
        stops = (match | ~rows[i]) & ((1 << j) - 1)
        if not stops:
            break
        column = stops.bit_length()
        i -= 1
        if match >> (column - 1) & 1:
            found.add(word)
            j = column - 1
        else:
            j = column
    return found


def rolellm_recall(hypothesis: str, reference: str, language: str = "en") -> float:
    """pip `rouge`'s summary-level ROUGE-L recall of a hypothesis against one reference (0.0 if it raises)."""
    hyp = sentences(rolellm_text(hypothesis, language))
    ref = sentences(rolellm_text(reference, language))
    if not hyp or not ref:
        return 0.0
    hyp_words = {w for s in hyp for w in s}
    ref_words = {w for s in ref for w in s}
    common = hyp_words & ref_words
    union: set[str] = set()
    hyp_masks = [(s, _masks(s)) for s in hyp]
    for ref_sentence in ref:
        ref_set = set(ref_sentence)
        for hyp_sentence, masks in hyp_masks:
            shared = ref_set.intersection(masks)
            if shared and not shared <= union:
                union |= recon_lcs_words(ref_sentence, hyp_sentence, masks)
        if len(union) == len(common):
            break
    return len(union) / len(ref_words)


def rolellm_recall_batch(
    predictions: Sequence[str], references: Sequence[Sequence[str]], language: str
) -> list[float]:
    """The best recall over each prediction's references (predictions[i] against references[i])."""
    return [
        max(rolellm_recall(p, r, language) for r in refs)
        for p, refs in zip(predictions, references, strict=True)
    ]
