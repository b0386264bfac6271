"""Leaderboard boards as text: Markdown (for a README), CSV (every row, flat) and LaTeX (booktabs).

Every field is escaped for its format, so a model called `<script>alert(1)</script>` or `a_b & c`
prints as written. Best values per column (over a board's ranked rows) are bold in Markdown and LaTeX.
"""

from __future__ import annotations

import csv
import html
import io
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from tabulate import tabulate

from rolebench.leaderboard.columns import (
    ABOUT,
    CSV_COLUMNS,
    FLAG_LEGEND,
    HEADERS,
    SCORE_COLUMNS,
    SHOWN_SCORES,
)
from rolebench.leaderboard.rows import FLOOR, REPORTED, SPLIT_LABELS, Board, Row, n_display
from rolebench.scoring.flags import ORDER as FLAG_ORDER
from rolebench.scoring.flags import describe

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~#])")
_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def metric_text(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"


def length_text(row: Row) -> str:
    """Mean answer length, the references' and the share cut at the token limit, e.g. `160 (42, 91%)`."""
    if row.answer_words is None:
        return "–"
    detail = [
        f"{v:.0f}" if i == 0 else f"{v:.0%}"
        for i, v in enumerate((row.reference_words, row.cut_at_limit))
        if v is not None
    ]
    return f"{row.answer_words:.0f}" + (f" ({', '.join(detail)})" if detail else "")


def share_text(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _percent(value: float | None, interval: list[float] | None) -> str:
    if value is None:
        return "–"
    text = f"{100 * value:.2f}"
    if interval:
        low, high = interval
        text += f" [{100 * low:.1f}, {100 * high:.1f}]"
    return text


def context_text(row: Row) -> str:
    """Mean prompt tokens, latency (mean seconds per answer) and throughput (answers per second of
    wall-clock time), e.g. `412 · 0.83 · 4.6` (– where not measured)."""
    if row.prompt_tokens is None and row.seconds_per_answer is None and row.answers_per_s is None:
        return "–"
    tokens = "–" if row.prompt_tokens is None else f"{row.prompt_tokens:.0f}"
    seconds = "–" if row.seconds_per_answer is None else f"{row.seconds_per_answer:.2f}"
    rate = "–" if row.answers_per_s is None else f"{row.answers_per_s:.3g}"
    return f"{tokens} · {seconds} · {rate}"


def win_text(row: Row) -> str:
    return _percent(row.win_rate, row.win_rate_ci)


def win_lc_text(row: Row) -> str:
    return _percent(row.win_rate_lc, row.win_rate_lc_ci)


def rank_text(row: Row, rank: int | None) -> str:
    return "floor" if row.source == FLOOR else str(rank or "–")


def interval_text(interval: list[int] | None) -> str:
    """A rank interval as `1–3` ("" for none)."""
    return f"{interval[0]}–{interval[1]}" if interval else ""


def ranked_text(row: Row, rank: int | None, interval: list[int] | None) -> str:
    """A rank with its interval, e.g. `2 (1–3)`."""
    text = rank_text(row, rank)
    return f"{text} ({interval_text(interval)})" if interval and rank is not None else text


def wtl_text(row: Row) -> str:
    return "" if row.wins is None else f"{row.wins}/{row.ties or 0}/{row.losses or 0}"


def best_values(board: Board) -> dict[str, float]:
    """The highest value of each score column over the board's ranked rows."""
    ranked = [r for r in board.rows if r.rank is not None]
    best = {}
    for column in SCORE_COLUMNS:
        values = [getattr(r, column) for r in ranked if getattr(r, column) is not None]
        if values:
            best[column] = max(values)
    return best


def is_best(row: Row, column: str, best: dict[str, float]) -> bool:
    value = getattr(row, column)
    return row.rank is not None and value is not None and value == best.get(column)


def board_heading(board: Board) -> str:
    if board.reference:
        return f"{REPORTED}: protocol {board.protocol} · judge {board.judge or 'none'}"
    return f"protocol {board.protocol} · data {board.dataset} · judge {board.judge or 'none'}"


def _cells(board: Board, escape: Callable[[str], str], bold: Callable[[str], str]) -> list[list[str]]:
    best = best_values(board)
    rows = []
    for row in board.rows:
        scores = [metric_text(getattr(row, m)) for m in SHOWN_SCORES]
        scores += [win_text(row), win_lc_text(row)]
        scores = [
            bold(text) if is_best(row, column, best) else text
            for column, text in zip(SCORE_COLUMNS, scores, strict=True)
        ]
        rows.append(
            [
                ranked_text(row, row.rank, row.rank_interval),
                escape(row.model),
                escape(row.elicitation or "–"),
                *scores[:-2],
                ranked_text(row, row.rank_f, row.rank_f_interval),
                length_text(row),
                share_text(row.looping),
                context_text(row),
                *scores[-2:],
                wtl_text(row),
                escape(n_display(row)),
                escape(row.date),
                escape(", ".join(row.flags)),
                escape("; ".join(row.warnings())),
            ]
        )
    return rows


def md_escape(text: str) -> str:
    """Text Markdown renders as written: entities for & < >, a backslash before markup characters."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=False)).replace("\n", " ")


def to_markdown(boards: Sequence[Board], title: str = "RoleBench leaderboard") -> str:
    legend = ["Flags:", "", *(f"- {md_escape(line)}" for line in FLAG_LEGEND), ""]
    parts = [f"# {md_escape(title)}", "", ABOUT, "", *legend]
    for split, label in SPLIT_LABELS.items():
        chosen = [b for b in boards if b.split == split]
        if not chosen:
            continue
        parts += [f"## {md_escape(label)}", ""]
        for board in chosen:
            table = tabulate(
                _cells(board, md_escape, lambda t: f"**{t}**"),
                headers=HEADERS,
                tablefmt="github",
                disable_numparse=True,
            )
            parts += [f"### {md_escape(board_heading(board))}", "", table, ""]
            for note in (board.unranked_note(), board.order_note(), board.rank_note):
                parts += [md_escape(note), ""] if note else []
    return "\n".join(parts)


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text).replace("\n", " ")


def _booktabs(table: str) -> str:
    """tabulate's `latex_raw` rules as booktabs rules (\\toprule, \\midrule, \\bottomrule)."""
    lines = table.splitlines()
    rules = [i for i, line in enumerate(lines) if line.strip() == r"\hline"]
    for index, name in zip(
        (rules[0], rules[1], rules[-1]), ("toprule", "midrule", "bottomrule"), strict=True
    ):
        lines[index] = "\\" + name
    return "\n".join(lines)


def to_latex(boards: Sequence[Board]) -> str:
    """One booktabs `table` per board (needs \\usepackage{booktabs})."""
    parts = [
        "% RoleBench leaderboard, generated by `rolebench leaderboard build`. Needs \\usepackage{booktabs}.",
        "% " + ABOUT,
        *(f"% flag {line}" for line in FLAG_LEGEND),
        "",
    ]
    for board in boards:
        cells = [row[:-1] for row in _cells(board, latex_escape, lambda t: f"\\textbf{{{t}}}")]
        headers = [latex_escape(h) for h in HEADERS[:-1]]
        table = tabulate(
            cells,
            headers=headers,
            tablefmt="latex_raw",
            disable_numparse=True,
            colalign=("right", "left", "left", *["right"] * (len(headers) - 4), "left"),
        )
        flags = {f for row in board.rows for f in row.flags}
        legend = " ".join(f"{describe(f)}." for f in FLAG_ORDER if f in flags)
        order = "".join(
            f" {note}" for note in (board.unranked_note(), board.order_note(), board.rank_note) if note
        )
        caption = latex_escape(
            f"{SPLIT_LABELS[board.split]}: {board_heading(board)}.{order} {legend}".strip()
        )
        parts += latex_float(table, caption, board.id)
    return "\n".join(parts)


def latex_float(table: str, caption: str, label: str) -> list[str]:
    """A tabulate LaTeX table as a booktabs float with its (escaped) caption and label `tab:LABEL`."""
    return [
        "\\begin{table}[ht]",
        "\\centering",
        "\\small",
        _booktabs(table),
        f"\\caption{{{caption}}}",
        f"\\label{{tab:{label}}}",
        "\\end{table}",
        "",
    ]


def csv_safe(value: object) -> object:
    """Text cells starting like a spreadsheet formula get a leading apostrophe (CSV injection)."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def csv_text(columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> str:
    """A CSV document: the columns, then each row's values in their order (None empty, `csv_safe`)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for data in rows:
        writer.writerow([csv_safe("" if data[c] is None else data[c]) for c in columns])
    return out.getvalue()


def to_csv(boards: Sequence[Board]) -> str:
    return csv_text(CSV_COLUMNS, _csv_rows(boards))


def _csv_rows(boards: Sequence[Board]) -> Iterator[dict[str, Any]]:
    for board in boards:
        for row in board.rows:
            data = row.to_dict()
            low, high = row.win_rate_ci if row.win_rate_ci else (None, None)
            for name, bounds in (
                (("rank_best", "rank_worst"), row.rank_interval),
                (("rank_f_best", "rank_f_worst"), row.rank_f_interval),
                (("avg_low", "avg_high"), row.avg_ci),
                (("f_avg_low", "f_avg_high"), row.f_avg_ci),
            ):
                data.update(zip(name, bounds or (None, None), strict=True))
            lc_low, lc_high = row.win_rate_lc_ci if row.win_rate_lc_ci else (None, None)
            data.update(
                win_rate_low=low,
                win_rate_high=high,
                win_rate_lc_low=lc_low,
                win_rate_lc_high=lc_high,
                flags="; ".join(row.flags),
                flag_meanings="; ".join(describe(f) for f in row.flags),
                tied_with="; ".join(row.tied_with),
                notes="; ".join(row.warnings()),
            )
            yield data
