"""A picture of every board, for the page: the geometry here, the SVG markup in the page's template (inline,
no script, no font from elsewhere).

Two panels per board, each 360 units wide (one screen of a phone; side by side on a desktop):
- **scores**: each ranked row's avg (the board's protocol) as a dot with its 95% interval and its rank
  interval, highest first, the floors as dashed vertical lines (the paper's rows: the dots alone);
- **length**: each row's avg against its mean answer length, the recall as a dot and the F-measure as a
  ring below it on one stem (the gap between them is what length bought), the floors as dashed horizontal
  lines, the references' mean length as a line and the region past twice it (`length-inflated`) shaded.
  Ranked rows are filled, partial ones open.
Labels are placed so that no two overlap (their width estimated from their characters, wide for CJK).
A name too long for its place is drawn as a number and its start ("[1] SmolLM2-1.7B…") and spelled out whole
under the picture (`NameKey`): a phone shows no tooltip.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rolebench.leaderboard.drawing import (
    Box,
    Panel,
    add_line,
    add_mark,
    add_text,
    nice_ticks,
    place,
    rounded,
    shorten,
    text_width,
)
from rolebench.leaderboard.rows import FLOOR, Board, Row

WIDTH = 360.0
ROW_HEIGHT = 20.0
LABEL_WIDTH = 118.0  # the scores panel's name column
RANK_WIDTH = 44.0  # its rank-interval column


@dataclass
class NameKey:
    """The names a board's picture draws cut short, numbered in the order drawn: the picture shows
    "[n] " and the name's start, the page lists each number with the whole name under the picture."""

    numbers: dict[str, int] = field(default_factory=dict)  # whole name -> its number

    def label(self, name: str, width: float) -> str:
        """`name` when it fits `width`, else its number and as much of it as fits."""
        if text_width(name) <= width:
            return name
        tag = f"[{self.numbers.setdefault(name, len(self.numbers) + 1)}] "
        return tag + shorten(name, width - text_width(tag))

    def entries(self) -> list[tuple[int, str]]:
        """(number, whole name) of every name drawn cut short, in number order."""
        return [(number, name) for name, number in self.numbers.items()]


def _axis(panel: Panel, left: float, right: float, y: float, low: float, high: float, unit: str = "") -> None:
    """A horizontal axis with tick labels below it."""
    add_line(panel, left, y, right, y, "axis")
    for tick in nice_ticks(low, high):
        x = left + (tick - low) / (high - low) * (right - left)
        if left - 0.5 <= x <= right + 0.5:
            add_line(panel, x, y, x, y + 3, "axis")
            add_text(panel, x, y + 14, f"{tick:g}{unit if tick else ''}", "tick", "middle")


def _floors(board: Board) -> list[Row]:
    return [r for r in board.rows if r.source == FLOOR and r.avg is not None and not r.not_comparable]


def _floor_name(row: Row) -> str:
    """A floor's short label: what it answers with (`baseline:question` -> "question")."""
    return row.spec.removeprefix("baseline:") or row.model


def legend_lines(parts: Sequence[str]) -> list[str]:
    """The legend's parts joined with "; " into lines that fit the panel."""
    lines = [""]
    for part in parts:
        joined = f"{lines[-1]}; {part}" if lines[-1] else part
        if text_width(joined, 10) <= WIDTH - 8 or not lines[-1]:
            lines[-1] = joined
        else:
            lines.append(part)
    return lines


def _measure(board: Board) -> str:
    """What a board's avg is, in a few words: its protocol, or "as printed" for the paper's."""
    return "as printed in the paper" if board.reference else board.protocol


def _legend(panel: Panel, y: float, parts: Sequence[str]) -> None:
    """The legend from `y` down (the panel grows by its extra lines)."""
    lines = legend_lines(parts)
    for number, line in enumerate(lines):
        add_text(panel, 4, y + 12 * number, line, "note")
    panel.height += 12 * (len(lines) - 1)


