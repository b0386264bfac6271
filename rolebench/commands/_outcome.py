"""What a command says after a run, and its exit code: failed samples and judgments in one line."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from rolebench.results.schema import RunResults


def failure_detail(run_dir: Path, block: dict[str, Any] | None) -> str | None:
    """Why pairs of the judging `block` (a judge.json, as results.json's config shows it) got no verdict,
    with the first reason of each kind (None: every pair that could be judged was)."""
    from rolebench.judging.outcomes import read_failure_line
    from rolebench.judging.sets import set_of
    from rolebench.run.folder import RunFolder

    if not block:
        return None
    judgments = set_of(RunFolder(run_dir), block)
    failed = read_failure_line(judgments)
    return f"{failed}; see {judgments.folder}" if failed else None


def hidden_failure(block: dict[str, Any] | None, failed: str | None) -> str | None:
    """The line of a judge pass that left pairs without a verdict where verdicts of earlier passes stand in
    (so the judgments files show no failure: `failed`, from `failure_detail`, is None); None otherwise."""
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
