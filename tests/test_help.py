"""Every `--help` a user can ask for: a description, every option explained, and defaults that are true.

The walk covers every subcommand (and every action of `data`, `leaderboard`, `recipe`) of the real
parser, so a new option without help, a missing description or a default that changed in the code but
not in the text fails here.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator

import pytest

from rolebench.cli.main import build_parser, main
from rolebench.commands._arguments import shows_default
from rolebench.tasks.catalogue import catalogue

# "default 8", "default: 0.7", "(default 256)": a number the text claims as the default
_CLAIMED = re.compile(r"default:? (-?\d+(?:\.\d+)?)\b")


def parsers() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """(command line, parser) for `rolebench` and every subcommand under it."""
    todo = [("rolebench", build_parser())]
    while todo:
        name, parser = todo.pop(0)
        yield name, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo += [(f"{name} {sub}", p) for sub, p in action.choices.items()]


def expanded_help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    return parser._get_formatter()._expand_help(action) if action.help else ""


def shown(value: object) -> str:
    return str(value)


ALL = list(parsers())


def test_the_walk_reaches_every_command():
    names = {name for name, _ in ALL}
    assert {"rolebench evaluate", "rolebench tasks", "rolebench data push", "rolebench recipe rocit"} <= names
    assert {"rolebench leaderboard publish", "rolebench sweep", "rolebench demo"} <= names
    assert len(names) >= 20


@pytest.mark.parametrize(("name", "parser"), ALL, ids=[name for name, _ in ALL])
def test_every_command_has_a_description_and_every_option_its_help_and_true_default(name, parser):
    assert (parser.description or "").strip(), f"`{name} --help` has no description line"
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._VersionAction | argparse._SubParsersAction):
            continue
        if action.help == argparse.SUPPRESS:
            continue
        flag = "/".join(action.option_strings) or action.dest
        text = expanded_help(parser, action)
        assert text.strip(), f"`{name} --help`: {flag} is not explained"
        if shows_default(action):
            assert shown(action.default) in text, f"`{name} --help`: {flag} does not show {action.default!r}"
        for claimed in _CLAIMED.findall(text):
            assert action.default is not None and float(claimed) == float(action.default), (
                f"`{name} --help`: {flag} claims default {claimed}, the code's is {action.default!r}"
            )
        assert "see above" not in text, f"`{name} --help`: {flag} points at nothing"


def test_max_new_tokens_names_the_task_caps_that_apply():
    parser = dict(ALL)["rolebench evaluate"]
    action = next(a for a in parser._actions if "--max-new-tokens" in a.option_strings)
    text = expanded_help(parser, action)
    tasks, _ = catalogue(())
    caps = {spec.max_new_tokens for spec in tasks.values()}
    assert caps and all(f"{cap}" in text for cap in caps), text
    assert "512" not in text


def test_data_help_explains_dir_and_the_build_sources():
    commands = dict(ALL)
    push = commands["rolebench data push"].format_help()
    assert "rolebench data build" in push  # what DIR is
    build = commands["rolebench data build"].format_help()
    assert "hf://" in build and "hub[:REV]" in build and "data build" in build


def test_tasks_prints_readable_split_names(capsys):
    assert main(["tasks"]) == 0
    out = capsys.readouterr().out
    assert "SplitDef" not in out
    assert max(len(line) for line in out.splitlines()) < 120
    line = next(line for line in out.splitlines() if line.startswith("rolebench_zh_specific "))
    assert "zh_specific" in line.split()[1:] and "320" in line.split()