def score_panel(board: Board, key: NameKey | None = None) -> Panel | None:
    """Each ranked row's avg with its interval (see the module docstring); None without ranked rows. Names
    too long for the name column are numbered in `key`."""
    key = key if key is not None else NameKey()
    ranked = [r for r in board.rows if r.rank is not None and r.avg is not None]
    if not ranked:
        return None
    floors = _floors(board)
    values = [v for r in ranked for v in (r.avg, *(r.avg_ci or ())) if v is not None]
    values += [f.avg for f in floors if f.avg is not None]
    high = max(values) * 1.08 or 1.0
    left, right, top = LABEL_WIDTH + 8, WIDTH - RANK_WIDTH - 6, 40.0
    bottom = top + ROW_HEIGHT * len(ranked)
    panel = Panel(
        f"avg ({board.protocol}) of each ranked row, its 95% interval and its rank interval", bottom + 42
    )

    def x_of(value: float) -> float:
        return left + value / high * (right - left)

    intervals = any(r.avg_ci for r in ranked)
    caption = f"avg ({_measure(board)})" + (" with its 95% interval" if intervals else "")
    add_text(panel, 4, 12, shorten(caption, WIDTH - 8), "caption")
    add_text(panel, right + 6, 28, "rank", "head")
    placed: list[Box] = [(right + 6, 16, right + 6 + text_width("rank"), 30)]
    for index, row in enumerate(ranked):
        y = top + ROW_HEIGHT * index + ROW_HEIGHT / 2
        add_text(panel, 4, y + 4, key.label(row.model, LABEL_WIDTH - 4), "name", title=row.model)
        title = f"{row.model}: avg {row.avg:.4f}"
        if row.avg_ci:
            add_line(panel, x_of(row.avg_ci[0]), y, x_of(row.avg_ci[1]), y, "ci")
            title += f" [{row.avg_ci[0]:.4f}, {row.avg_ci[1]:.4f}]"
        add_mark(panel, x_of(row.avg or 0.0), y, "dot", row, title)
        bounds = row.rank_interval
        rank = f"{bounds[0]}–{bounds[1]}" if bounds and bounds[0] != bounds[1] else str(row.rank)
        add_text(panel, right + 6, y + 4, rank, "rank")
    unplaced = []
    for floor in floors:
        x = x_of(floor.avg or 0.0)
        add_line(panel, x, top - 4, x, bottom, "floor")
        if not place(
            panel, placed, x, 25, _floor_name(floor), (0, 17, right, top - 4), "floor", leader=False
        ):
            unplaced.append(f"{_floor_name(floor)} {floor.avg:.2f}")
    _axis(panel, left, right, bottom + 2, 0.0, high)
    floors_note = f"dashed: floors{' (' + ', '.join(unplaced) + ')' if unplaced else ''}" if floors else ""
    bars = ["bar: 95% interval"] if intervals else []
    _legend(panel, bottom + 36, ["dot: avg", *bars, *filter(None, [floors_note])])
    return panel


LENGTH_HEIGHT = 240.0
PLOT: Box = (40.0, 22.0, WIDTH - 8, LENGTH_HEIGHT - 44)


def _reference(panel: Panel, placed: list[Box], x_ref: float, x_twice: float) -> None:
    """The references' length (1×), and the shaded region past twice it (the `length-inflated` rule)."""
    left, top, right, bottom = PLOT
    panel.rects.append(
        {
            "x": rounded(x_twice),
            "y": top,
            "w": rounded(right - x_twice),
            "h": rounded(bottom - top),
            "cls": "inflated",
        }
    )
    add_line(panel, x_ref, top, x_ref, bottom, "reference")
    label = "length-inflated"
    if right - x_twice >= text_width(label) + 6:
        placed.append((right - 3 - text_width(label), top + 2, right, top + 16))
        add_text(panel, right - 3, top + 13, label, "inflated", "end")
    place(panel, placed, x_ref, top + 8, "as long as the references", PLOT, "reference")


