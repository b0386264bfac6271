"""Profiles for the recipes: a role's language, a profile as lines, profiles cut into segments.

Plain-text profiles (.txt, .md, anything not .jsonl) are cut at line boundaries; a script file
(`profiles-*-{role}.jsonl`) is read by `rolebench.data.scripts`, which also gives the dialogue pairs
and, with `rolebench.data.retrieval`, the demonstrations (one implementation for the recipes and
`rolebench evaluate --elicitation`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from rolebench.data.scripts import read_script
from rolebench.errors import DataError

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def detect_language(*texts: str) -> str:
    """ "zh" when at least a fifth of the non-space characters are CJK ideographs, else "en"."""
    text = "".join("".join(texts).split())
    if not text:
        return "en"
    return "zh" if len(_CJK.findall(text)) * 5 >= len(text) else "en"


def profile_lines(path: Path) -> list[str]:
    """A profile as lines: `SPEAKER: TEXT` for a script (.jsonl), the non-empty lines of a text file."""
    if not path.is_file():
        raise DataError(
            f"profile file {path} does not exist",
            where="--profile",
            fix="give a plain-text profile or a profiles-*-{role}.jsonl script",
        )
    if path.suffix == ".jsonl":
        return [f"{u.speaker}: {u.content}" for u in read_script(path) if u.content]
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def segments(lines: Sequence[str], max_chars: int) -> list[str]:
    """Pack lines greedily into segments of at most `max_chars` characters (a longer line is cut)."""
    if max_chars < 1:
        raise DataError("segment size must be at least 1 character", where="--segment-chars")
    pieces = [line[i : i + max_chars] for line in lines for i in range(0, len(line), max_chars)]
    result: list[str] = []
    current: list[str] = []
    size = 0
    for piece in pieces:
        if current and size + 1 + len(piece) > max_chars:
            result.append("\n".join(current))
            current, size = [], 0
        current.append(piece)
        size += len(piece) + (1 if size else 0)
    if current:
        result.append("\n".join(current))
    return result
