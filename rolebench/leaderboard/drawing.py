"""What the leaderboard's pictures are drawn with: a panel and its shapes (the SVG markup is the page
template's), text widths estimated from the characters (wide for CJK), and labels placed so that no two
overlap."""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rolebench.leaderboard.rows import Row

FONT = 11.0
Box = tuple[float, float, float, float]  # left, top, right, bottom


@dataclass
class Panel:
    """An SVG panel: its height and the shapes the template draws (all coordinates in panel units)."""

    title: str
    height: float
    lines: list[dict[str, Any]] = field(default_factory=list)  # x1 y1 x2 y2 cls
    rects: list[dict[str, Any]] = field(default_factory=list)  # x y w h cls
    marks: list[dict[str, Any]] = field(default_factory=list)  # x y cls row title
    texts: list[dict[str, Any]] = field(default_factory=list)  # x y text anchor cls title


def text_width(text: str, size: float = FONT) -> float:
    """A generous estimate of the drawn width: wide (CJK) characters one em, others 0.62 em."""
    return sum(size if unicodedata.east_asian_width(c) in "WF" else 0.62 * size for c in text)


def shorten(text: str, width: float) -> str:
    """`text`, cut with an ellipsis to fit `width`."""
    if text_width(text) <= width:
        return text
    while text and text_width(text + "…") > width:
        text = text[:-1]
    return text.rstrip() + "…"


def rounded(value: float) -> float:
    """A coordinate as the page writes it: one decimal."""
    return round(value, 1)


def nice_ticks(low: float, high: float, count: int = 4) -> list[float]:
    """Round tick values covering [low, high]."""
    span = max(high - low, 1e-9)
    step = 10 ** math.floor(math.log10(span / count))
    for factor in (1, 2, 5, 10):
        if span / (step * factor) <= count:
            step *= factor
            break
    first = math.floor(low / step) * step
    return [round(first + i * step, 10) for i in range(int((high - first) / step + 1e-9) + 1)]


def overlaps(box: Box, placed: Sequence[Box]) -> bool:
    return any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in placed)


def add_text(
    panel: Panel, x: float, y: float, text: str, cls: str, anchor: str = "start", title: str = ""
) -> None:
    panel.texts.append(
        {"x": rounded(x), "y": rounded(y), "text": text, "anchor": anchor, "cls": cls, "title": title}
    )


def add_line(panel: Panel, x1: float, y1: float, x2: float, y2: float, cls: str) -> None:
    panel.lines.append(
        {"x1": rounded(x1), "y1": rounded(y1), "x2": rounded(x2), "y2": rounded(y2), "cls": cls}
    )


def add_mark(panel: Panel, x: float, y: float, cls: str, row: Row, title: str) -> None:
    panel.marks.append({"x": rounded(x), "y": rounded(y), "cls": cls, "row": row.run, "title": title})


def place(
    panel: Panel, placed: list[Box], x: float, y: float, text: str, area: Box, cls: str, leader: bool = True
) -> bool:
    """A label near (x, y) where it overlaps nothing placed and stays inside `area`: right, left, above,
    below, then further down with a leader line to (x, y); recorded in `placed`. False if none fits."""
    width, height = text_width(text), FONT + 2
    candidates = [(x + 6, y + 4, "start"), (x - 6, y + 4, "end"), (x, y - 7, "middle"), (x, y + 15, "middle")]
    for k in range(1, 12):  # then further away, below and above, on either side
        candidates += [(x + 10, y + 4 + k * height, "start"), (x - 10, y + 4 + k * height, "end")]
        candidates += [(x + 10, y + 4 - k * height, "start"), (x - 10, y + 4 - k * height, "end")]
    for number, (cx, cy, anchor) in enumerate(candidates):
        left = {"start": cx, "end": cx - width, "middle": cx - width / 2}[anchor]
        box = (left, cy - FONT, left + width, cy + 2)
        inside = area[0] <= box[0] and box[2] <= area[2] and area[1] <= box[1] and box[3] <= area[3]
        if inside and not overlaps(box, placed):
            placed.append(box)
            add_text(panel, cx, cy, text, cls, anchor)
            if leader and number >= 4:  # moved away from its point: a leader line says whose it is
                add_line(panel, x, y, cx - 2, cy - 4, "leader")
            return True
    return False
