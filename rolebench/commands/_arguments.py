"""Arguments several commands share: the data source, backend options (`--model-args`), the parser type."""

from __future__ import annotations

import argparse
from typing import Any, TypeAlias

from rolebench.errors import ConfigError

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


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
