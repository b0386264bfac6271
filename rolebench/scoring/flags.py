"""Flags: short names that travel with a number when the number alone would mislead.

ROUGE-L recall (the paper's protocol, `rolellm`) rewards long answers: a model that rambles or loops
until the token limit collects recall without role-playing. SmolLM2-135M, whose Chinese answers loop
85% of the time at about four times the references' length, scores three quarters of RoleGPT's zh
CUS that way. Every result carries these flags, and every place that shows a number shows them:

- `length-inflated`: the answers are much longer than the references: their mean length (in the
  protocol's own tokens: words, or characters for Chinese) is over `LENGTH_RATIO` times the
  references' mean, or over `CUT_SHARE` of them were cut at the token limit (they would have gone on).
- `looping`: over `LOOPING_SHARE` of the answers loop (`rolebench.scoring.answers.loops`).
- `below-floor`: on some metric the score is at or below a null baseline's on the same items
  (`rolebench.scoring.floors`): the question itself, or the role's description, as the answer.

The released RoleGPT answers carry none of them (answers 1.0-1.3x the references, none cut, under 1%
looping). The same length rule guards the GRPO recipe against a policy that learns to ramble.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

LENGTH_INFLATED = "length-inflated"
LOOPING = "looping"
BELOW_FLOOR = "below-floor"

LENGTH_RATIO = 2.0  # answers over twice the references' length (protocol tokens)
CUT_SHARE = 0.25  # or over a quarter of them cut at the token limit
LOOPING_SHARE = 0.10  # over a tenth of the answers loop

MEANINGS = {
    LENGTH_INFLATED: (
        f"answers over {LENGTH_RATIO:g}x the references' length, or over {CUT_SHARE:.0%} cut at the "
        "token limit: recall (the paper's metric) rewards length, read the F-measure"
    ),
    LOOPING: f"over {LOOPING_SHARE:.0%} of the answers repeat themselves (loop)",
    BELOW_FLOOR: "at or below a null baseline (the question or the role description as the answer)",
}
ORDER = (LENGTH_INFLATED, LOOPING, BELOW_FLOOR)


def length_inflated(
    answer_mean: float | None, reference_mean: float | None, cut_share: float | None = None
) -> bool:
    """The `length-inflated` rule: mean answer length over `LENGTH_RATIO` x the references', or more than
    `CUT_SHARE` of the answers cut at the token limit. Unknown inputs never raise the flag."""
    if cut_share is not None and cut_share > CUT_SHARE:
        return True
    return bool(answer_mean is not None and reference_mean and answer_mean > LENGTH_RATIO * reference_mean)


def answer_flags(lengths: Mapping[str, Any] | None) -> list[str]:
    """The length and looping flags of an `AnswerLengths` block (as a mapping)."""
    if not lengths:
        return []
    found = []
    if length_inflated(
        lengths.get("answer_words_mean"), lengths.get("reference_words_mean"), lengths.get("cut_at_limit")
    ):
        found.append(LENGTH_INFLATED)
    looping = lengths.get("looping")
    if looping is not None and looping > LOOPING_SHARE:
        found.append(LOOPING)
    return found


def sorted_flags(flags: Sequence[str]) -> list[str]:
    """Flags without repeats, in the order of `ORDER` (unknown names last, as given)."""
    unique = list(dict.fromkeys(flags))
    return sorted(unique, key=lambda f: ORDER.index(f) if f in ORDER else len(ORDER))


def describe(flag: str) -> str:
    """`flag: meaning`, one line."""
    return f"{flag}: {MEANINGS.get(flag, 'see the documentation')}"
