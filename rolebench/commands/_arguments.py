"""Arguments several commands share: the data source, backend options (`--model-args`), the parser type,
and how every `--help` is laid out (a description, and each option's default)."""

from __future__ import annotations

import argparse
import difflib
from pathlib import Path
from typing import Any, TypeAlias

from rolebench.errors import ConfigError
from rolebench.storage.yaml_files import read_yaml

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


class HelpFormatter(argparse.HelpFormatter):
    """`--help` as users read it: a description written on several lines keeps its lines (one line is
    wrapped), and every option with a default says it, unless its help already does."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text.strip():
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "default" in text.lower() or not shows_default(action):
            return text
        return f"{text} (default: %(default)s)" if text else "default: %(default)s"


def shows_default(action: argparse.Action) -> bool:
    """Whether an option has a default worth printing (not None, off, empty or hidden)."""
    default = action.default
    if isinstance(action, argparse._StoreTrueAction | argparse._HelpAction | argparse._VersionAction):
        return False
    return default not in (None, "", argparse.SUPPRESS) and default != []


class Parser(argparse.ArgumentParser):
    """Every rolebench parser (subcommands and their actions too): the help layout of `HelpFormatter`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)


def add_data_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data-dir",
        help="local RoleBench folder in the Hub layout, a `rolebench data build` folder, or "
        "hf://ORG/NAME@VERSION (default: $ROLEBENCH_DATA, else the upstream Hub repo at a pinned revision)",
    )
    p.add_argument("--revision", help="Hub revision of ZenMoore/RoleBench (default: the pinned one)")


def parse_model_args(text: str) -> dict[str, Any]:
    """`key=value,key=value` into a dict (values kept as strings; adapters convert)."""
    options: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(
                f"bad model argument {item!r}", where="--model-args", fix="write key=value,key=value"
            )
        options[key.strip()] = value.strip()
    return options


def model_options(args: argparse.Namespace) -> dict[str, Any]:
    """Backend options from `--model-args`, with `--base-url` as `base_url`."""
    options = parse_model_args(args.model_args)
    if args.base_url:
        options["base_url"] = args.base_url
    return options


def add_config_argument(p: argparse.ArgumentParser) -> None:
    """`--config FILE`: a YAML file of the command's options, keyed by flag name (`max_new_tokens` or
    `max-new-tokens`); flags on the command line win."""
    p.add_argument(
        "--config",
        dest="config_file",
        type=Path,
        metavar="FILE",
        help="YAML file of options keyed by flag name (e.g. model, tasks, limit, max_new_tokens); "
        "flags given on the command line win",
    )
    p.set_defaults(config_parser=p)


def read_yaml_mapping(path: Path, what: str, shape: str) -> dict[str, Any]:
    """A YAML file that must hold a mapping (empty: {}); one ConfigError naming `what` otherwise."""
    data = read_yaml(path)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"a {what} is {shape}", where=str(path))
    return data


def config_defaults(path: Path, parser: argparse.ArgumentParser) -> dict[str, Any]:
    """The defaults a config file gives `parser`'s options (strings, so argparse converts and checks them)."""
    data = read_yaml_mapping(path, "config file", "a YAML mapping of option names to values")
    actions = {a.dest: a for a in parser._actions if a.dest not in ("help", "config_file", "config_parser")}
    defaults: dict[str, Any] = {}
    for key, value in data.items():
        dest = str(key).strip().lstrip("-").replace("-", "_")
        action = actions.get(dest)
        if action is None:
            close = difflib.get_close_matches(dest, list(actions), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            known = ", ".join(sorted(actions))
            raise ConfigError(f"unknown option {key!r}", where=str(path), fix=f"{hint}use one of: {known}")
        defaults[dest] = _flag_value(action, value, str(path))
    return defaults


def _flag_value(action: argparse.Action, value: Any, where: str) -> Any:
    if isinstance(action, argparse._StoreTrueAction | argparse._StoreFalseAction):
        if not isinstance(value, bool):
            raise ConfigError(f"option {action.dest} must be true or false, not {value!r}", where=where)
        return value
    if isinstance(action, argparse._AppendAction):
        items = value if isinstance(value, list) else [value]
        convert = action.type if callable(action.type) else str
        return [convert(str(item)) for item in items]
    if isinstance(value, dict):  # model_args: {dtype: bfloat16} -> "dtype=bfloat16"
        return ",".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, list):  # tasks: [a, b] -> "a,b"
        return ",".join(str(item) for item in value)
    if isinstance(value, bool) or value is None:
        raise ConfigError(
            f"option {action.dest} has no value the command line could give ({value!r})", where=where
        )
    return str(value)
