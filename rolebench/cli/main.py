"""The `rolebench` command line: each subcommand is a module in `rolebench/commands/`.

A command module defines `add_parser(subparsers)` (registering its parser with
`set_defaults(run=...)`) and a `run(args) -> int`. Modules are found by listing the package, so a
new command is one new file. User mistakes (`RoleBenchError`) print one line and exit with 2.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import pkgutil
import sys
from collections.abc import Sequence

from rolebench import commands
from rolebench.cli.failures import report
from rolebench.commands._arguments import Parser, config_defaults
from rolebench.errors import command_line


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="rolebench",
        description="RoleBench (RoleLLM) harness: evaluate, score, judge, leaderboards, data, recipes.",
    )
    parser.add_argument("--version", action="version", version=f"rolebench {_version()}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=Parser)
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{commands.__name__}.{info.name}").add_parser(subparsers)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rolebench")
    except PackageNotFoundError:
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    try:
        args = with_config_file(parser, args, argv)
        with command_line():
            return int(args.run(args) or 0)
    except BrokenPipeError:  # e.g. `rolebench tasks | head`: the reader left; say nothing more
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps Python's exit flush from failing again
        return 0
    except KeyboardInterrupt:
        print(
            "rolebench: interrupted; everything generated so far is stored, run again to resume",
            file=sys.stderr,
        )
        return 130
    except Exception as exc:  # every failure is one line and a non-zero exit (see rolebench.cli.failures)
        return report(exc, verbose=args.verbose)


def with_config_file(
    parser: argparse.ArgumentParser, args: argparse.Namespace, argv: Sequence[str] | None
) -> argparse.Namespace:
    """With `--config FILE`: the file's keys become the command's defaults, and the command line is parsed
    again, so flags given on it win (as lm-eval's `--config` does)."""
    path = getattr(args, "config_file", None)
    if path is None:
        return args
    command_parser: argparse.ArgumentParser = args.config_parser
    command_parser.set_defaults(**config_defaults(path, command_parser))
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(main())