def length_panel(board: Board, key: NameKey | None = None) -> Panel | None:
    """Each row's avg (recall, and the F-measure) against its answers' length relative to the references'
    (each row's own references: rows on other items compare fairly); None without lengths. Names too long
    for a label are numbered in `key`."""
    key = key if key is not None else NameKey()
    rows = [
        r
        for r in board.rows
        if r.source != FLOOR and r.avg is not None and r.answer_words and r.reference_words
    ]
    if not rows:
        return None
    floors = _floors(board)
    ratios = {id(r): (r.answer_words or 0.0) / (r.reference_words or 1.0) for r in rows}
    scores = [v for r in rows for v in (r.avg, r.f_avg) if v is not None] + [f.avg or 0.0 for f in floors]
    x_high, y_high = max([*ratios.values(), 2.2]) * 1.1, max(scores) * 1.12 or 1.0
    left, top, right, bottom = PLOT
    panel = Panel(f"avg ({board.protocol}) against answer length relative to the references'", LENGTH_HEIGHT)

    def at(ratio: float, score: float) -> tuple[float, float]:
        return left + ratio / x_high * (right - left), bottom - score / y_high * (bottom - top)

    add_text(panel, 4, 12, shorten(f"avg ({_measure(board)}) against answer length", WIDTH - 8), "caption")
    add_line(panel, left, top, left, bottom, "axis")
    placed: list[Box] = []
    _reference(panel, placed, at(1.0, 0)[0], at(2.0, 0)[0])
    for floor in floors:
        y = at(0, floor.avg or 0.0)[1]
        add_line(panel, left, y, right, y, "floor")
    points = [(r, *at(ratios[id(r)], r.avg or 0.0)) for r in rows]
    for row, x, y in points:
        if row.f_avg is not None:
            f_y = at(0, row.f_avg)[1]
            add_line(panel, x, y, x, f_y, "stem")
            add_mark(panel, x, f_y, "ring", row, f"{row.model}: F avg {row.f_avg:.4f}")
        title = f"{row.model}: avg {row.avg:.4f}; answers {row.answer_words:.0f} long"
        title += f", references {row.reference_words:.0f}"
        add_mark(panel, x, y, "dot" if row.rank is not None else "open", row, title)
        placed.append((x - 4, y - 4, x + 4, y + 4))
    for row, x, y in points:
        place(panel, placed, x, y, key.label(row.model, 120), PLOT, "name")
    for floor in floors:
        y = at(0, floor.avg or 0.0)[1]
        place(panel, placed, right - 2, y - 8, _floor_name(floor), PLOT, "floor", leader=False)
    _axis(panel, left, right, bottom, 0.0, x_high, "×")
    for tick in nice_ticks(0.0, y_high, 3):
        y = at(0, tick)[1]
        if top - 0.5 <= y <= bottom:
            add_text(panel, left - 4, y + 4, f"{tick:g}", "tick", "end")
    unit = "characters" if board.split == "rolebench_zh" else "words"
    add_text(
        panel, (left + right) / 2, bottom + 28, f"answer length ÷ the references' ({unit})", "note", "middle"
    )
    partial = ["open: partial"] if any(r.rank is None for r in rows) else []
    legend = ["dot: recall", "ring: F-measure", *partial, *(["dashed: floors"] if floors else [])]
    legend += ["shaded: over 2× the references' length"]
    _legend(panel, LENGTH_HEIGHT - 4, legend)
    return panel


def board_figure(board: Board, key: NameKey | None = None) -> list[Panel]:
    """The panels of a board's picture (none when it has nothing to draw); the names both panels draw cut
    short numbered in `key` (one number per name across the panels)."""
    key = key if key is not None else NameKey()
    return [p for p in (score_panel(board, key), length_panel(board, key)) if p is not None]
