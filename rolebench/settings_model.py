"""Typed settings read from flags, files and Python calls: one pydantic base, one error line for a bad one.

`SettingsModel.read(data, where)` validates a mapping (a YAML file, a sweep entry, the keyword arguments
of `rolebench.evaluate`): an unknown key is refused with the closest known one, a bad value names the key
and what is allowed. Numbers are strict where it matters: `Int` and `Float` refuse booleans (YAML's
`yes`), `Float` refuses NaN and infinities. `PathText` refuses an empty path (Python's `Path("")` is the
working directory, which nobody means by it).

A field is declared with `setting` (its `--help` text, section and metavar, and how the command line
writes it), which the command line's flags are made from (`rolebench.commands._arguments`); `key_values`
reads backend options given as `key=value,key=value` or a mapping. The run definition, the judge's
settings and the Python API's options are all such records.
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from rolebench.errors import ConfigError


def _no_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("must be a number, not true/false")
    return value


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


def _some_path(value: Any) -> Any:
    if isinstance(value, str) and not value.strip():  # Path("") is ".": the working directory, unasked
        raise ValueError("must name a path, not be empty")
    return value


def _path_as_text(value: Any) -> Any:
    return os.fspath(value) if isinstance(value, os.PathLike) else value


Int = Annotated[int, BeforeValidator(_no_bool)]
PathText = Annotated[Path, BeforeValidator(_some_path)]  # a path given as text; empty text refused
# a location given as text or as a path object (a folder, or hf://ORG/NAME@VERSION): kept as text
Location = Annotated[str, BeforeValidator(_path_as_text)]
Float = Annotated[float, BeforeValidator(_no_bool), BeforeValidator(_finite), Field(allow_inf_nan=False)]


GROUP = "group"  # json_schema_extra key: the --help section of a flag
SPLIT_LIST = "split_list"  # json_schema_extra key: the flag takes a comma-separated list
KEY_VALUES = "key_values"  # json_schema_extra key: the flag takes key=value,key=value


def setting(
    default: Any,
    text: str,
    *,
    group: str = "",
    metavar: str | None = None,
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    split_list: bool = False,
    key_values: bool = False,
) -> Any:
    """A field of a settings record with its `--help` text, section and metavar, and how the command line
    writes it (`split_list`: a comma-separated list; `key_values`: key=value,key=value)."""
    schema: dict[str, Any] = {
        GROUP: group,
        "metavar": metavar,
        SPLIT_LIST: split_list,
        KEY_VALUES: key_values,
    }
    return Field(default, description=text, json_schema_extra=schema, ge=ge, gt=gt, le=le)


def listed(value: Any) -> Any:
    """A `split_list` setting's value: a comma-separated string (the command line) or a list (YAML,
    Python) as a tuple of names."""
    if isinstance(value, str):
        value = value.split(",")
    if isinstance(value, list | tuple):
        return tuple(str(v).strip() for v in value if str(v).strip())
    return value


def _option_text(value: Any) -> str:
    """An option value as the command line gives it (so a YAML `true` and a flag's `true` are one run)."""
    if value is None:
        return "none"
    return str(value).lower() if isinstance(value, bool) else str(value)


def key_values(value: Any, where: str = "--model-args") -> dict[str, str]:
    """`key=value,key=value` (the command line) or a mapping (YAML, Python) as strings."""
    if isinstance(value, dict):
        return {str(k).strip(): _option_text(v) for k, v in value.items()}
    if not isinstance(value, str):
        raise ConfigError(f"{value!r} is not key=value pairs", where=where, fix="write key=value,key=value")
    options: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in value.split(","))):
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"bad model argument {item!r}", where=where, fix="write key=value,key=value")
        options[key.strip()] = text.strip()
    return options


class SettingsModel(BaseModel):
    """Frozen, no undeclared key; `read` turns a validation error into one ConfigError line."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @classmethod
    def read(cls, data: Mapping[str, Any], where: str, *, flag_style: bool = False) -> Self:
        """`data` validated; `where` names its origin (a file, `rolebench.evaluate`, ...). With
        `flag_style`, keys are shown as flags (`--max-new-tokens`) in the error."""
        unknown = [key for key in data if key not in cls.model_fields]
        if unknown:
            close = difflib.get_close_matches(str(unknown[0]), list(cls.model_fields), n=1)
            hint = f"did you mean {_name(close[0], flag_style)!r}? " if close else ""
            known = ", ".join(_name(k, flag_style) for k in cls.model_fields)
            raise ConfigError(
                f"unknown option {_name(str(unknown[0]), flag_style)!r}",
                where=where,
                fix=f"{hint}known: {known}",
            )
        try:
            return cls.model_validate(dict(data))
        except ValidationError as exc:
            raise invalid(exc, data, where, flag_style) from None


_MESSAGES = {
    "greater_than_equal": "must be at least {ge}",
    "greater_than": "must be above {gt}",
    "less_than_equal": "must be at most {le}",
    "less_than": "must be below {lt}",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "int_type": "must be a whole number",
    "float_parsing": "must be a number",
    "float_type": "must be a number",
    "bool_parsing": "must be true or false",
    "bool_type": "must be true or false",
    "string_type": "must be text",
    "missing": "is required",
    "finite_number": "must be a finite number",
    "literal_error": "must be {expected}",
}


def invalid(
    exc: ValidationError, data: Mapping[str, Any], where: str, flag_style: bool = False
) -> ConfigError:
    """The first problem of a ValidationError as one ConfigError line naming the key and its value."""
    first = exc.errors()[0]
    path = [str(part) for part in first["loc"]]
    key = path[0] if path else "?"
    template = _MESSAGES.get(first["type"])
    context = first.get("ctx") or {}
    message = template.format(**context) if template else str(first["msg"]).removeprefix("Value error, ")
    shown = f"{_name(key, flag_style)} {data[key]!r}" if key in data else _name(key, flag_style)
    inner = f" (at {'.'.join(path)})" if len(path) > 1 else ""
    return ConfigError(
        f"{shown}{inner} {message}"
        if template or message.startswith("must")
        else f"{shown}{inner}: {message}",
        where=where,
        fix=f"give {_name(key, flag_style)} a valid value",
    )


def _name(key: str, flag_style: bool) -> str:
    return f"--{key.replace('_', '-')}" if flag_style else key
