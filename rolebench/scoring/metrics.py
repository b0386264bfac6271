"""Which metrics a sample gets and against which references: the rule shared by the runner and lm-eval.

- general splits: `cus` = ROUGE-L against the RoleGPT references (`generated`), `raw` = ROUGE-L against
  the instruction's original answer (None when that answer is unknown);
- role-specific splits: `spe` = ROUGE-L against the Context-Instruct answer(s).
A sample without an output (the model gave none) gets None for every metric: never a silent 0.
"""

from __future__ import annotations

from collections.abc import Sequence

from rolebench.data.splits import get_split
from rolebench.scoring.protocols import ScoringProtocol


def score_sample(
    protocol: ScoringProtocol,
    *,
    split: str,
    output: str | None,
    references: Sequence[str],
    raw_answer: str | None,
) -> dict[str, float | None]:
    """Per-sample metric values for one output (fractions in [0, 1], or None when not scorable)."""
    spec = get_split(split)
    if spec.kind == "role_specific":
        return {"spe": None if output is None else protocol.score(output, references, spec.language)}
    if output is None:
        return {"cus": None, "raw": None}
    raw = None if raw_answer is None else protocol.score(output, [raw_answer], spec.language)
    return {"cus": protocol.score(output, references, spec.language), "raw": raw}
