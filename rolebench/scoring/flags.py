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
  (`rolebench.scoring.floors`): the question itself, the role's description, or the train file's
  answer to the same instruction, as the answer.
- `verbatim-references`: the answers reproduce the test references far more often than RoleGPT's
  released answers do: over `VERBATIM_SHARE` of them copy a reference, and over `VERBATIM_RATIO`
  times the share of RoleGPT's answers to the same items (where the items have them). An answer
  copies a reference when it shares a run of 13 tokens with it (lm-eval's decontamination n; words,
  each Chinese character one token), or holds the whole of a short one (4 to 12 tokens), not counting
  runs the question holds (`rolebench.scoring.copying`). A model trained on the test split answers
  this way; one that answers with the first reference copies 91-100% on every released split. The
  released RoleGPT answers copy at most 12% (Chinese general, where 72 items list RoleGPT's answer
  among their references), the train floor 7% there, the question and description floors under 1%.
  Both shares are recorded per task (`verbatim` in results.json).

The released RoleGPT answers carry none of them (answers 1.0-1.3x the references, none cut, under 1%
looping, at most 12% copying). The same length rule guards the GRPO recipe against a policy that
learns to ramble. The floors carry no flag: they are what the flags hold models against.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from rolebench.results.schema import SampleRecord, Verbatim
from rolebench.scoring.copying import SPAN, copying
from rolebench.scoring.metrics import AVG, METRIC_KEYS
from rolebench.scoring.remembered import items_digest, remembered, remembered_key, texts_digest

LENGTH_INFLATED = "length-inflated"
LOOPING = "looping"
BELOW_FLOOR = "below-floor"
VERBATIM_REFERENCES = "verbatim-references"

LENGTH_RATIO = 2.0  # answers over twice the references' length (protocol tokens)
CUT_SHARE = 0.25  # or over a quarter of them cut at the token limit
LOOPING_SHARE = 0.10  # over a tenth of the answers loop
VERBATIM_SHARE = 0.5  # over half of the answers copy a reference (`rolebench.scoring.copying`)
VERBATIM_RATIO = 2.0  # and over twice as many as RoleGPT's released answers to the same items

MEANINGS = {
    LENGTH_INFLATED: (
        f"answers over {LENGTH_RATIO:g}x the references' length, or over {CUT_SHARE:.0%} cut at the "
        "token limit: recall (the paper's metric) rewards length, read the F-measure"
    ),
    LOOPING: f"over {LOOPING_SHARE:.0%} of the answers repeat themselves (loop)",
    BELOW_FLOOR: "at or below a null baseline (the question, the role description or the train file's "
    "answer to the same instruction, as the answer)",
    VERBATIM_REFERENCES: f"over {VERBATIM_SHARE:.0%} of the answers copy a test reference ({SPAN} "
    f"tokens in a row, or a whole short one), and over {VERBATIM_RATIO:g}x as many as RoleGPT's answers "
    "to the same items: a model that saw the test split",
}
ORDER = (LENGTH_INFLATED, LOOPING, BELOW_FLOOR, VERBATIM_REFERENCES)


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


def verbatim(records: Sequence[SampleRecord], items: str | None = None) -> Verbatim:
    """How many of the answers copy a reference (`rolebench.scoring.copying`), of those given, and how
    many of the RoleGPT answers to the items the run answered do, beside the run's own share on those
    items (`joined_share`: the flag compares like with like): one pass for both, computed once for the
    same answers and items (`rolebench.scoring.remembered`; `items`: the records' `items_digest`, when
    the caller has it)."""
    rows = [r for r in records if r.references]
    sets = [[r.output for r in rows], [r.baseline for r in rows]]
    questions = [r.question for r in rows]
    key = remembered_key("copying", items or items_digest(records), texts_digest([r.output for r in records]))
    with remembered() as memory:
        known = memory.get_many([key]).get(key)
        try:
            return Verbatim.model_validate(known)
        except ValidationError:  # none remembered (None), or not one: computed again
            pass
        found = copying(sets, [r.references for r in rows], questions) if rows else [[], []]
        ours = [c for c, answer in zip(found[0], sets[0], strict=True) if answer is not None]
        # like with like: RoleGPT's answers to the items this run answered, and the run's on those same items
        both = [i for i, (a, b) in enumerate(zip(sets[0], sets[1], strict=True)) if a is not None and b]
        theirs = [found[1][i] for i in both]
        joined = [found[0][i] for i in both]
        measured = Verbatim(
            share=sum(ours) / len(ours) if ours else None,
            n_copied=sum(ours),
            n=len(ours),
            rolegpt_share=sum(theirs) / len(theirs) if theirs else None,
            rolegpt_n=len(theirs),
            joined_share=sum(joined) / len(joined) if joined else None,
        )
        memory.put(key, measured.model_dump())
    return measured


def verbatim_flags(measured: Mapping[str, Any] | None) -> list[str]:
    """`verbatim-references` when a task's measured share (`verbatim`) is over `VERBATIM_SHARE` and, on the
    items the run and RoleGPT both answered, over `VERBATIM_RATIO` times RoleGPT's share (when the items
    have RoleGPT answers: a run answering some items is held against RoleGPT on those items only)."""
    measured = measured or {}
    share, rolegpt = measured.get("share"), measured.get("rolegpt_share")
    if share is None or share <= VERBATIM_SHARE:
        return []
    if rolegpt is None:
        return [VERBATIM_REFERENCES]
    # the run's share on the items RoleGPT answered too (a record without it: its share over all answers)
    joined = measured.get("joined_share", share)
    return [VERBATIM_REFERENCES] if joined is not None and joined > VERBATIM_RATIO * rolegpt else []


def below_floor(values: Mapping[str, Any], floors: Mapping[str, Any] | None, protocol: str) -> list[str]:
    """The metrics (of CUS, RAW, SPE, avg) on which `values` is at or below a floor under `protocol`."""
    found = []
    for metric in (*METRIC_KEYS, AVG):
        value = values.get(metric)
        if value is None:
            continue
        heights = [((block or {}).get(protocol) or {}).get(metric) for block in (floors or {}).values()]
        if any(h is not None and value <= h for h in heights):
            found.append(metric)
    return found


def sorted_flags(flags: Sequence[str]) -> list[str]:
    """Flags without repeats, in the order of `ORDER` (unknown names last, as given)."""
    unique = list(dict.fromkeys(flags))
    return sorted(unique, key=lambda f: ORDER.index(f) if f in ORDER else len(ORDER))


def describe(flag: str) -> str:
    """`flag: meaning`, one line."""
    return f"{flag}: {MEANINGS.get(flag, 'see the documentation')}"
