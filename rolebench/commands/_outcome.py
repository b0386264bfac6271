"""What a command says after a run, and its exit code: failed samples and judgments in one line."""

from __future__ import annotations

import sys
from typing import Any

from rolebench.results.schema import RunResults


def hidden_failure(block: dict[str, Any] | None, failed: str | None) -> str | None:
    """The line of a judge pass that left pairs without a verdict where verdicts of earlier passes stand in
    (so the judgments files show no failure: `failed`, from the API's `judgment_failures`, is None); None
    otherwise."""
    outcome = (block or {}).get("pass") or {}
    if failed or not outcome.get("no_verdict") or not outcome.get("failed"):
        return None
    given = outcome.get("verdicts") or 0
    what = "gave no verdict" if not given else f"gave {given} verdicts only"
    return (
        f"this judge pass {what}: {outcome.get('failed')}; the numbers shown keep {outcome.get('kept')} "
        "verdicts of earlier passes for those pairs"
    )


def exit_code(results: RunResults) -> int:
    """0, or 1 with one line on stderr when samples or judgments failed (the run resumes)."""
    from rolebench.report.summary import failures

    line = failures(results)
    if line is None:
        return 0
    print(f"rolebench: {line}", file=sys.stderr)
    return 1
