"""`rolebench judge`: judge (or re-judge) a run's saved generations against the RoleGPT baseline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rolebench.commands._arguments import Subparsers


def add_parser(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "judge",
        help="win rate against the RoleGPT baseline with an LLM judge (no model needed)",
        description="Judge DIR/samples/*.jsonl against the RoleGPT baseline answers (or, with --against, "
        "against another run's answers) with the RoleLLM ranking prompt (anonymised, both orders), write "
        "DIR/judgments/ and add the win rate to DIR/results.json. Judge completions are cached "
        "($ROLEBENCH_CACHE or the user cache dir).",
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
    p.add_argument("--judge-limit", type=int, metavar="N", help="judge a seeded sample of N pairs per task")
    p.add_argument(
        "--concurrency",
        type=int,
        default=8,
        metavar="C",
        help="judge requests in flight (API judges; default 8)",
    )
    p.add_argument("--base-url", metavar="URL", help="OpenAI-compatible server URL for an openai: judge")
    p.add_argument(
        "--price-table",
        type=Path,
        metavar="FILE",
        help="YAML/JSON: MODEL: {input: $/1M tokens, output: $/1M tokens}",
    )
    p.add_argument(
        "--reparse",
        action="store_true",
        help="re-apply the parser to stored judge completions (no new calls for parsable ones)",
    )
    p.add_argument(
        "--judge-config",
        default="rolellm_rank",
        metavar="NAME|FILE",
        help="packaged judge name or judge YAML file",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the --judge-limit sample")
    p.add_argument("--no-progress", action="store_true", help="hide progress bars")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from rolebench.commands._runs import open_run
    from rolebench.commands.evaluate import exit_code, judge_settings
    from rolebench.judge.outcomes import read_failure_line
    from rolebench.judge.run import JUDGMENTS_DIR, judge_run
    from rolebench.report.summary import summary_text
    from rolebench.results.io import read_results

    settings = judge_settings(args, args.base_url, reparse=args.reparse)
    with open_run(args.run_dir):
        if args.against is not None:
            from rolebench.judge.versus import judge_versus

            report = judge_versus(args.run_dir, args.against, args.judge, settings=settings)
        else:
            report = judge_run(args.run_dir, args.judge, settings=settings)
        results = read_results(args.run_dir)
    block = report["judge"]
    folder = Path(report.get("folder") or args.run_dir / JUDGMENTS_DIR)
    failed = read_failure_line(folder)
    if args.against is not None:
        any_judged = any(fields.get("judged") for fields in report["results"].values())
    else:
        any_judged = any(t.value("judged") for t in results.results.values())
    if failed and not any_judged:
        print(f"judge {block['spec']}: no win rate: {failed}; see {folder}")
        return versus_exit_code(report) if args.against is not None else exit_code(results)
    print(summary_text(results))
    if args.against is not None:
        print(f'\nagainst {report["key"]}: results[task]["versus"] in {args.run_dir / "results.json"}')
    cost = block.get("cost_usd")
    print(
        f"\njudge {block['spec']}: {block['this_run']['requests']} new requests, "
        f"{block['usage']['requests']} completions behind these numbers"
        + (f", ${cost:.4f}" if cost is not None else "")
        + (f"; {failed}" if failed else "")
    )
    if args.against is not None:
        return versus_exit_code(report)
    return exit_code(results)


def versus_exit_code(report: dict[str, Any]) -> int:
    """0, or 1 with one line on stderr when judgments against the other run failed (a re-run retries)."""
    failed = sum(
        (fields.get("judge_errors") or 0) + (fields.get("parse_failures") or 0)
        for fields in report["results"].values()
    )
    if not failed:
        return 0
    print(
        f"rolebench: {failed} judgments against {report['key']} failed (judge errors or unparsable "
        "verdicts; see judgments/versus/): run the same command again to retry them",
        file=sys.stderr,
    )
    return 1
