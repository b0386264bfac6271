"""Arguments several commands share: flags made from the settings records (`add_settings`), config files,
the parser type, and how every `--help` is laid out (a description, and each option's default)."""

from __future__ import annotations

import argparse
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, TypeAlias, Union, get_args, get_origin

from pydantic import BaseModel

from rolebench.errors import ConfigError
from rolebench.settings_model import GROUP, SPLIT_LIST
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
    if isinstance(
        action,
        argparse._StoreTrueAction
        | argparse._StoreFalseAction
        | argparse._HelpAction
        | argparse._VersionAction,
    ):
        return False
    return default not in (None, "", argparse.SUPPRESS) and default != []


class Parser(argparse.ArgumentParser):
    """Every rolebench parser (subcommands and their actions too): the help layout of `HelpFormatter`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)


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
    data = read_yaml(path, what)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"a {what} is {shape}", where=str(path))
    return data


def config_defaults(path: Path, parser: argparse.ArgumentParser) -> dict[str, Any]:
    """The defaults a config file gives `parser`'s options: its keys are the options' names (`max_new_tokens`
    or `max-new-tokens`), its values typed (YAML), checked by the command's own settings records (the
    `config_check` its parser carries) before anything runs; flags on the command line win."""
    data = read_yaml_mapping(path, "config file", "a YAML mapping of option names to values")
    named = {str(key).strip().lstrip("-").replace("-", "_"): value for key, value in data.items()}
    check = parser.get_default("config_check")
    return dict(check(named, str(path))) if check is not None else named


def _base_type(annotation: Any) -> Any:
    """The type a flag converts to (`int` of `int | None`, a Literal's values, ...)."""
    if get_origin(annotation) is Literal:
        return annotation
    if get_origin(annotation) is Annotated:
        return _base_type(get_args(annotation)[0])
    args = [a for a in get_args(annotation) if a is not type(None)]
    if args and get_origin(annotation) in (Union, UnionType):
        return _base_type(args[0])
    return annotation


def add_settings(
    p: argparse.ArgumentParser,
    *models: type[BaseModel],
    exclude: tuple[str, ...] = (),
    section: str | None = None,
) -> None:
    """One flag per field of each settings record (`--max-new-tokens` for `max_new_tokens`), with its
    help text, section (`section`: one for all), default and type from the record: the record is the one
    list of the settings."""
    sections: dict[str, Any] = {"": p}
    for model in models:
        for name, field in model.model_fields.items():
            if name in exclude:
                continue
            extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
            group = str(extra.get(GROUP) or "") if section is None else section
            target = sections.get(group) or sections.setdefault(group, p.add_argument_group(group))
            flag = "--" + name.replace("_", "-")
            default = None if field.is_required() else field.default
            text = field.description or ""
            kind = _base_type(field.annotation)
            if kind is bool:
                if default:
                    target.add_argument(
                        f"--no-{name.replace('_', '-')}",
                        dest=name,
                        action="store_false",
                        help=f"do not {text}",
                    )
                else:
                    target.add_argument(flag, dest=name, action="store_true", help=text)
                continue
            kwargs: dict[str, Any] = {"dest": name, "help": text, "default": default}
            if extra.get("metavar"):
                kwargs["metavar"] = extra["metavar"]
            if get_origin(kind) is Literal:
                kwargs["choices"] = list(get_args(kind))
            elif get_origin(kind) is tuple and not extra.get(SPLIT_LIST):
                kwargs.update(action="append", default=None)  # repeatable (e.g. --include-path)
            elif kind in (int, float):  # a Path stays text: the record refuses an empty one
                kwargs["type"] = kind
            if isinstance(default, dict | tuple):  # key=value or list flags: empty by default
                kwargs["default"] = None
            target.add_argument(flag, **kwargs)


def settings_of(args: argparse.Namespace, *models: type[BaseModel]) -> dict[str, Any]:
    """The values of every field of `models` the parsed arguments hold (None for a field never given and
    without a default is left out, so the record's own default or requirement applies)."""
    values = vars(args)
    found = {}
    for model in models:
        for name in model.model_fields:
            if name in values and values[name] is not None:
                found[name] = values[name]
    return found
