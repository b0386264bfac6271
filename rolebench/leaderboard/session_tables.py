"""Session boards (`rolebench.leaderboard.sessions`) as text: a Markdown section, a CSV of their own
(`sessions.csv`: its columns are not the single-turn boards'), LaTeX tables, and the cells the web page
shows. Every field is escaped for its format, as the single-turn tables are."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from tabulate import tabulate

from rolebench.leaderboard.sessions import SessionBoard, SessionRow
from rolebench.leaderboard.tables import csv_text, latex_escape, latex_float, md_escape

HEADERS = ["Rank", "Model", "Rating", "Win %", "W/T/L", "Failures", "Win % as A / as B", "Sessions", "Notes"]
ABOUT = (
    "Sessions: the model under test and an opponent answer the same conversation turn by turn, a judge "
    "playing the user picks the better answer (RPBench-Auto's protocol). Win % is over the turns decided "
    "either way (ties and failures apart), with its 95% interval over sessions; W/T/L: turns won, tied, "
    "lost; failures: judge replies that never parsed (never a win); as A / as B: the win rate when shown "
    "first / second (position bias); sessions: those over, of those taken. Rating: Bradley-Terry by maximum "
    "likelihood on the Elo scale over every decided turn of the board's runs, the opponent a player too; "
    "its 95% interval and the rank interval (under the rank) from a bootstrap over the items (an item drawn "
    "brings every run's session on it)."
)
CSV_COLUMNS = [
    "board",
    "task",
    "opponent",
    "judge",
    "turns",
    "source",
    "run",
    "model",
    "spec",
    "rank",
    "rank_best",
    "rank_worst",
    "rating",
    "rating_low",
    "rating_high",
    "win_rate",
    "win_rate_low",
    "win_rate_high",
    "wins",
    "ties",
    "losses",
    "failures",
    "win_rate_as_model_a",
    "win_rate_as_model_b",
    "n_items",
    "n_sessions",
    "n_complete",
    "flags",
    "notes",
]


def percent(value: float | None, interval: Sequence[float] | None = None) -> str:
    if value is None:
        return "–"
    return f"{100 * value:.1f}" + (f" [{100 * interval[0]:.1f}, {100 * interval[1]:.1f}]" if interval else "")


def rating_text(row: SessionRow) -> str:
    if row.rating is None:
        return "–"
    bounds = f" [{row.rating_ci[0]:.0f}, {row.rating_ci[1]:.0f}]" if row.rating_ci else ""
    return f"{row.rating:.0f}{bounds}"


def rank_text(row: SessionRow) -> str:
    if row.rank is None:
        return "–"
    interval = row.rank_interval
    return f"{row.rank}" + (f" ({interval[0]}–{interval[1]})" if interval else "")


def row_cells(row: SessionRow) -> list[str]:
    """The text of each column but the model's and the notes'."""
    if row.source == "opponent":
        return [rank_text(row), rating_text(row), "–", "–", "–", "–", "–"]
    placed = f"{percent(row.as_model_a)} / {percent(row.as_model_b)}"
    return [
        rank_text(row),
        rating_text(row),
        percent(row.win_rate, row.win_rate_ci),
        f"{row.wins}/{row.ties}/{row.losses}",
        str(row.failures),
        placed,
        f"{row.n_complete}/{row.n_items}",
    ]


def row_notes(row: SessionRow) -> list[str]:
    return (["the opponent"] if row.source == "opponent" else []) + row.flags + row.notes


def _cells(board: SessionBoard, escape: Callable[[str], str]) -> list[list[str]]:
    found = []
    for row in board.rows:
        rank, *rest = row_cells(row)
        found.append([rank, escape(row.model), *rest, escape("; ".join(row_notes(row)))])
    return found


def sessions_markdown(boards: Sequence[SessionBoard]) -> str:
    """The `## Sessions` section of leaderboard.md ("" without session boards)."""
    if not boards:
        return ""
    parts = ["## Sessions", "", md_escape(ABOUT), ""]
    for board in boards:
        table = tabulate(_cells(board, md_escape), headers=HEADERS, tablefmt="github", disable_numparse=True)
        parts += [f"### {md_escape(board.heading())}", "", table, ""]
        parts += [md_escape(board.note), ""] if board.note else []
    return "\n".join(parts)


def sessions_latex(boards: Sequence[SessionBoard]) -> str:
    """One booktabs `table` per session board ("" without any)."""
    parts = []
    for board in boards:
        table = tabulate(
            [row[:-1] for row in _cells(board, latex_escape)],
            headers=[latex_escape(h) for h in HEADERS[:-1]],
            tablefmt="latex_raw",
            disable_numparse=True,
            colalign=("right", "left", *["right"] * (len(HEADERS) - 3)),
        )
        caption = latex_escape(f"{board.heading()}. {board.note}".strip())
        parts += latex_float(table, caption, board.id)
    return "\n".join(parts)


def _bounds(values: Sequence[Any] | None) -> tuple[Any, Any]:
    return (values[0], values[1]) if values else (None, None)


def sessions_csv(boards: Sequence[SessionBoard]) -> str:
    """Every row of every session board, flat (sessions.csv)."""
    return csv_text(CSV_COLUMNS, _csv_rows(boards))


def _csv_rows(boards: Sequence[SessionBoard]) -> Iterator[dict[str, Any]]:
    for board in boards:
        for row in board.rows:
            data: dict[str, Any] = {**row.__dict__, "board": board.id, "task": board.task}
            data.update(opponent=board.opponent, judge=board.judge, turns=board.turns)
            data.update(zip(("rank_best", "rank_worst"), _bounds(row.rank_interval), strict=True))
            data.update(zip(("rating_low", "rating_high"), _bounds(row.rating_ci), strict=True))
            data.update(zip(("win_rate_low", "win_rate_high"), _bounds(row.win_rate_ci), strict=True))
            data.update(win_rate_as_model_a=row.as_model_a, win_rate_as_model_b=row.as_model_b)
            data.update(
                flags="; ".join(row.flags), notes="; ".join(row.notes + [board.note] * bool(board.note))
            )
            yield data


def page_boards(boards: Sequence[SessionBoard]) -> list[dict[str, Any]]:
    """What the web page shows of each session board (the template escapes every text)."""
    views = []
    for board in boards:
        rows = []
        for row in board.rows:
            rank, rating, win, wtl, failures, placed, sessions = row_cells(row)
            rows.append(
                {
                    "model": row.model,
                    "sub": row.spec if row.spec != row.model else "",
                    "opponent": row.source == "opponent",
                    "cells": [
                        {"text": rank, "sort": row.rank if row.rank is not None else ""},
                        {"text": rating, "sort": row.rating if row.rating is not None else ""},
                        {"text": win, "sort": row.win_rate if row.win_rate is not None else ""},
                        {"text": wtl, "sort": row.wins},
                        {"text": failures, "sort": row.failures},
                        {"text": placed, "sort": row.as_model_a if row.as_model_a is not None else ""},
                        {"text": sessions, "sort": row.n_complete},
                    ],
                    "notes": row_notes(row),
                }
            )
        views.append({"id": board.id, "heading": board.heading(), "note": board.note, "rows": rows})
    return views
