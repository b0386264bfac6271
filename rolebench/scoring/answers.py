"""What the answers look like, beside their scores: lengths, answers cut at the token limit, loops.

ROUGE-L recall rewards long answers, and a model that loops (says the same words over and over
until the token limit) collects recall without role-playing. These figures make both visible.

Looping: the *repeat share* of an answer is the fraction of its tokens (`cjk-char-v1`: words, and
single CJK characters) covered by an occurrence of a `LOOP_N`-token sequence that already occurred
earlier in the answer (overlapping occurrences count, so "la la la la la la" is covered). An answer
of at least `2 * LOOP_N` tokens loops when its repeat share reaches `LOOP_SHARE`. Natural answers
rarely repeat a 5-token sequence (RoleBench's own references: under 1% of them loop by this rule);
SmolLM2-135M's answers that run to a 512-token limit have shares of 0.5 to 1.
"""

from __future__ import annotations

from collections.abc import Sequence

from rolebench.results.schema import AnswerLengths, SampleRecord
from rolebench.scoring.rolellm import rolellm_text, sentences
from rolebench.scoring.stats import mean
from rolebench.scoring.tokenize import tokenize_cjk_char

LOOP_N = 5
LOOP_SHARE = 0.30


def repeat_share(text: str, n: int = LOOP_N) -> float:
    """The share of `text`'s tokens inside a repeat of an earlier `n`-token sequence (0.0 for short texts)."""
    tokens = tokenize_cjk_char(text)
    if len(tokens) < 2 * n:
        return 0.0
    seen: set[tuple[str, ...]] = set()
    covered = [False] * len(tokens)
    for i in range(len(tokens) - n + 1):
        gram = tuple(tokens[i : i + n])
        if gram in seen:
            covered[i : i + n] = [True] * n
        else:
            seen.add(gram)
    return sum(covered) / len(tokens)


def loops(text: str) -> bool:
    """Whether an answer loops (see the module docstring)."""
    return repeat_share(text) >= LOOP_SHARE


def words(text: str, language: str) -> int:
    """An answer's length as ROUGE-L (protocol `rolellm`) counts it: words, or characters for Chinese."""
    return sum(len(s) for s in sentences(rolellm_text(text, language)))


def answer_lengths(records: Sequence[SampleRecord], max_new_tokens: int | None) -> AnswerLengths:
    """Answer and reference lengths, the share of answers cut at the token limit, the share that loop."""
    answered = [r for r in records if r.output is not None]
    tokens = [
        float(r.usage["completion_tokens"]) for r in answered if r.usage and r.usage.get("completion_tokens")
    ]
    cut = sum(1 for r in answered if r.finish_reason == "length")
    looping = sum(1 for r in answered if loops(r.output or ""))
    return AnswerLengths(
        answer_tokens_mean=mean(tokens) if answered and len(tokens) == len(answered) else None,
        answer_words_mean=mean([float(words(r.output or "", r.language)) for r in answered]),
        reference_words_mean=mean(
            [float(words(r.references[0], r.language)) for r in answered if r.references]
        ),
        cut_at_limit=cut / len(answered) if answered else None,
        n_cut=cut,
        looping=looping / len(answered) if answered else None,
        n_looping=looping,
        max_new_tokens=max_new_tokens,
    )
