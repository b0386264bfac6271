"""`rolebench evaluate`: generate answers for RoleBench tasks with a model, score them, write a run folder.

A thin layer over `rolebench.evaluate` (rolebench/evaluation/api.py): the flags are made from the settings
records (`RunDefinition`, `Execution`, the judge's), a `--config` file is checked by the same records, and
the summary is printed from the results it returns.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rolebench.commands._arguments import Parser, Subparsers, add_config_argument, add_settings, settings_of
from rolebench.errors import ConfigError


def add_parser(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "evaluate",
        help="evaluate a model on RoleBench tasks (single-turn, and role-play sessions judged turn by turn)",
        description="Evaluate a model on RoleBench tasks: generate, score (ROUGE-L), optionally judge, and "
        "write the run folder DIR/results.json + DIR/samples/. A run folder holds one run: running again "
        "with more tasks adds them, with the same ones resumes (stored answers are reused), and other "
        "settings are refused (see --overwrite). Session tasks (rpbench, rolebench_sessions: see "
        "`rolebench tasks`) play several turns against --opponent, --judge playing the user and judging "
        "each turn; their turns are kept in DIR/sessions/ as they are played.",
    )
    add_arguments(p)
    p.set_defaults(run=run)


def add_arguments(p: argparse.ArgumentParser) -> None:
    from rolebench.evaluation.api import EvaluateJudge
    from rolebench.run.definition import Execution, RunDefinition

    add_settings(p, RunDefinition, Execution)
    add_settings(p, EvaluateJudge, section="judge")
    add_config_argument(p)
    p.set_defaults(config_check=check_config)


def check_config(data: Mapping[str, Any], where: str) -> dict[str, Any]:
    """A `--config` file's options (or a sweep file's), checked by the settings records themselves."""
    from rolebench.evaluation.api import split_options

    placeholders = {"model": "placeholder", "tasks": "placeholder"}
    split_options({**placeholders, **data}, where, flag_style=True)
    return dict(data)


def options_of(args: argparse.Namespace) -> dict[str, Any]:
    """`rolebench.evaluate`'s options from the parsed flags (the model and tasks included)."""
    from rolebench.evaluation.api import EVALUATE_OPTIONS

    return settings_of(args, *EVALUATE_OPTIONS)


def options_from_argv(argv: list[str]) -> dict[str, Any]:
    """The options `rolebench evaluate ARGV` would run (e.g. the job `rolebench demo` prints)."""
    parser = Parser(prog="rolebench evaluate")
    add_arguments(parser)
    return with_default_output(options_of(parser.parse_args(argv)))


def with_default_output(options: dict[str, Any]) -> dict[str, Any]:
    """The command line's run folder when none is given: runs/<model> (one folder per few-shot method)."""
    from rolebench.evaluation.api import default_run_folder

    if options.get("output") is None:
        folder = default_run_folder(str(options["model"]), options.get("elicitation"), options.get("shots"))
        options = {**options, "output": folder}
    return options


def run(args: argparse.Namespace) -> int:
    from rolebench.commands._outcome import exit_code, hidden_failure
    from rolebench.evaluation.api import evaluate, judgment_failures
    from rolebench.report.summary import summary_text
    from rolebench.run.folder import RunFolder

    for flag in ("model", "tasks"):
        if not getattr(args, flag, None):
            raise ConfigError(
                f"--{flag} is required",
                where="rolebench evaluate",
                fix=f"give --{flag} on the command line or `{flag}:` in the --config file",
            )
    from rolebench.evaluation.api import split_options

    options = with_default_output(options_of(args))
    definition, _, _ = split_options(
        options, "rolebench evaluate", flag_style=True
    )  # one line naming the flag
    definition.checked()
    model, tasks = options.pop("model"), options.pop("tasks")
    results = evaluate(model, tasks, **options)
    print(summary_text(results))
    failed = (
        judgment_failures(Path(options["output"]), results.config.judge) if options.get("judge") else None
    )
    if failed:
        print(f"\njudge {options['judge']}: {failed}")
    print(f"\nresults: {RunFolder(options['output']).results_path}")
    hidden = hidden_failure(results.config.judge, failed) if options.get("judge") else None
    if hidden:
        print(f"rolebench: {hidden}", file=sys.stderr)
        return 1
    return exit_code(results)  # 1 when samples, sessions or judgments failed
