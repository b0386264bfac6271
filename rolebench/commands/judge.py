"""`rolebench judge`: judge (or re-judge) a run's saved generations against the RoleGPT baseline, or against
another run's; a thin layer over `rolebench.judging` (rolebench/evaluation/api.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rolebench.commands._arguments import Subparsers, add_settings, settings_of


def add_parser(subparsers: Subparsers) -> None:
    from rolebench.judging.settings import JudgeSettings

    p = subparsers.add_parser(
        "judge",
        help="win rate against the RoleGPT baseline with an LLM judge, or a second judge on a run's "
        "sessions (no model needed)",
        description="Judge DIR/samples/*.jsonl against the RoleGPT baseline answers (or, with --against, "
        "against another run's answers) with the RoleLLM ranking prompt (anonymised, both orders), write "
        "DIR/judgments/ and add the win rate to DIR/results.json. Judge completions are cached "
        "($ROLEBENCH_CACHE or the user cache dir). A run's session tasks (DIR/sessions/) are judged again "
        "turn by turn by this judge (DIR/sessions/judges/NAME/), for its agreement with the judge that "
        "played them.",
    )
    p.add_argument("run_dir", type=Path, help="a run folder written by `rolebench evaluate`")
    p.add_argument(
        "--against",
        type=Path,
        metavar="OTHER_RUN",
        help="judge RUN's answers against another run's (e.g. another elicitation or model) on the items "
        "both hold, instead of against the RoleGPT baseline; the win rate is RUN's",
    )
    p.add_argument(
        "--judge",
        required=True,
        metavar="SPEC",
        help="judge model spec: openai:MODEL[@URL], hf:ID, llamacpp:PATH, ...",
    )
    add_settings(p, JudgeSettings, exclude=("cache_dir",))
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from rolebench.commands._outcome import exit_code, hidden_failure
    from rolebench.evaluation.api import judge, judgment_failures, unjudged_turns
    from rolebench.judging.settings import JudgeSettings
    from rolebench.report.summary import failures, summary_text
    from rolebench.run.folder import RunFolder

    options = settings_of(args, JudgeSettings)
    JudgeSettings.read(options, "rolebench judge", flag_style=True)  # one line naming the flag
    results = judge(args.run_dir, args.judge, args.against, **options)
    if args.against is None:
        block = results.config.judge
        name = None
    else:
        name, block = versus_entry(results, args.against)
    failed = judgment_failures(args.run_dir, block)
    fields = [
        (t.value("versus") or {}).get(name) or {} if name else t.model_dump()
        for t in results.results.values()
    ]
    if failed and not any(f.get("judged") for f in fields):
        print(f"judge {args.judge}: no win rate: {failed}")
    else:
        print(summary_text(results))
        if name is not None:
            print(f'\nagainst {name}: results[task]["versus"] in {RunFolder(args.run_dir).results_path}')
        if results.results:  # a run of session tasks only has no single-turn pass to account for
            print(
                f"\njudge {args.judge}: {spent_line(block or {})}"
                + (f"\njudge {args.judge}: {failed}" if failed else "")
            )
    missing = unjudged_turns(RunFolder(args.run_dir)) if args.against is None else 0
    if missing:
        print(
            f"rolebench: {missing} session turns have no verdict of the second judge yet (its calls failed): "
            "run the same command again to ask them",
            file=sys.stderr,
        )
        return 1
    hidden = hidden_failure(block, failed)
    if hidden:
        print(f"rolebench: {hidden}", file=sys.stderr)
        return 1
    if name is None:
        return exit_code(results)
    line = failures(results, versus=name)
    if line:
        print(f"rolebench: {line}", file=sys.stderr)
        return 1
    return 0


def spent_line(block: dict[str, Any]) -> str:
    """What this pass cost and which completions the numbers stand on (verdicts kept from earlier passes
    are theirs, not this pass's)."""
    cost = block.get("cost_usd")
    this_run = block.get("this_run") or {}
    completions = (block.get("usage") or {}).get("requests", 0)
    kept = (block.get("pass") or {}).get("kept") or 0
    behind = (
        f"{completions} completions behind this pass's verdicts, {kept} verdicts kept from earlier passes"
        if kept
        else f"{completions} completions behind these numbers"
    )
    return f"{this_run.get('requests', 0)} new requests, {behind}" + (
        f", ${cost:.4f}" if cost is not None else ""
    )


def versus_entry(results: Any, other: Path) -> tuple[str | None, dict[str, Any] | None]:
    """The name and judge.json block under which `other` was judged last (results.json's config.versus)."""
    where = str(other.resolve())
    found = [
        (name, block)
        for name, block in (results.config.versus or {}).items()
        if (block.get("against") or {}).get("run") == where
    ]
    if not found:
        return None, None
    return max(
        found, key=lambda item: (float(item[1].get("judged_unix") or 0), str(item[1].get("judged_at")))
    )
