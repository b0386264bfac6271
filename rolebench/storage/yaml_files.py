"""Reading the YAML files users write (recipe configs, `--config` files, sweep files, task and judge
files): one reader, with one clear error for every way such a file can be broken, and bounded.

PyYAML builds an alias as a reference to the anchored node, so a "billion laughs" document (nine levels
of nine aliases) parses at once into a small graph that expands to 10^9 nodes, and whatever walks it
next (validation, a copy, a dump) never ends. The reader counts the nodes the document expands to and
refuses one past `MAX_NODES`, or one whose alias refers to itself, before anything is built from it.
Anchors and aliases within the bound work as usual (`<<: *defaults`).

In the configs only rolebench reads (`ConfigLoader`: not the task files, which lm-eval reads too),
numbers in exponent notation (`1e-5`, `2.0E3`) are floats, as in YAML 1.2 and JSON: PyYAML's YAML 1.1
reads `1e-5` as text, and a learning rate of "1e-5" would be refused as a string.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from rolebench.errors import ConfigError

MAX_NODES = 100_000  # far above any config (a sweep of 1,000 models is ~10,000 nodes)
_EXPONENT_FLOAT = re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$")


class BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing documents that expand past `MAX_NODES` (subclass it to add tags;
    the task files use it as it is, so that they read exactly as lm-eval reads them)."""

    def compose_document(self) -> Any:
        node = super().compose_document()
        size = expanded_size(node, MAX_NODES) if node is not None else 0
        if size is None:
            raise _Refused("an alias refers to the node that holds it (a recursive document)")
        if size > MAX_NODES:
            raise _Refused(f"its aliases expand it past {MAX_NODES:,} values (a YAML bomb?)")
        return node


class ConfigLoader(BoundedLoader):
    """The bounded loader reading `1e-5` as a number (the configs rolebench alone reads)."""


ConfigLoader.add_implicit_resolver("tag:yaml.org,2002:float", _EXPONENT_FLOAT, list("-+0123456789."))


class _Refused(yaml.YAMLError):
    """A well-formed document the reader will not build."""


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def expanded_size(root: yaml.Node, limit: int) -> int | None:
    """How many nodes `root` stands for once every alias is expanded (counted up to `limit` + 1), in
    time linear in the composed graph; None when an alias refers to one of its own ancestors."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            on_path.discard(key)
            sizes[key] = min(limit + 1, 1 + sum(sizes[id(child)] for child in _children(node)))
        elif key in on_path:
            return None
        elif key not in sizes:
            on_path.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in _children(node) if id(child) not in sizes)
    return sizes[id(root)]


def load_yaml(text: str, where: str, loader: type[BoundedLoader] = ConfigLoader) -> Any:
    """The document in `text` (None when empty); a ConfigError naming `where` (and the line) when it
    is malformed, nested too deeply, or expands past the bound."""
    try:
        return yaml.load(text, Loader=loader)  # noqa: S506 - a SafeLoader subclass
    except _Refused as exc:
        raise ConfigError(
            f"refused YAML: {exc}", where=where, fix="write the values out, or use fewer aliases"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(
            f"invalid YAML: {problem}",
            where=f"{where}:{mark.line + 1}" if mark is not None else where,
            fix="fix the file",
        ) from None
    except RecursionError:
        raise ConfigError("YAML nested too deeply", where=where, fix="fix the file") from None


def read_yaml(path: Path | str, what: str = "file", loader: type[BoundedLoader] = ConfigLoader) -> Any:
    """`load_yaml` of a UTF-8 file (with or without a byte-order mark); an unreadable one is one line
    naming `what` it is (`sweep file`, `price table`)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"the {what} is not UTF-8 text (byte {exc.start})", where=str(path), fix="fix the file"
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read the {what}: {exc.strerror or exc}", where=str(path)) from None
    return load_yaml(text, str(path), loader)
